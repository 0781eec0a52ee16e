#!/bin/sh
# Collectives as point-to-point messages: every algorithm's decomposition,
# message by message, against tests/simmpi-coll-model.py's own model for sizes
# 2..16 (powers of two and not); Open MPI 4.1's decision rule at known
# points; and the simulator running exactly the listed messages.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
LIST="$top_builddir/simmpi/coll-list"
python3 "$top_srcdir/tests/simmpi-coll-model.py" "$LIST" || fail "decompositions differ from the model"

# The decision rule (coll/tuned fixed rules, Open MPI 4.1) at some table points.
decide() { "$LIST" "$1" auto "$2" 0 "$3" 1 | sed -n 's/^alg [0-9]* //p'; }
expect "allreduce 16 ranks 1 MiB" "$(decide allreduce 16 1048576)" rabenseifner
expect "allreduce 64 ranks 100 B" "$(decide allreduce 64 100)" recursive_doubling
expect "allreduce 4 ranks 4 B" "$(decide allreduce 4 4)" ring
expect "bcast 100 ranks 1 KB" "$(decide bcast 100 1000)" knomial
expect "bcast 12 ranks 64 KB" "$(decide bcast 12 65536)" basic_linear
expect "bcast 16 ranks 64 KB" "$(decide bcast 16 65536)" binomial
expect "alltoall 64 ranks 100 B" "$(decide alltoall 64 100)" modified_bruck
expect "alltoall 200 ranks 1 MiB" "$(decide alltoall 200 1048576)" pairwise
expect "barrier 4 ranks" "$(decide barrier 4 0)" linear
expect "barrier 64 ranks" "$(decide barrier 64 0)" bruck
expect "barrier 2 ranks" "$(decide barrier 2 0)" recursive_doubling
expect "allgather 8 ranks" "$(decide allgather 8 64)" recursive_doubling
expect "reduce 16 ranks 16 KB" "$(decide reduce 16 16384)" binomial

# The engine runs what the listing says: message counts agree, and the
# algorithm the trace used is reported; a platform override forces another.
for p in 3 8 13; do
  for spec in "allreduce 800 auto" "allreduce 80000 ring" "bcast 4096 auto" "alltoall 64 pairwise" \
              "allgather 256 neighbor" "reduce 40 binomial" "barrier 0 tree"; do
    set -- $spec
    op=$1 bytes=$2 alg=$3
    if [ "$alg" = auto ]; then plat; else plat "coll.$op = $alg"; fi
    "$SYNTH" coll "$WORK/c" --ranks $p --op $op --bytes $bytes --esize 8
    predict "$WORK/c"
    count=$((bytes / 8)); [ $count -gt 0 ] || count=0
    listed=$("$LIST" $op $alg $p 0 $count 8 | grep -c '^S')
    used=$("$LIST" $op $alg $p 0 $count 8 | sed -n 's/^alg [0-9]* //p')
    expect "$op $alg p=$p: messages simulated" "$(q "d['simulator']['messages']")" "$listed"
    expect "$op $alg p=$p: algorithm reported" "$(q "list(d['collectives']['$op'])")" "['$used']"
  done
done
# A forced algorithm reaches the parts of a composed collective, as Open
# MPI's forced algorithm reaches the calls they make through the
# communicator: nonoverlapping allreduce with coll.reduce and coll.bcast
# linear is basic_linear (both parts linear), to the picosecond, and not
# nonoverlapping with the rule's parts.
"$SYNTH" coll "$WORK/ar8" --ranks 8 --op allreduce --bytes 800 --esize 8
plat "coll.allreduce = basic_linear"
predict "$WORK/ar8"
lin=$(q "d['predicted_ps'], d['simulator']['messages']")
plat "coll.allreduce = nonoverlapping"
predict "$WORK/ar8"
own=$(q "d['predicted_ps'], d['simulator']['messages']")
plat "coll.allreduce = nonoverlapping
coll.reduce = linear
coll.bcast = basic_linear"
predict "$WORK/ar8"
expect "nonoverlapping, parts forced linear" "$(q "d['predicted_ps'], d['simulator']['messages']")" "$lin"
[ "$own" != "$lin" ] || fail "nonoverlapping's own parts predict what linear ones do: $own"

# A root's schedule of p-1 rounds costs O(p), not O(p^2): each round is
# computed on its own, without walking the rounds before it.  At 262,144
# ranks the walk took minutes; here the totals match their closed forms at
# once.  (The root of a linear_sync gather: p-1 rounds of a go-ahead and a
# block, then one of every empty second segment; of a blocking linear
# scatter; of a linear gather, a receive a round; and of a ring
# scatter_allgather bcast: log2 p scatter sends, then p-1 ring rounds.)
p=262144 root=$((p / 2 + 7))
expect "gather linear_sync root, $p ranks" "$("$LIST" -r $root gather linear_sync $p $root 5 8 | head -1)" \
  "rank $root rounds $p sends $((p - 1)) recvs $((2 * (p - 1))) bytes 0"
expect "gather basic_linear root, $p ranks" "$("$LIST" -r $root gather basic_linear $p $root 5 8 | head -1)" \
  "rank $root rounds $((p - 1)) sends 0 recvs $((p - 1)) bytes 0"
expect "scatter basic_linear root, $p ranks" "$("$LIST" -r $root scatter basic_linear $p $root 5 8 | head -1)" \
  "rank $root rounds $((p - 1)) sends $((p - 1)) recvs 0 bytes $(((p - 1) * 40))"
expect "bcast ring root, $p ranks" "$("$LIST" -r $root bcast scatter_allgather_ring $p $root $((3 * p)) 8 | head -1)" \
  "rank $root rounds $((18 + p - 1)) sends $((18 + p - 1)) recvs $((p - 1)) bytes $((2 * (p - 1) * 24))"
# A v-collective without per-rank sizes: every rank gives count elements,
# as with equal sizes (allgatherv's linear gather read a missing size).
for alg in auto 1 2 3 4 5; do
  expect "allgatherv $alg without sizes" "$("$LIST" allgatherv $alg 7 0 2 4 | cksum)" \
    "$("$LIST" allgatherv $alg 7 0 2 4 8 8 8 8 8 8 8 | cksum)"
done
echo "collectives: decompositions and decisions checked"
