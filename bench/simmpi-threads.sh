#!/bin/sh
# simmpi-threads.sh - does a decoding thread make `phantom predict` faster?
# (not a test)
#
#   sh bench/simmpi-threads.sh BUILDDIR [THREADS] [TRACE...]
#
# Each trace is predicted with --threads 1 (the default: the simulation
# decodes the trace itself) and with --threads THREADS (default 2: THREADS - 1
# workers decode ranks' streams ahead; simmpi/source.c), RUNS times each
# (default 5), the two alternated so that a slow spell of the machine falls
# on both; prints each one's median wall time of the whole command and their
# ratio (above 1: the workers cost more than they save).  The JSON of every
# run must be the same: the script fails if it is not.  Workloads: a 16-rank
# stencil (150 k events), a 16-rank all-to-all (40 k) and a 1,024-rank
# stencil (717 k), written by simmpi/synth, then any recorded traces given.
set -eu
B=$(cd "${1:?usage: simmpi-threads.sh BUILDDIR [THREADS] [TRACE...]}" && pwd)
shift
N=2
case "${1:-x}" in *[!0-9]*) ;; *) N=$1; shift ;; esac
RUNS=${RUNS:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
PLATFORM=${PLATFORM:-$HERE/platforms/ib-qdr.conf}
PHANTOM="$B/cli/phantom"
SYNTH="$B/simmpi/synth"
[ -x "$SYNTH" ] || { echo "simmpi-threads.sh: $SYNTH not built (make -C $B simmpi/synth)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/phantom-threads.XXXXXX")
trap 'rm -rf "$W"' EXIT

. "$HERE/bench/wall.sh" # wall out|all OUT CMD...

# seconds THREADS TRACE OUT: one prediction's wall time, from its fork to its exit
seconds() {
  wall out "$3" "$PHANTOM" predict "$2" --platform "$PLATFORM" --threads "$1" --json
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

printf '%-24s %10s %14s %14s %7s\n' trace events "1 thread s" "$N threads s" ratio
row() { # NAME TRACE
  : > "$W/one" && : > "$W/many"
  i=0
  while [ $i -lt "$RUNS" ]; do
    seconds 1 "$2" "$W/one.json" >> "$W/one"
    seconds "$N" "$2" "$W/many.json" >> "$W/many"
    cmp -s "$W/one.json" "$W/many.json" || { echo "simmpi-threads.sh: $1: --threads $N predicted otherwise" >&2; exit 1; }
    i=$((i + 1))
  done
  ev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["simulator"]["events"])' "$W/one.json")
  awk -v name="$1" -v ev="$ev" -v a="$(median < "$W/one")" -v b="$(median < "$W/many")" \
    'BEGIN { printf "%-24s %10d %14.4f %14.4f %6.2fx\n", name, ev, a, b, b / a }'
}
"$SYNTH" stencil "$W/st16" --dims 4,2,2 --bytes 4096 --iters 670 --comp 100000
row "stencil, 16 ranks" "$W/st16"
"$SYNTH" alltoall "$W/a2a16" --ranks 16 --bytes 64 --iters 2500 --comp 100000
row "all-to-all, 16 ranks" "$W/a2a16"
"$SYNTH" stencil "$W/st1024" --dims 16,8,8 --bytes 4096 --iters 50 --comp 100000
row "stencil, 1,024 ranks" "$W/st1024"
for t in "$@"; do
  row "$(basename "$t")" "$t"
done
