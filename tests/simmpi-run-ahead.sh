#!/bin/sh
# A rank woken by a delivery may go on before other ranks' earlier deliveries
# (engine.c: may_run_ahead).  That must not change the prediction: every
# workload below, under four platforms (inter-node only; intra and inter with
# rendezvous inside a node; half-duplex links; CPU noise and a reduction
# cost), predicts the same JSON as with --strict-order, but for the heap
# events.  nicrace is the case a CTS still in the heap must stop (a rank
# woken just before it sends into the NIC the CTS's data goes through):
# exactly the strict order's finish, its messages in the order they reach
# the NIC.  proberace is the case a delivery to a rank blocked in a probe
# must stop sooner, o_iprobe after it, not o_r: the probe costs its rank
# that little before it can send.  And running ahead must save heap events:
# in a 16-rank all-to-all (Bruck, 4 rounds of one message a rank) each rank's
# round is one delivery, without the RESUME that strict order takes after
# it, so a rank has rounds + 1 heap events an iteration, not 2 x rounds + 1
# (plus its first RESUME).
# --strict-order also builds every collective round afresh, where the
# default reads a repeated collective's rounds from its first call (engine.c:
# sched_open): mix changes collective call by call, and back.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
P="$top_srcdir/platforms"
plat
cp "$WORK/plat.conf" "$WORK/plain.conf"
plat "intra.o_r = 50ns
intra.L = 30ns
intra.eager_limit = 256
noise_pause = 20us
noise_rate = 100
noise_sync = node
gamma = 0.5"
cp "$WORK/plat.conf" "$WORK/noisy.conf"

"$SYNTH" alltoall "$WORK/a16" --ranks 16 --iters 30 --bytes 64 --comp 100000
"$SYNTH" alltoall "$WORK/a13" --ranks 13 --iters 6 --bytes 3000 --comp 1000
"$SYNTH" stencil "$WORK/st" --dims 3,3,2 --iters 6 --bytes 4096 --comp 20000
"$SYNTH" coll "$WORK/ar" --ranks 11 --op allreduce --bytes 100000
"$SYNTH" coll "$WORK/bc" --ranks 9 --op bcast --bytes 8 --root 2
"$SYNTH" ring "$WORK/ring" --ranks 5 --iters 3 --bytes 50000 --comp 3000
"$SYNTH" wildcard "$WORK/wc" --ranks 6 --bytes 100 --comp 777
"$SYNTH" iprobe "$WORK/ip" --comp 500 --comp0 9000
"$SYNTH" probe "$WORK/pr" --comp 500 --comp0 9000
"$SYNTH" poll "$WORK/po" --comp 500 --comp0 9000
"$SYNTH" icoll "$WORK/ic" --ranks 4 --bytes 100 --overlap 5000
"$SYNTH" icolls "$WORK/ics" --ranks 5 --bytes 3000 --overlap 5000
"$SYNTH" icoll "$WORK/ict" --ranks 3 --bytes 3000 --overlap 5000 --op test
"$SYNTH" icoll "$WORK/ict2" --ranks 3 --bytes 3000 --overlap 5000 --op tests
"$SYNTH" icoll "$WORK/icx" --ranks 5 --bytes 3000 --overlap 5000 --op early
"$SYNTH" icoll "$WORK/ice" --ranks 3 --bytes 3000 --overlap 5000 --op send
"$SYNTH" subcomm "$WORK/sc" --ranks 6 --bytes 100
"$SYNTH" coll "$WORK/mix" --ranks 13 --op alltoall,alltoall,bcast,allreduce,barrier,bcast --bytes 40 \
  --esize 8 --root 5 --iters 3 --comp 900
# rank 0's 100 kB leave at 22.2 us (RTS, CTS: o' + L + 2o' + L + o' + o_s),
# rank 1 is woken at 20 us (13.901 + o_s + L + G x 99) and sends at 23 us:
# both reach rank 2's NIC, rank 0's first, 127.199 us to 127.298 us, and
# rank 2 collects them (o_r each) by 131.199 us.
"$SYNTH" nicrace "$WORK/nr" --ranks 4 --bytes 100000 --comp0 10000 --comp1 13901
# rank 0's 100 B reach rank 1 at 16.099 us (10 + o_s + G x 99 + L); its
# probe returns at 16.299 (o_iprobe = 200 ns) and it sends 100 B to rank 2,
# on the wire at 17.299, whose last byte reaches rank 2 at 22.398.  Rank 0
# sends its 10 kB at 16.350 (17.350 on the wire), 51 ns after rank 1, so
# rank 2's NIC takes them second, 22.398 to 32.397 (G x 9,999), and rank 2
# has both by 34.397 (o_r each).  Had rank 0 run ahead of the delivery to
# rank 1 as if rank 1 paid o_r on waking (16.350 < 16.099 + 2), its
# message would have taken the NIC first: 36.349.
"$SYNTH" proberace "$WORK/prr" --ranks 3 --bytes 10000 --comp0 10000 --comp1 5350

n=0
for t in a16 a13 st ar bc ring wc ip pr po ic ics ict ict2 icx ice sc mix nr prr; do
  for cfg in "$WORK/plain.conf" "$P/ib-qdr.conf --ppn 1" "$P/ib-qdr.conf --ppn 4" "$P/tcp-loopback-local.conf --ppn 2" \
             "$WORK/noisy.conf --ppn 2"; do
    # shellcheck disable=SC2086 # cfg is a file and its options
    $PREDICT "$WORK/$t" --platform $cfg --json --threads 1 > "$WORK/ahead.json" || fail "$t ($cfg): predict"
    # shellcheck disable=SC2086
    $PREDICT "$WORK/$t" --platform $cfg --json --threads 1 --strict-order > "$WORK/strict.json" \
      || fail "$t ($cfg): predict --strict-order"
    grep -v '"heap_events"' "$WORK/ahead.json" > "$WORK/a"
    grep -v '"heap_events"' "$WORK/strict.json" > "$WORK/s"
    cmp -s "$WORK/a" "$WORK/s" || { diff "$WORK/s" "$WORK/a" | head -20; fail "$t ($cfg): running ahead changed the prediction"; }
    n=$((n + 1))
  done
done

$PREDICT "$WORK/nr" --platform "$WORK/plain.conf" --json > "$WORK/p.json" || fail "nicrace: predict"
expect "nicrace: rank 2's finish (ps)" "$(q 'd["ranks"][2]["finish_ps"]')" 131199000
plat "eager_limit = 65536
o_iprobe = 200ns"
for o in "" --strict-order; do
  # shellcheck disable=SC2086 # no option, or one
  predict "$WORK/prr" $o || fail "proberace${o:+ $o}: predict"
  expect "proberace${o:+ $o}: finish times (ps)" "$(q '[r["finish_ps"] for r in d["ranks"]]')" "[17350000, 19299000, 34397000]"
done

# The saving, exactly (16 ranks, 30 iterations of 4 rounds).
heap() { $PREDICT "$WORK/a16" --platform "$P/ib-qdr.conf" --ppn 1 --json "$@" > "$WORK/p.json" && q 'd["simulator"]["heap_events"]'; }
expect "all-to-all heap events, strict order" "$(heap --strict-order)" $((16 * (30 * (2 * 4 + 1) + 1)))
expect "all-to-all heap events, running ahead" "$(heap)" $((16 * (30 * (4 + 1) + 1)))
echo "$n predictions the same with and without running ahead; all-to-all heap events 4,336 -> 2,416"
