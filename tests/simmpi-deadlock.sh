#!/bin/sh
# A trace that deadlocks is reported, rank by rank, and never hangs.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat
"$SYNTH" deadlock "$WORK/dl" --ranks 3 --bytes 100 --comp 5000
rc=0
timeout 60 $PREDICT "$WORK/dl" --platform "$WORK/plat.conf" > "$WORK/out" 2> "$WORK/err" || rc=$?
[ $rc -ne 124 ] || fail "predict hung on a deadlock"
expect "exit status" $rc 1
expect "one line per stuck rank" "$(wc -l < "$WORK/err")" 3
for r in 0 1 2; do
  peer=$(( (r + 1) % 3 ))
  grep -q "deadlock: rank $r blocked in MPI_Recv at deadlock synth.c:1 since 5.000 us, waiting for a message from rank $peer (tag 0, comm 0), which is blocked too" "$WORK/err" \
    || { cat "$WORK/err"; fail "rank $r: no clear report"; }
done
[ -s "$WORK/out" ] && fail "a deadlocked run printed a prediction"

# A send nobody receives, in rendezvous, leaves its sender stuck; its partner has finished.
"$SYNTH" ring "$WORK/ring" --ranks 2 --bytes 5000 --iters 1
# Rank 0 sends 5000 B (rendezvous) to rank 1 and waits; swap in a rank 1 that
# only initialises and finalises.
"$SYNTH" coll "$WORK/one" --ranks 2 --op barrier --iters 0
cp "$WORK/one/rank-000001.evt" "$WORK/ring/rank-000001.evt"
rc=0
timeout 60 $PREDICT "$WORK/ring" --platform "$WORK/plat.conf" > "$WORK/out" 2> "$WORK/err" || rc=$?
expect "unmatched rendezvous: exit status" $rc 1
expect "unmatched rendezvous: one line" "$(wc -l < "$WORK/err")" 1
grep -q "rank 0 blocked in MPI_Send .* waiting for rank 1 to receive a message (tag 3, comm 0), whose trace has ended\|rank 0 blocked in MPI_Send .* waiting for rank 1 to receive a message (tag 3, comm 0), which has finished" "$WORK/err" \
  || { cat "$WORK/err"; fail "unmatched rendezvous send: no clear report"; }
echo "deadlocks reported"
