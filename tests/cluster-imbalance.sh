#!/bin/sh
# A recorded run (tests/progs/imbalance.c at 4 ranks: rank 0 computes 3x as
# long in each of 20 iterations of compute + Allreduce + two Sendrecv): rank 0
# gets a group of its own at the default threshold and when asked for 2
# groups (then the others are the second), all ranks share one
# communication sequence (ring neighbours are relative), and the loop is
# found: 3 events, 20 times.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/cluster-lib.sh"
need mpicc
prog=$(cd "$WORK" && build_prog imbalance.c)
"$PHANTOM" record -o "$WORK/T" -- mpirun --oversubscribe -np 4 "$prog" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "imbalance under phantom record"; }

$CLUSTER "$WORK/T" --partition commseq -o "$WORK/c.json" > "$WORK/sum" || fail "cluster by sequence"
grep -q "4 ranks in 1 communication class," "$WORK/sum" || fail "one communication sequence"
$CLUSTER "$WORK/T" > "$WORK/sum" || fail "cluster"
check_plan "$WORK/T/groups.json"
[ "$(plan_get "$WORK/T/groups.json" '[g["members"] for g in d["groups"] if 0 in [r for r in range(4) if d["rank_group"][r] == g["id"]]]')" = "['0']" ] \
  || fail "rank 0 is not alone: $(groups_of "$WORK/T/groups.json")"
[ "$(plan_get "$WORK/T/groups.json" 'd["rank_representative"][0]')" = 0 ] || fail "rank 0 represents itself"
[ "$(plan_get "$WORK/T/groups.json" '(d["iterations"]["period"], d["iterations"]["iterations"])')" = "(3, 20)" ] \
  || fail "loop: $(plan_get "$WORK/T/groups.json" 'd["iterations"]')"

for m in "-k 2" "--method kmeans -k 2"; do
  $CLUSTER "$WORK/T" $m -o "$WORK/k2.json" > /dev/null || fail "cluster $m"
  check_plan "$WORK/k2.json"
  [ "$(groups_of "$WORK/k2.json")" = "0 1-3" ] || fail "$m: groups $(groups_of "$WORK/k2.json")"
done
exit 0
