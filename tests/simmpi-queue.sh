#!/bin/sh
# The event queue (simmpi/evqueue.h) must not change a prediction: a radix
# heap takes events out in the 4-ary heap's order.  First the queues
# against a reference, pop by pop (simmpi/evqueue-test.c); then whole
# predictions of every synthetic pattern under three platforms with
# --queue heap, radix and auto: the same JSON, heap events included (but
# for radix, below).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
P="$top_srcdir/platforms"
"$top_builddir/simmpi/evqueue-test" || fail "evqueue-test"

plat
"$SYNTH" alltoall "$WORK/a16" --ranks 16 --iters 8 --bytes 64 --comp 100000
"$SYNTH" alltoall "$WORK/a13" --ranks 13 --iters 4 --bytes 3000 --comp 1000
"$SYNTH" stencil "$WORK/st" --dims 3,3,2 --iters 6 --bytes 4096 --comp 20000
"$SYNTH" stencil "$WORK/st36" --dims 4,3,3 --iters 6 --bytes 4096 --comp 20000
"$SYNTH" coll "$WORK/ar" --ranks 11 --op allreduce --bytes 100000
"$SYNTH" ring "$WORK/ring" --ranks 5 --iters 3 --bytes 50000 --comp 3000
"$SYNTH" wildcard "$WORK/wc" --ranks 6 --bytes 100 --comp 777
"$SYNTH" probe "$WORK/pr" --comp 500 --comp0 9000
"$SYNTH" icoll "$WORK/ic" --ranks 4 --bytes 100 --overlap 5000
"$SYNTH" subcomm "$WORK/sc" --ranks 6 --bytes 100
"$SYNTH" nicrace "$WORK/nr" --ranks 4 --bytes 100000 --comp0 10000 --comp1 13901

n=0
heap_events() { sed -n 's/.*"heap_events": *\([0-9]*\).*/\1/p' "$1"; }
for t in a16 a13 st st36 ar ring wc pr ic sc nr; do
  for cfg in "$WORK/plat.conf" "$P/ib-qdr.conf --ppn 4" "$P/tcp-loopback-local.conf --ppn 2"; do
    for kind in heap radix auto; do
      # shellcheck disable=SC2086 # cfg is a file and its options
      $PREDICT "$WORK/$t" --platform $cfg --json --threads 1 --queue $kind > "$WORK/$kind.json" \
        || fail "$t ($cfg): predict --queue $kind"
    done
    # A RESUME moved later in the heap (engine.c, delay_resume) saves a
    # heap event, a shortcut the radix heap does not take: the counts of
    # heap events may differ there, nothing else, and the radix heap is the
    # reference that the shortcut changes no prediction.
    grep -v '"heap_events"' "$WORK/heap.json" > "$WORK/heap.cmp"
    grep -v '"heap_events"' "$WORK/radix.json" > "$WORK/radix.cmp"
    cmp -s "$WORK/heap.cmp" "$WORK/radix.cmp" || { diff "$WORK/heap.json" "$WORK/radix.json" | head; fail "$t ($cfg): radix differs"; }
    cmp -s "$WORK/heap.json" "$WORK/auto.json" || fail "$t ($cfg): auto differs"
    # Past 32 ranks the heap finds a RESUME through its positions, not a
    # scan, and must still save heap events: 11% here (rendezvous messages
    # on ib-qdr), against 0.3% when it did so only while the heap held 32.
    case "$t $cfg" in
    "st36 $P/ib-qdr.conf"*)
      [ $(($(heap_events "$WORK/heap.json") * 20)) -lt $(($(heap_events "$WORK/radix.json") * 19)) ] ||
        fail "st36 (ib-qdr): too few RESUMEs moved: $(heap_events "$WORK/heap.json") heap events, radix $(heap_events "$WORK/radix.json")" ;;
    esac
    n=$((n + 1))
  done
done
$PREDICT "$WORK/st" --platform "$WORK/plat.conf" --queue fifo > /dev/null 2> "$WORK/err" && fail "--queue fifo accepted"
grep -q "not auto, heap or radix" "$WORK/err" || fail "--queue fifo: $(cat "$WORK/err")"
echo "$n predictions the same with a heap, a radix heap and both"
