#!/bin/sh
# SIM-MPI against the closed forms of Zhai et al., Section 6 (Fig. 10), on
# synthetic traces whose computation gaps are exact: every value is checked
# to the picosecond.  Platform: o_s=1000 o_r=2000 L=5000 o'=300 (ns),
# G=1 ns/B, eager limit 1024 B (tests/simmpi-lib.sh).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat
os=1000 or=2000 L=5000 op=300 G=1
ps() { echo $(( $1 * 1000 )); }
finish() { q "d['ranks'][$1]['finish_ps']"; }
field() { q "d['ranks'][$1]['$2_ps']"; }

# 1. Eager, K bytes: o_s + G(K-1) + L + o_r end to end; the sender pays o_s.
for K in 1 101 1024; do
  "$SYNTH" p2p "$WORK/e$K" --bytes $K
  predict "$WORK/e$K"
  expect "eager K=$K receiver" "$(finish 1)" "$(ps $((os + G * (K - 1) + L + or)))"
  expect "eager K=$K sender" "$(finish 0)" "$(ps $os)"
  expect "eager K=$K total" "$(q "d['predicted_ps']")" "$(ps $((os + G * (K - 1) + L + or)))"
  expect "eager K=$K no syn" "$(field 1 syn)" 0
done

# 2. Rendezvous above the eager limit: the receiver pays
#    2(o'+L+o') + o_s + G(K-1) + L + o_r end to end, the sender 2(o'+L+o') + o_s.
for K in 1025 100000; do
  "$SYNTH" p2p "$WORK/r$K" --bytes $K
  predict "$WORK/r$K"
  expect "rendezvous K=$K receiver" "$(finish 1)" "$(ps $((2 * (op + L + op) + os + G * (K - 1) + L + or)))"
  expect "rendezvous K=$K sender" "$(finish 0)" "$(ps $((2 * (op + L + op) + os)))"
  expect "rendezvous K=$K receiver CPU: 2o' + o_r" "$(field 1 overhead)" "$(ps $((2 * op + or)))"
  expect "rendezvous K=$K sender CPU: 2o' + o_s" "$(field 0 overhead)" "$(ps $((2 * op + os)))"
  expect "rendezvous K=$K no syn" "$(field 0 syn)$(field 1 syn)" 00
done

# 2b. LogGOPS's O, the sender's CPU time per byte of an eager message before
#     it leaves: o_s + OK + G(K-1) + L + o_r end to end, the sender o_s + OK.
#     A rendezvous message does not pay it; inside a node intra.O, or O.
plat "O = 0.25"
for K in 1 101 1024; do
  predict "$WORK/e$K"
  expect "O, eager K=$K receiver" "$(finish 1)" "$(($(ps $((os + G * (K - 1) + L + or))) + K * 250))"
  expect "O, eager K=$K sender" "$(finish 0)" "$(($(ps $os) + K * 250))"
  expect "O, eager K=$K sender CPU" "$(field 0 overhead)" "$(($(ps $os) + K * 250))"
done
predict "$WORK/r100000"
expect "O, rendezvous receiver" "$(finish 1)" "$(ps $((2 * (op + L + op) + os + G * (100000 - 1) + L + or)))"
plat "O = 0.25
intra.O = 2
cores_per_node = 2"
predict "$WORK/e101" --ppn 2
expect "intra.O, eager K=101 receiver" "$(finish 1)" "$(ps $((os + 202 + G * 100 + L + or)))"
plat "O = 4 GB/s
cores_per_node = 2"
predict "$WORK/e1024" --ppn 2
expect "O inherited inside a node, as a copy rate" "$(finish 0)" "$(ps $((os + 256)))"
predict "$WORK/e1024" --what-if net=0.5
expect "O under --what-if net=0.5" "$(finish 0)" "$(ps $(((os + 256) / 2)))"
plat

# 3. syn appears exactly when a receive is early: by how much it was early.
"$SYNTH" p2p "$WORK/early" --bytes 101 --comp0 50000
predict "$WORK/early"
expect "early receive: syn" "$(field 1 syn)" "$(ps 50000)"
expect "early receive: finish" "$(finish 1)" "$(ps $((50000 + os + 100 + L + or)))"
expect "early receive: no syn at the sender" "$(field 0 syn)" 0
"$SYNTH" p2p "$WORK/late" --bytes 101 --comp1 50000
predict "$WORK/late"
expect "late receive: no syn" "$(field 0 syn)$(field 1 syn)" 00
expect "late receive: the buffered message costs o_r" "$(finish 1)" "$(ps $((50000 + or)))"
# Rendezvous, sender early: syn at the sender, from its RTS's arrival to the receive.
"$SYNTH" p2p "$WORK/rlate" --bytes 2001 --comp1 50000
predict "$WORK/rlate"
expect "rendezvous, send early: syn" "$(field 0 syn)" "$(ps $((50000 - op - L)))"
expect "rendezvous, send early: sender" "$(finish 0)" "$(ps $((50000 + 2 * op + L + op + os)))"
expect "rendezvous, send early: no syn at the receiver" "$(field 1 syn)" 0
expect "rendezvous, send early: receiver" "$(finish 1)" \
  "$(ps $((50000 + 2 * op + L + op + os + 2000 + L + or)))"

# 3b. A process's start-up before MPI_Init (a STARTUP record: rank 0 10 us,
#     rank 1 20 us) is computation before its first call.  Rank 0 sends at
#     10 us; rank 1's receive, at 20 us, finds the message in (late: o_r).
#     --what-if comp=0.5 halves the start-up too: the receive at 10 us
#     waits 1.1 us for the message in flight, sent at 5 us (transfer, not
#     syn: the sender was there first).
"$SYNTH" p2p "$WORK/startup" --bytes 101 --startup 10000
predict "$WORK/startup"
expect "start-up: sender" "$(finish 0)" "$(ps $((10000 + os)))"
expect "start-up: receiver" "$(finish 1)" "$(ps $((20000 + or)))"
expect "start-up: in the receiver's computation" "$(field 1 comp)" "$(ps 20000)"
expect "start-up: per rank" "$(field 0 startup) $(field 1 startup)" "$(ps 10000) $(ps 20000)"
expect "start-up: the longest" "$(q "d['startup_ps']")" "$(ps 20000)"
expect "start-up: in the host's measure" "$(q "d['ranks'][1]['measured_ns']")" $((20000 + 1000))
predict "$WORK/startup" --what-if comp=0.5
expect "start-up, comp x 0.5: receiver" "$(finish 1)" "$(ps $((5000 + os + 100 + L + or)))"
expect "start-up, comp x 0.5: in flight" "$(field 1 transfer) $(field 1 syn)" "$(ps $((5000 + os + 100 + L - 10000))) 0"
expect "start-up, comp x 0.5: halved" "$(field 1 startup)" "$(ps 10000)"
$PREDICT "$WORK/startup" --platform "$WORK/plat.conf" | grep -q "^start-up before MPI_Init: up to 20.000 us (rank 1), in the computation$" ||
  fail "no start-up line: $($PREDICT "$WORK/startup" --platform "$WORK/plat.conf" | head -4)"
predict "$WORK/early"
expect "no STARTUP record: no start-up" "$(q "d['startup_ps']")" 0

# 4. Every rank's time is accounted for: comp + overhead + transfer + syn = finish.
python3 - "$WORK/p.json" <<'PY' || fail "breakdown does not add up"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["ranks"]:
    s = r["comp_ps"] + r["overhead_ps"] + r["transfer_ps"] + r["syn_ps"]
    if s != r["finish_ps"]: sys.exit(f"rank {r['rank']}: {s} != {r['finish_ps']}")
PY

# 5. A ring: n messages one after the other, n * (o_s + G(K-1) + L + o_r); R rounds.
for n in 2 5 13; do
  "$SYNTH" ring "$WORK/ring$n" --ranks $n --bytes 101 --iters 3
  predict "$WORK/ring$n"
  expect "ring of $n x 3" "$(q "d['predicted_ps']")" "$(ps $((3 * n * (os + 100 + L + or))))"
done

# 6. Barriers from their algorithms.  Dissemination (Bruck): ceil(log2 p)
#    rounds of o_s + L + o_r.  Linear (p=4): the root collects p-1 o_r,
#    then sends p-1 times: o_s + L + (p-1)(o_r + o_s) + L + o_r.
for p in 2 3 4 5 7 8 13 16; do
  plat "coll.barrier = dissemination"
  "$SYNTH" coll "$WORK/bar$p" --ranks $p --op barrier
  predict "$WORK/bar$p"
  r=0 k=1; while [ $k -lt $p ]; do r=$((r + 1)); k=$((k * 2)); done
  expect "dissemination barrier p=$p" "$(q "d['predicted_ps']")" "$(ps $((r * (os + L + or))))"
  expect "dissemination barrier p=$p: all ranks" \
    "$(q "len(set(x['finish_ps'] for x in d['ranks']))")" 1
  # three in a row: the later two run from the rounds the engine kept
  "$SYNTH" coll "$WORK/bar3x$p" --ranks $p --op barrier --iters 3
  predict "$WORK/bar3x$p"
  expect "3 dissemination barriers p=$p" "$(q "d['predicted_ps']")" "$(ps $((3 * r * (os + L + or))))"
done
# Recursive doubling at p=3 (Open MPI's): rank 2 folds into rank 0 (o_s +
# L + o_r), ranks 0 and 1 swap (o_r + o_s more at rank 0), then rank 0
# lets rank 2 out with a synchronous send, a rendezvous: 2(o'+L+o') + o_s
# at rank 0, and L + o_r more at rank 2.  The double ring's second lap is
# synchronous too: at p=2 the first lap costs 2(o_s + L + o_r), the second
# 2(2(o'+L+o') + o_s + L + o_r).
plat "coll.barrier = recursive_doubling"
predict "$WORK/bar3"
rd0=$((os + L + or + or + os + 2 * (op + L + op) + os))
expect "recursive doubling barrier p=3: rank 0" "$(finish 0)" "$(ps $rd0)"
expect "recursive doubling barrier p=3: rank 2" "$(finish 2)" "$(ps $((rd0 + L + or)))"
plat "coll.barrier = double_ring"
predict "$WORK/bar2"
expect "double ring barrier p=2: rank 0" "$(finish 0)" \
  "$(ps $((2 * (os + L + or) + 2 * (2 * (op + L + op) + os + L + or))))"
plat "coll.barrier = linear"
predict "$WORK/bar4"
expect "linear barrier p=4" "$(q "d['predicted_ps']")" "$(ps $((os + L + 3 * (or + os) + L + or)))"
expect "linear barrier named" "$(q "list(d['collectives']['barrier'])")" "['linear']"
plat

# 7. Nonblocking overlap.  Eager: Irecv, compute C, Wait: all of G(K-1) + L hides.
"$SYNTH" p2p "$WORK/nb" --bytes 101 --nonblocking --overlap 20000
predict "$WORK/nb"
expect "overlap: receiver" "$(finish 1)" "$(ps $((20000 + or)))"
expect "overlap: sender" "$(finish 0)" "$(ps $((os + 20000)))"
expect "overlap: nothing waited" "$(field 1 transfer)$(field 1 syn)" 00
# ... partly, when the computation is shorter than the transfer.
"$SYNTH" p2p "$WORK/nb2" --bytes 101 --nonblocking --overlap 3000
predict "$WORK/nb2"
expect "partial overlap" "$(finish 1)" "$(ps $((os + 100 + L + or)))"
expect "partial overlap: transfer waited" "$(field 1 transfer)" "$(ps $((os + 100 + L - 3000)))"
# Rendezvous: the receiver's CPU pays o' + o' + o_r, the sender's 2o' + o_s.
"$SYNTH" p2p "$WORK/nbr" --bytes 2001 --nonblocking --overlap 50000
predict "$WORK/nbr"
expect "rendezvous overlap: receiver" "$(finish 1)" "$(ps $((50000 + 2 * op + or)))"
expect "rendezvous overlap: sender" "$(finish 0)" "$(ps $((50000 + 2 * op + os)))"

# 7b. Half duplex (half_duplex = h): a transfer's G(K-1) also holds the other
#     direction of both ends for h of it, from when it leaves the sender.
#     One way, nothing else is in flight: every formula above holds.  Two
#     ranks swapping K bytes with Sendrecv: rank 0's message leaves first
#     (rank order at equal times), rank 1's waits h G(K-1) for its NIC,
#     so rank 0 receives at o_s + (1 + h) G(K-1) + L + o_r.
for K in 101 100000; do
  "$SYNTH" p2p "$WORK/hd$K" --bytes $K
  plat "half_duplex = half"
  predict "$WORK/hd$K"
  want=$((os + G * (K - 1) + L + or)); [ $K -gt 1024 ] && want=$((want + 2 * (op + L + op)))
  expect "half duplex, one way, K=$K" "$(finish 1)" "$(ps $want)"
done
"$SYNTH" sendrecv "$WORK/swap" --bytes 101
for h in 0:0 0.5:50 half:100 1:100; do
  plat "half_duplex = ${h%:*}"
  predict "$WORK/swap"
  expect "swap, half_duplex ${h%:*}: rank 0" "$(finish 0)" "$(ps $((os + 100 + ${h#*:} + L + or)))"
  expect "swap, half_duplex ${h%:*}: rank 1" "$(finish 1)" "$(ps $((os + 100 + L + or)))"
done
# ... inside a node only, when only intra.half_duplex says so.
plat "intra.half_duplex = 1
cores_per_node = 2"
predict "$WORK/swap" --ppn 1
expect "swap between nodes, intra.half_duplex 1" "$(finish 0)" "$(ps $((os + 100 + L + or)))"
predict "$WORK/swap" --ppn 2
expect "swap inside a node, intra.half_duplex 1" "$(finish 0)" "$(ps $((os + 200 + L + or)))"
plat

# 8. A Test that recorded flag=0 costs o_poll and completes nothing; the
#    one that recorded flag=1 completes the receive there.  The two Iprobes
#    that found nothing after it cost o_iprobe, which is o_poll unless the
#    platform gives its own.
"$SYNTH" poll "$WORK/poll" --bytes 10 --comp 1000 --comp0 3000
for oi in 100 70; do
  if [ $oi = 100 ]; then plat; else plat "o_iprobe = ${oi}ns"; fi
  predict "$WORK/poll"
  # The Test that succeeded comes at 4 x 1 us + 3 x 100 ns = 4.3 us, after
  # rank 0 sent at 3 us: it waits for the data until 9.009 us, in transfer.
  # On the target it would have failed, and the rank gone on polling: the
  # wait, 4.709 us, is credit, which the two failed Iprobes' computation and
  # o_iprobe, 2 x (1 us + o_iprobe), fit in: they cost nothing.
  expect "poll (o_iprobe $oi)" "$(finish 1)" "$(ps $((3000 + os + 9 + L + or)))"
  expect "poll overhead (o_iprobe $oi)" "$(field 1 overhead)" "$(ps $((3 * 100 + or)))"
  expect "poll computation (o_iprobe $oi)" "$(field 1 comp)" "$(ps 4000)"
  expect "failed polls counted (o_iprobe $oi)" "$(q "d['simulator']['failed_polls']")" 5
  expect "no poll folded (o_iprobe $oi)" "$(q "d['simulator']['folded_polls']")" 0
  expect "failed polls' cost (o_iprobe $oi)" "$(q "d['simulator']['failed_poll_ps']")" "$(ps $((3 * 100)))"
  expect "failed polls' share (o_iprobe $oi)" "$(q "round(d['simulator']['failed_poll_share'], 9)")" \
    "$(q "round(d['simulator']['failed_poll_ps'] / sum(r['finish_ps'] for r in d['ranks']), 9)")"
  expect "wait in the successful Test (o_iprobe $oi)" "$(q "d['simulator']['test_wait_ps']")" "$(ps $((9009 - 4300)))"
  expect "its share (o_iprobe $oi)" "$(q "round(d['simulator']['test_wait_share'], 9)")" \
    "$(q "round($(ps 4709) / sum(r['finish_ps'] for r in d['ranks']), 9)")"
  expect "work done in the wait (o_iprobe $oi)" "$(q "d['simulator']['test_wait_credit_ps']")" "$(ps $((2 * (1000 + oi))))"
done
# With 3 us of computation before each Iprobe, the credit (the wait, 4.709
# us) covers the first Iprobe, 3.1 us, and 1.609 us of the second's.
"$SYNTH" poll "$WORK/poll2" --bytes 10 --comp 1000 --comp0 3000 --comp-probe 3000 > /dev/null ||
  fail "simmpi/synth poll --comp-probe"
plat
predict "$WORK/poll2"
expect "credit spent" "$(q "d['simulator']['test_wait_credit_ps']")" "$(ps 4709)"
expect "poll, the rest after the credit" "$(finish 1)" "$(ps $((3000 + os + 9 + L + or + 2 * (3000 + 100) - 4709)))"
# A blocking call other than a Test ends the polling loop and its credit:
# the same Iprobes after a Barrier cost what they cost.
"$SYNTH" poll "$WORK/poll3" --bytes 10 --comp 1000 --comp0 3000 --barrier > /dev/null ||
  fail "simmpi/synth poll --barrier"
predict "$WORK/poll3"
expect "no credit past a barrier" "$(q "d['simulator']['test_wait_credit_ps']")" 0
# So do waits in successful Tests from a twentieth: 4.709 us of rank 0's 4 us
# and rank 1's 11.009 us is 31%; the note says how much was made up.
$PREDICT "$WORK/poll" --platform "$WORK/plat.conf" > "$WORK/p.txt" || fail "predict poll (text)"
grep -q "^note: in Tests that the recorded run saw succeed, the ranks waited 4.709 us, 31% of their time,$" "$WORK/p.txt" &&
  grep -q "^would have gone on working there, and 2.200 us of their polling loops' later work (computation$" "$WORK/p.txt" ||
  fail "no note on the wait in the successful Test: $(tail -8 "$WORK/p.txt")"
# Polls that are a tenth of the ranks' time or more get a note on the terminal.
plat "o_poll = 2us"
$PREDICT "$WORK/poll" --platform "$WORK/plat.conf" > "$WORK/p.txt" || fail "predict poll (text)"
# 3 x 2 us + 2 x 2 us = 10 us of rank 0's 3 + 1 us and rank 1's 18 us (six gaps
# of 1 us, five failed polls of 2 us, o_r = 2 us; the message is in at 9.009 us,
# before the fourth Test at 10 us): 10 / 22 = 45%
grep -q "^note: 5 Tests and Iprobes that found nothing cost 10.000 us, 45% of the ranks' time; their number$" "$WORK/p.txt" ||
  fail "no note on the failed polls: $(tail -4 "$WORK/p.txt")"
# The successful Test, at 4 + 3 x 2 = 10 us, finds the message in (9.009 us):
# no wait, no note on it.
! grep -q "^note: in Tests that the recorded run saw succeed" "$WORK/p.txt" ||
  fail "a note on waits in successful Tests where there were none: $(tail -8 "$WORK/p.txt")"
$PREDICT "$WORK/e101" --platform "$WORK/plat.conf" > "$WORK/p.txt" || fail "predict e101 (text)"
! grep -q "^note:" "$WORK/p.txt" || fail "a note on polls for a trace without any"
plat

# 8b. A failed Test whose request the simulation has completed is folded:
#     the target's Test would have succeeded, so it costs nothing.  The
#     message is in at o_s + 9 + L = 6.009 us; rank 1's Tests come at 3, 6.1
#     and 9.1 us (3 us of computation before each, o_poll = 100 ns for the
#     first only), the fourth completes it at 12.1 us (+ o_r), then two
#     Iprobes (never folded).
"$SYNTH" poll "$WORK/fold" --bytes 10 --comp 3000 > /dev/null || fail "simmpi/synth poll"
predict "$WORK/fold"
expect "fold: receiver" "$(finish 1)" "$(ps $((3000 + 100 + 2 * 3000 + 3000 + or + 2 * (3000 + 100))))"
expect "fold: folded" "$(q "d['simulator']['folded_polls']")" 2
expect "fold: charged" "$(q "d['simulator']['failed_polls']")" 3
expect "fold: their cost" "$(q "d['simulator']['failed_poll_ps']")" "$(ps 300)"
expect "fold: the successful Test does not wait" "$(q "d['simulator']['test_wait_ps']")" 0
# The note counts them: at o_poll = 2 us the Test at 3 us and the two
# Iprobes cost 6 us of 1 + 26 us (the Tests at 3, 8 and 11 us, the fourth
# at 14 us, then 2 x (3 + 2) us): 22%.
plat "o_poll = 2us"
$PREDICT "$WORK/fold" --platform "$WORK/plat.conf" > "$WORK/p.txt" || fail "predict fold (text)"
grep -q "^note: 3 Tests and Iprobes that found nothing cost 6.000 us, 22% of the ranks' time; their number$" "$WORK/p.txt" &&
  grep -q "^(2 more cost nothing: the simulation had completed their requests or delivered their message)$" "$WORK/p.txt" ||
  fail "the note on folded polls: $(tail -4 "$WORK/p.txt")"
plat
# Testall folds once all its requests are done, Testany once one is: rank 1's
# eager Isend is done at o_s = 1 us, its receive at 6.009 us; the Tests come
# 3 us apart from 4 us on, the Waitall 3 us after the third.
"$SYNTH" testall "$WORK/tall" --bytes 10 --comp 3000 --op testall > /dev/null || fail "simmpi/synth testall"
predict "$WORK/tall"
expect "Testall fold: receiver" "$(finish 1)" "$(ps $((os + 3000 + 100 + 3 * 3000 + or)))"
expect "Testall fold: folded" "$(q "d['simulator']['folded_polls']")" 2
"$SYNTH" testall "$WORK/tany" --bytes 10 --comp 3000 --op testany > /dev/null || fail "simmpi/synth testany"
predict "$WORK/tany"
expect "Testany fold: receiver" "$(finish 1)" "$(ps $((os + 4 * 3000 + or)))"
expect "Testany fold: folded" "$(q "d['simulator']['folded_polls']")" 3
expect "Testany fold: rank 0" "$(finish 0)" "$(ps $((os + 9 + L + or)))"
# A failed Iprobe of one source and tag folds where that message is in by
# the rank's clock; one of a wildcard never does (which envelope the target
# would have found is not the trace's).  The message is in at 6.009 us;
# rank 1's Iprobes come 3 us apart: at 3 us (charged, 100 ns), 6.1 us
# (folded), 9.1 and 12.2 us (ANY_SOURCE, ANY_TAG: charged), the one that
# finds it at 15.3 us (o_iprobe), then the receive at 18.4 us (+ o_r).
"$SYNTH" iprobe "$WORK/iprobe" --bytes 10 --comp 3000 > /dev/null || fail "simmpi/synth iprobe"
predict "$WORK/iprobe"
expect "Iprobe fold: receiver" "$(finish 1)" "$(ps $((18400 + or)))"
expect "Iprobe fold: folded" "$(q "d['simulator']['folded_polls']")" 1
expect "Iprobe fold: charged" "$(q "d['simulator']['failed_polls']")" 3
expect "Iprobe fold: their cost" "$(q "d['simulator']['failed_poll_ps']")" "$(ps 300)"
# 8c. A pairwise Alltoall's step with itself is a copy of the rank's own
# block, not a message (Open MPI's ompi_coll_base_sendrecv to itself): K
# bytes at G a byte, after the swap with the other rank (eager); two_proc
# swaps and copies the same.
"$SYNTH" coll "$WORK/a2a2" --ranks 2 --op alltoall --bytes 100 > /dev/null || fail "simmpi/synth coll alltoall"
for alg in pairwise two_proc; do
  plat "coll.alltoall = $alg"
  predict "$WORK/a2a2"
  expect "$alg alltoall p=2: time, messages" "$(q "d['predicted_ps'], d['simulator']['messages']")" \
    "$(ps $((os + G * 99 + L + or + G * 100))) 2"
done
plat

# 9. A collective with nothing to move returns at once in Open MPI's MPI
# layer (ompi/mpi/c/*.c, "Do we need to do anything?"): ten of them of 0
# bytes on 5 ranks cost exactly the 1 us of computation before each, and
# send nothing; an Iallreduce of 0 bytes completes at once, under 2 us of
# overlap.  A Barrier has no such test: it still sends.
"$SYNTH" coll "$WORK/zero" --ranks 5 --bytes 0 --comp 1000 \
  --op bcast,reduce,allreduce,allgather,alltoall,gather,scatter,scan,exscan,reduce_scatter_block > /dev/null ||
  fail "simmpi/synth coll --bytes 0"
predict "$WORK/zero"
expect "zero-count collectives: run time" "$(q "d['predicted_ps']")" "$(ps 10000)"
expect "zero-count collectives: messages" "$(q "d['simulator']['messages']")" 0
"$SYNTH" icoll "$WORK/izero" --ranks 4 --bytes 0 --comp 1000 --overlap 2000 > /dev/null ||
  fail "simmpi/synth icoll --bytes 0"
predict "$WORK/izero"
expect "zero-count Iallreduce: run time" "$(q "d['predicted_ps']")" "$(ps 3000)"
"$SYNTH" coll "$WORK/zbar" --ranks 5 --bytes 0 --op barrier > /dev/null || fail "simmpi/synth coll barrier"
predict "$WORK/zbar"
[ "$(q "d['simulator']['messages']")" -gt 0 ] || fail "a Barrier sent nothing"
echo "closed forms: all exact"
