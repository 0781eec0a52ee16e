#!/bin/sh
# make-corpus.sh BUILD_DIR [PROGRAM...] - (re)make the seed corpus in tests/fuzz/corpus
# from real traces: the test programs (by default all of the corpus's) at 4 ranks under
# `phantom record --log`, 16 KiB blocks.
#   corpus/evt/NAME       rank-000000.evt, cut after its first 3 frames
#   corpus/evt-raw/NAME   the content of its first block (decompressed)
#   corpus/log/NAME       rank-000000.log, cut after its first 2 frames
#   corpus/log-raw/NAME   the content of its first log block
#   corpus/meta/NAME      its meta.json, finished (communicator and call-site tables)
#   (timed: MPI_Wtime and time() in the log; unknown: one-sided calls, counted and timed)
# and, but for timed, from a second recording with one block per rank (fuzz_predict.c):
#   corpus/predict/NAME   the content of rank 0's one block (its whole stream)
#   corpus/predict-partners/NAME/rank-00000[123].evt   the other ranks' files
set -eu
build=$(cd "${1:?usage: make-corpus.sh BUILD_DIR [PROGRAM...]}" && pwd)
shift
[ $# -gt 0 ] || set -- p2p nonblocking comms collectives stencil fault-loop timed unknown intercoll
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
export PHANTOM_BLOCK_KB=16 PHANTOM_PRELOAD="$build/libpmpi-rec/.libs/libpmpi-rec.so"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/corpus/evt" "$here/corpus/evt-raw" "$here/corpus/log" "$here/corpus/log-raw" "$here/corpus/meta" \
  "$here/corpus/predict"
frames() { python3 "$top/tests/zstd_frames.py" "$1"; }
for p in "$@"; do
  mpicc -g -O1 -std=c11 -o "$tmp/$p" "$top/tests/progs/$p.c" -I"$top/tests/progs" -lm
  args=""
  [ $p = fault-loop ] && args="-n 300 -b 16"
  env=""
  # Open MPI's one-sided windows need shared memory's single copy
  [ $p = unknown ] && env="env -u OMPI_MCA_btl_vader_single_copy_mechanism"
  # shellcheck disable=SC2086
  $env "$build/cli/phantom" record --log -o "$tmp/$p.trace" -- mpirun -np 4 "$tmp/$p" $args > /dev/null
  cp "$tmp/$p.trace/meta.json" "$here/corpus/meta/$p"
  for ext in evt log; do
    f=$tmp/$p.trace/rank-000000.$ext
    [ $ext = evt ] && keep=3 || keep=2
    end=$(frames "$f" | head -$keep | tail -1 | cut -d' ' -f2)
    [ -n "$end" ] || continue # no block (unknown.c receives no message: an empty log)
    head -c "$end" "$f" > "$here/corpus/$ext/$p"
    first=$(frames "$f" | head -1 | cut -d' ' -f2)
    head -c "$first" "$f" | tail -c +33 | zstd -dcq > "$here/corpus/$ext-raw/$p"
  done
  # timed's seeds are for the log (clock readings); its whole stream, 200 kB, is no seed for fuzz_predict
  [ $p = timed ] && continue
  # shellcheck disable=SC2086
  PHANTOM_BLOCK_KB=65536 PHANTOM_FLUSH_SECS=86400 $env "$build/cli/phantom" record -o "$tmp/$p.one" -- \
    mpirun -np 4 "$tmp/$p" $args > /dev/null
  [ "$(frames "$tmp/$p.one/rank-000000.evt" | wc -l)" -eq 1 ] || { echo "$p: rank 0 is not one block" >&2; exit 1; }
  mkdir -p "$here/corpus/predict-partners/$p"
  cp "$tmp/$p.one"/rank-00000[123].evt "$here/corpus/predict-partners/$p/"
  tail -c +33 "$tmp/$p.one/rank-000000.evt" | zstd -dcq > "$here/corpus/predict/$p"
done
ls -l "$here"/corpus/*
