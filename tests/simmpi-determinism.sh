#!/bin/sh
# The prediction is a pure function of trace, platform and options: bit-identical
# JSON with 1, 2, 4 and 64 threads (more than most of these traces have ranks:
# the decoding workers stop at one a rank), all online cores (0) and the
# default (1), and from run to run.  The stencil's ranks have about 1,400 events each, so that the
# decoding workers hand over several chunks per rank (doc/simmpi.md, section 6);
# the 256-rank one is where one thread reads with the engine asking for each
# rank's reader ahead (source.c, HOT_FROM).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat "intra.L = 700ns
intra.G = 0.25
cores_per_node = 4"
"$SYNTH" stencil "$WORK/st" --dims 4,3,2 --iters 100 --bytes 3000 --comp 20000
"$SYNTH" alltoall "$WORK/a2a" --ranks 7 --iters 5 --bytes 2000 --comp 1000
"$SYNTH" wildcard "$WORK/wc" --ranks 6 --bytes 100 --comp 777
"$SYNTH" coll "$WORK/bar" --ranks 4 --op barrier
"$SYNTH" stencil "$WORK/st256" --dims 8,8,4 --iters 3 --bytes 3000 --comp 20000
for t in st a2a wc bar st256; do
  $PREDICT "$WORK/$t" --platform "$WORK/plat.conf" --json --threads 1 > "$WORK/$t.ref.json" \
    || fail "$t: predict --threads 1"
  for run in 1 2 3; do
    for th in 1 2 4 64 0 default; do
      opt="--threads $th"; [ $th = default ] && opt=
      $PREDICT "$WORK/$t" --platform "$WORK/plat.conf" --json $opt > "$WORK/$t.out.json" \
        || fail "$t: predict ${opt:-(default threads)}, run $run"
      cmp -s "$WORK/$t.ref.json" "$WORK/$t.out.json" \
        || fail "$t: ${opt:-default threads}, run $run differs from --threads 1"
    done
  done
done
# ... and a different placement changes it (the comparison can fail).
$PREDICT "$WORK/st" --platform "$WORK/plat.conf" --json --map cyclic > "$WORK/cyc.json"
cmp -s "$WORK/st.ref.json" "$WORK/cyc.json" && fail "cyclic placement predicted the same as block"
echo "deterministic"
