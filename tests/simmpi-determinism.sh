#!/bin/sh
# The prediction is a pure function of trace, platform and options: bit-identical
# JSON with 1 and 2 threads, and from run to run.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat "intra.L = 700ns
intra.G = 0.25
cores_per_node = 4"
"$SYNTH" stencil "$WORK/st" --dims 4,3,2 --iters 30 --bytes 3000 --comp 20000
"$SYNTH" alltoall "$WORK/a2a" --ranks 7 --iters 5 --bytes 2000 --comp 1000
"$SYNTH" wildcard "$WORK/wc" --ranks 6 --bytes 100 --comp 777
for t in st a2a wc; do
  for run in 1 2; do
    for th in 1 2; do
      $PREDICT "$WORK/$t" --platform "$WORK/plat.conf" --json --threads $th > "$WORK/$t.$th.$run.json" \
        || fail "$t: predict --threads $th"
    done
  done
  cmp -s "$WORK/$t.1.1.json" "$WORK/$t.2.1.json" || fail "$t: 1 and 2 threads differ"
  cmp -s "$WORK/$t.1.1.json" "$WORK/$t.1.2.json" || fail "$t: two runs differ"
  cmp -s "$WORK/$t.2.1.json" "$WORK/$t.2.2.json" || fail "$t: two runs with 2 threads differ"
done
# ... and a different placement changes it (the comparison can fail).
$PREDICT "$WORK/st" --platform "$WORK/plat.conf" --json --map cyclic > "$WORK/cyc.json"
cmp -s "$WORK/st.1.1.json" "$WORK/cyc.json" && fail "cyclic placement predicted the same as block"
echo "deterministic"
