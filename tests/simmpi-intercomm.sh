#!/bin/sh
# Collectives on an intercommunicator, as Open MPI 4.1's coll/inter runs
# them (Barrier: coll/basic, an Allreduce of one int): Bcast from the root
# to the remote rank 0, then a broadcast in that group; Reduce in the other
# group to its rank 0, which sends to the root; Allreduce as a reduce to
# rank 0 in each group, a swap between the two rank 0s, and a broadcast;
# Gather as a gather in the other group to its rank 0, which sends all the
# blocks to the root, and Scatter the other way round; Allgather as a
# gather to rank 0 in each group, a swap between the rank 0s and a
# broadcast; Alltoall and Alltoallv (coll/basic) as a block to and from
# every rank of the other group, in one round; Reduce_scatter_block and
# Reduce_scatter (coll/basic) as every rank's buffer sent to remote rank 0,
# which reduces them and scatters(v) the sum in its group; Gatherv as a
# gather of the counts and a gatherv of the data in the other group to its
# rank 0, which sends them to the root, Scatterv as the root sending remote
# rank 0 the counts and the data, which it scatters, and Allgatherv as a
# Gatherv's two steps in each group, a swap between the rank 0s and a
# broadcast (coll/inter, each group's sizes taken from the other's events);
# their I-forms as Open MPI's libnbc runs them, straight to and from the
# remote ranks.
# Synthetic traces (simmpi/synth intercomm: the even ranks against the odd
# ones), checked against closed forms to the picosecond (blocking and
# nonblocking), by message count at sizes that are not powers of two,
# message by message (coll-list -i), and for the same prediction under any
# thread count or event order; a Scan there, which MPI does not define, is
# counted and named.
# Platform: o_s=1000 o_r=2000 L=5000 o'=300 (ns), G=1 ns/B, eager limit
# 1024 B (tests/simmpi-lib.sh).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
COLL_LIST="$top_builddir/simmpi/coll-list"
[ -x "$COLL_LIST" ] || skip "simmpi/coll-list is not built (make check builds it)"
# listed [-s] RSIZE COLL inter SIZE ROOT COUNT ESIZE [RBYTES]: coll-list -i's
# messages on one line, each followed by ';' (-s: sorted)
listed() {
  sorted=cat; [ "$1" = -s ] && { sorted=sort; shift; }
  "$COLL_LIST" -i "$@" > "$WORK/listed" || fail "coll-list -i $*"
  grep -v '^alg' "$WORK/listed" | $sorted | tr '\n' ';'
}
plat
os=1000 or=2000 L=5000 op=300 G=1
ps() { echo $(( $1 * 1000 )); }
finishes() { q "' '.join(str(r['finish_ps']) for r in d['ranks'])"; }

# 1. Four ranks: group A = ranks 0 and 2, group B = 1 and 3; the root is
#    rank 0 (A's rank 0).  m: one eager message of K bytes end to end.
K=100
m=$((os + G * (K - 1) + L + or))
for coll in bcast reduce allreduce barrier gather scatter alltoall allgather reduce_scatter_block \
  alltoallv reduce_scatter gatherv scatterv allgatherv; do
  "$SYNTH" intercomm "$WORK/$coll" --ranks 4 --op $coll --bytes $K --comp 0
  predict "$WORK/$coll"
  expect "$coll: counted once, as inter" "$(q "d['collectives']")" "{'$coll': {'inter': 1}}"
done
predict "$WORK/bcast"
# rank 0 sends; rank 1 receives, then sends on to rank 3; rank 2 (MPI_PROC_NULL) does nothing
expect "bcast finishes" "$(finishes)" "$(ps $os) $(ps $((m + os))) 0 $(ps $((2 * m)))"
predict "$WORK/reduce"
# rank 3 sends to rank 1, which sends the sum to the root
expect "reduce finishes" "$(finishes)" "$(ps $((2 * m))) $(ps $((m + os))) 0 $(ps $os)"
predict "$WORK/allreduce"
# ranks 2 and 3 send to their rank 0s (m); the rank 0s swap (m); then send back (m)
expect "allreduce finishes" "$(finishes)" "$(ps $((2 * m + os))) $(ps $((2 * m + os))) $(ps $((3 * m))) $(ps $((3 * m)))"
predict "$WORK/barrier"
m4=$((os + G * 3 + L + or))
expect "barrier finishes (an allreduce of 4 bytes)" "$(finishes)" \
  "$(ps $((2 * m4 + os))) $(ps $((2 * m4 + os))) $(ps $((3 * m4))) $(ps $((3 * m4)))"
# m2: one message of both of group B's blocks (2K bytes)
m2=$((os + G * (2 * K - 1) + L + or))
predict "$WORK/gather"
# rank 3 sends its block to rank 1, which sends both to the root
expect "gather finishes" "$(finishes)" "$(ps $((m + m2))) $(ps $((m + os))) 0 $(ps $os)"
predict "$WORK/scatter"
# the root sends both blocks to rank 1, which sends rank 3's on
expect "scatter finishes" "$(finishes)" "$(ps $os) $(ps $((m2 + os))) 0 $(ps $((m2 + m)))"
predict "$WORK/alltoall"
# every rank sends to the other group's rank 0 first, then to its rank 1:
# each rank 0 takes two messages that arrive together (one o_r after the
# other), each rank 1 two that arrive o_s later
expect "alltoall finishes" "$(finishes)" \
  "$(ps $((m + or))) $(ps $((m + or))) $(ps $((m + os + or))) $(ps $((m + os + or)))"
expect "alltoall: o_s and o_r twice each" "$(q "' '.join(str(r['overhead_ps']) for r in d['ranks'])")" \
  "$(ps $((2 * (os + or)))) $(ps $((2 * (os + or)))) $(ps $((2 * (os + or)))) $(ps $((2 * (os + or))))"
# Alltoallv with K bytes to and from every remote rank: the same messages
predict "$WORK/alltoallv"
expect "alltoallv finishes" "$(finishes)" \
  "$(ps $((m + or))) $(ps $((m + or))) $(ps $((m + os + or))) $(ps $((m + os + or)))"
predict "$WORK/allgather"
# ranks 2 and 3 send their blocks to their rank 0s (m), which swap both
# blocks of their group (m2) and send the other group's to ranks 2 and 3 (m2)
expect "allgather finishes" "$(finishes)" \
  "$(ps $((m + m2 + os))) $(ps $((m + m2 + os))) $(ps $((m + 2 * m2))) $(ps $((m + 2 * m2)))"
predict "$WORK/reduce_scatter_block"
# every rank sends both blocks to the other group's rank 0 (m2); each rank 0
# takes its peer rank 0's, then the other rank's (o_r later), and sends
# ranks 2 and 3 their blocks (m)
expect "reduce_scatter_block finishes" "$(finishes)" \
  "$(ps $((m2 + or + os))) $(ps $((m2 + or + os))) $(ps $((m2 + or + m))) $(ps $((m2 + or + m)))"
# Reduce_scatter with K bytes to every local rank: the sum of both (2K
# bytes) sent, and a Scatterv of one message in each group
predict "$WORK/reduce_scatter"
expect "reduce_scatter finishes" "$(finishes)" \
  "$(ps $((m2 + or + os))) $(ps $((m2 + or + os))) $(ps $((m2 + or + m))) $(ps $((m2 + or + m)))"
# Gatherv, Scatterv and Allgatherv: a group's rank 0 sends (or receives) K
# bytes, its rank 1 2K.  m8: the counts of two ranks (8 bytes); m3: a
# group's 3K bytes in one message.
m8=$((os + G * 7 + L + or))
m3=$((os + G * (3 * K - 1) + L + or))
predict "$WORK/gatherv"
# rank 3 sends rank 1 its count (m4), then its 2K bytes, which are there
# before rank 1 has taken the count: rank 1 takes them o_r later and sends
# the group's 3K bytes to the root
expect "gatherv finishes" "$(finishes)" "$(ps $((m4 + or + m3))) $(ps $((m4 + or + os))) 0 $(ps $((2 * os)))"
predict "$WORK/scatterv"
# the root sends rank 1 the counts, then the 3K bytes (blocking, eager);
# rank 1 takes the counts (m8), the bytes o_r later, and sends rank 3 its 2K
expect "scatterv finishes" "$(finishes)" "$(ps $((2 * os))) $(ps $((m8 + or + os))) 0 $(ps $((m8 + or + m2)))"
predict "$WORK/allgatherv"
# in each group rank 1 sends rank 0 its count and its 2K bytes (m4 + o_r),
# the rank 0s swap their groups' 3K bytes (m3) and send them on to rank 1
expect "allgatherv finishes" "$(finishes)" \
  "$(ps $((m4 + or + m3 + os))) $(ps $((m4 + or + m3 + os))) $(ps $((m4 + or + 2 * m3))) $(ps $((m4 + or + 2 * m3)))"

# 1b. A forced algorithm (coll.bcast) reaches the local collectives, as Open
#    MPI's does: group B of 4 ranks (1, 3, 5, 7) broadcasts linearly, rank 1
#    sending to 3, 5 and 7 in turn, instead of its binomial tree (rank 1
#    sends to 3, which sends on to 7 at 3m, then to 5).
"$SYNTH" intercomm "$WORK/bcast9" --ranks 9 --op bcast --bytes $K --comp 0
predict "$WORK/bcast9"
expect "bcast on 5+4 ranks, binomial in B" "$(finishes)" \
  "$(ps $os) $(ps $((m + 2 * os))) 0 $(ps $((2 * m + os))) 0 $(ps $((2 * m + os))) 0 $(ps $((3 * m))) 0"
plat "coll.bcast = basic_linear"
predict "$WORK/bcast9"
expect "bcast on 5+4 ranks, forced linear in B" "$(finishes)" \
  "$(ps $os) $(ps $((m + 3 * os))) 0 $(ps $((2 * m))) 0 $(ps $((2 * m + os))) 0 $(ps $((2 * m + 2 * os))) 0"
plat

# 2. Rendezvous (K above the eager limit): the Bcast's two messages in a row.
K=100000
mr=$((2 * (op + L + op) + os + G * (K - 1) + L + or))
"$SYNTH" intercomm "$WORK/rbcast" --ranks 4 --op bcast --bytes $K --comp 0
predict "$WORK/rbcast"
expect "rendezvous bcast finishes" "$(finishes)" \
  "$(ps $((2 * (op + L + op) + os))) $(ps $((mr + 2 * (op + L + op) + os))) 0 $(ps $((2 * mr)))"
expect "rendezvous bcast: rank 3 waits for its sender" "$(q "d['ranks'][3]['syn_ps']")" "$(ps $mr)"

# 2b. Nonblocking: the I-forms run in Open MPI's libnbc, straight to and
#    from the remote ranks: the first round in the I-call, before the
#    overlapped computation X, the rest in the Wait that completes them
#    (groups of 2; the root is rank 0).
X=20000
K=100
m=$((os + G * (K - 1) + L + or))
for coll in bcast gather allreduce; do
  "$SYNTH" intercomm "$WORK/i$coll" --ranks 4 --op $coll --bytes $K --comp 0 --nonblocking --overlap $X
done
predict "$WORK/ibcast"
# the root sends to remote ranks 0 and 1 in the I-call; they arrive during
# X, and each remote rank takes its message in its Wait (o_r)
expect "ibcast finishes" "$(finishes)" "$(ps $((X + 2 * os))) $(ps $((X + or))) $(ps $X) $(ps $((X + or)))"
predict "$WORK/igather"
# both remote ranks send to the root in the I-call: it takes both in its Wait
expect "igather finishes" "$(finishes)" "$(ps $((X + 2 * or))) $(ps $((X + os))) $(ps $X) $(ps $((X + os)))"
predict "$WORK/iallreduce"
# in the I-call every rank sends to remote rank 0 (os); in the Wait each
# rank 0 takes remote rank 0's data and remote rank 1's, there since
# before X (o_r each), swaps the sums with remote rank 0 (os, then m to
# take the other's) and sends remote rank 1 its group's (os, and m to
# arrive), which rank 1 has waited for since its I-call
expect "iallreduce finishes" "$(finishes)" \
  "$(ps $((X + 2 * os + 2 * or + m))) $(ps $((X + 2 * os + 2 * or + m))) $(ps $((X + os + 2 * or + 2 * m))) $(ps $((X + os + 2 * or + 2 * m)))"
expect "iallreduce: counted as inter" "$(q "d['collectives']")" "{'allreduce': {'inter': 1}}"

# counted TRACE WANT ARGS...: simmpi/synth intercomm TRACE ARGS... has WANT
# messages, every one received and every rank at MPI_Finalize, and the
# same prediction for 1 or 2 threads, the strict order and either queue.
counted() {
  t=$1 want=$2
  shift 2
  "$SYNTH" intercomm "$t" "$@"
  predict "$t" --threads 1
  expect "$t: messages, unmatched, complete" \
    "$(q "d['simulator']['messages'], d['simulator']['unmatched_messages'], all(r['complete'] for r in d['ranks'])")" \
    "$want 0 True"
  ref=$(q "d['predicted_ps']")
  for v in "--threads 2" "--strict-order" "--queue radix"; do
    predict "$t" $v
    expect "$t, $v" "$(q "d['predicted_ps']")" "$ref"
  done
}

# 3. Groups of 4 and 3, 5 and 4, 1 and 1 ranks, three calls each: a group
#    of b ranks takes b messages a Bcast, Reduce, Gather or Scatter (its
#    local collective's b - 1, and one from or to the root; the rules pick
#    no linear_sync gather at these sizes), an Alltoall or Alltoallv 2ab (a
#    block each way between every pair of the groups of a and b), and an
#    Allreduce, Barrier, Allgather, Reduce_scatter_block or Reduce_scatter
#    on n ranks 2n - 2 (each group's b - 1 twice, and the swap); a Gatherv
#    2b - 1 (the counts' b - 1, the data's b - 1 and one to the root), a
#    Scatterv b + 1 (two from the root) and an Allgatherv 3n - 4 (each
#    group's b - 1 three times, and the swap).
#    The I-forms, as libnbc sends them: b for Ibcast, Ireduce, Igather(v)
#    and Iscatter(v) (the root and each remote rank); 2ab for Iallgather(v)
#    and Ialltoall(v); 2n - 2 for Ibarrier (each rank 0 hears from the other
#    group's other ranks, swaps with the other rank 0 and lets them go) and
#    Ireduce_scatter(_block) (every rank to remote rank 0, which scatters
#    in its group); 2n for Iallreduce (every rank to remote rank 0, the
#    swap of the sums, and each rank 0's to the other group's other ranks).
#    Every one is received, and the prediction is the same for 1 or 2
#    threads, the strict order and either queue.
for n in 7 9 2; do
  b=$((n / 2))
  root=$(( n > 2 ? 1 : 0 ))
  for coll in bcast reduce gather scatter allreduce barrier alltoall allgather reduce_scatter_block alltoallv \
    reduce_scatter gatherv scatterv allgatherv; do
    case $coll in
      allreduce | barrier | allgather | reduce_scatter_block | reduce_scatter) want=$((3 * (2 * n - 2))) ;;
      alltoall | alltoallv) want=$((3 * 2 * (n - b) * b)) ;;
      gatherv) want=$((3 * (2 * b - 1))) ;;
      scatterv) want=$((3 * (b + 1))) ;;
      allgatherv) want=$((3 * (3 * n - 4))) ;;
      *) want=$((3 * b)) ;;
    esac
    for K in 100 100000; do
      counted "$WORK/$coll-$n-$K" $want --ranks $n --op $coll --bytes $K --comp 1000 --iters 3 --root $root
    done
    case $coll in
      barrier | reduce_scatter_block | reduce_scatter) want=$((3 * (2 * n - 2))) ;;
      allreduce) want=$((3 * 2 * n)) ;;
      alltoall | alltoallv | allgather | allgatherv) want=$((3 * 2 * (n - b) * b)) ;;
      *) want=$((3 * b)) ;;
    esac
    counted "$WORK/nb-$coll-$n" $want --ranks $n --op $coll --bytes 100 --comp 10 --iters 3 --root $root \
      --nonblocking --overlap $X
  done
done

# 4. A Scan on an intercommunicator (MPI defines none) is not simulated:
#    it costs nothing, and the prediction says how many calls that was.
"$SYNTH" intercomm "$WORK/iscan" --ranks 5 --op scan --bytes 64 --comp 1000 --iters 2
predict "$WORK/iscan"
expect "scan: not simulated" "$(q "d['simulator']['unsimulated_collective_calls'], d['simulator']['messages'], d['collectives']")" "10 0 {}"
expect "scan: the ranks compute only" "$(q "max(r['finish_ps'] for r in d['ranks'])")" "$(ps 2000)"
$PREDICT "$WORK/iscan" --platform "$WORK/plat.conf" > "$WORK/table"
grep -q "^note: 10 collective calls on intercommunicators were not simulated (a Gatherv,$" "$WORK/table" ||
  fail "no note of the collectives not simulated: $(cat "$WORK/table")"
predict "$WORK/allreduce"
expect "allreduce: everything simulated" "$(q "d['simulator']['unsimulated_collective_calls']")" 0

# 4b. A wrong trace: group B names root 2, which group A (2 ranks) does
#    not have.  phantom predict and phantom export each stop with one line
#    naming the rank, the event and the root.
for x in bcast:MPI_Bcast reduce:MPI_Reduce gather:MPI_Gather scatter:MPI_Scatter; do
  coll=${x%:*} op=${x#*:}
  "$SYNTH" intercomm "$WORK/bad-$coll" --ranks 4 --op $coll --bytes 64 --root 2
  want="$WORK/bad-$coll: rank 1: event 1 ($op): root 2 is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (2 ranks) of intercommunicator 2"
  $PREDICT "$WORK/bad-$coll" --platform "$WORK/plat.conf" > /dev/null 2> "$WORK/err" && fail "$coll: a root outside the remote group predicted"
  expect "$coll: predict's error" "$(cat "$WORK/err")" "phantom predict: $want"
  $PHANTOM export "$WORK/bad-$coll" --format simgrid -o "$WORK/bad.tit" > /dev/null 2> "$WORK/err" &&
    fail "$coll: a root outside the remote group exported"
  expect "$coll: export's error" "$(cat "$WORK/err")" "phantom export: $want"
done

# 4c. A wrong trace: an Alltoallv or Reduce_scatter one per-rank size short
#    (groups of 3 and 2: rank 0 has 1 of 2 remote sizes, or 2 of 3 local
#    ones), or a Gatherv's or Scatterv's root or an Allgatherv with one of
#    the other group's two.  phantom predict stops with one line naming the
#    rank, the event and the sizes; phantom export drops the call, and says
#    so once: for a Gatherv or Scatterv the root's, and the other group's
#    two, which have no sizes for their group (the one event with them is
#    short).
short="1 per-rank sizes for a remote group of 2"
for x in "alltoallv:MPI_Alltoallv:$short" "reduce_scatter:MPI_Reduce_scatter:2 per-rank sizes for a local group of 3" \
  "gatherv:MPI_Gatherv:$short" "scatterv:MPI_Scatterv:$short" "allgatherv:MPI_Allgatherv:$short"; do
  coll=${x%%:*} rest=${x#*:}
  op=${rest%%:*} what=${rest#*:}
  "$SYNTH" intercomm "$WORK/short-$coll" --ranks 5 --op $coll --bytes 64 --short-sizes
  $PREDICT "$WORK/short-$coll" --platform "$WORK/plat.conf" > /dev/null 2> "$WORK/err" &&
    fail "$coll: per-rank sizes short, predicted"
  expect "$coll: predict's error" "$(cat "$WORK/err")" \
    "phantom predict: $WORK/short-$coll: rank 0: event 1 ($op): $what"
  $PHANTOM export "$WORK/short-$coll" --format simgrid -o "$WORK/short.tit" > /dev/null 2> "$WORK/err" ||
    fail "$coll: per-rank sizes short, not exported: $(cat "$WORK/err")"
  vnote="v-collectives with fewer per-rank sizes than ranks dropped"
  case $coll in
    gatherv | scatterv)
      grep -q "^phantom export: approximated: 1 call: $vnote\$" "$WORK/err" &&
        grep -q "^phantom export: approximated: 2 calls: intercommunicator collectives not simulated dropped" \
          "$WORK/err" || fail "$coll: export's notes: $(cat "$WORK/err")" ;;
    *) expect "$coll: export's note" "$(cat "$WORK/err")" "phantom export: approximated: 5 calls: $vnote" ;;
  esac
done

# 5. Message by message: a local group of 3 and a remote one of 2.  Only
#    the local rank 0 talks to the remote group (rN: its rank N), in one
#    round of its own, between the local reduce's rounds and the broadcast's.
"$COLL_LIST" -i 2 allreduce inter 3 0 2 8 > "$WORK/ar"
grep -q '^alg 15 inter$' "$WORK/ar" || fail "allreduce: not the inter algorithm: $(cat "$WORK/ar")"
remote=$(grep ' r[0-9]' "$WORK/ar" | sort | tr '\n' ';')
expect "allreduce: the remote messages" "$remote" "R r0 0 1 16;S 0 r0 1 16;"
r0=$(awk '$1 == "S" && $2 == "0" || $1 == "R" && $3 == "0"' "$WORK/ar" | tr '\n' ';')
expect "allreduce: rank 0's rounds" "$r0" "R 1 0 0;R r0 0 1 16;S 0 r0 1 16;S 0 1 2 16;"
n=$(grep -c '^S [0-9]* [0-9]* ' "$WORK/ar")
expect "allreduce: local sends (reduce and bcast over 3 ranks)" "$n" 4
expect "bcast from the root: one message to remote rank 0 each" "$(listed 3 bcast inter 2 root 4 8)" \
  "S 0 r0 0 32;S 1 r0 0 32;"
"$COLL_LIST" -i 3 bcast inter 2 none 4 8 > "$WORK/bn"
expect "bcast, MPI_PROC_NULL: nothing" "$(cat "$WORK/bn")" "alg 15 inter"
"$COLL_LIST" -i 3 reduce inter 4 2 4 8 > "$WORK/rd"
expect "reduce: local rank 0 sends the sum to remote rank 2" "$(grep ' r' "$WORK/rd")" "S 0 r2 1 32"
"$COLL_LIST" -i 3 bcast inter 2 3 4 8 > /dev/null 2>&1 && fail "coll-list: a root outside the remote group"
# Gather and Scatter: a group of 3 against one of 2; the root's side moves
# the other group's blocks (2 x 32 B) in one message, and the other side
# gathers or scatters its own (3 x 32 B) at its rank 0 (linear at 3 ranks:
# a blocking receive or send a round).
expect "gather, the sending group" "$(listed -s 2 gather inter 3 1 4 8)" \
  "R 1 0 0;R 2 0 1;S 0 r1 2 96;S 1 0 0 32;S 2 0 0 32;"
expect "gather, at the root: one receive of the remote group's blocks" "$(listed 3 gather inter 2 root 4 8)" \
  "R r0 0 0 96;R r0 1 0 96;"
expect "scatter, from the root" "$(listed 3 scatter inter 2 root 4 8)" "S 0 r0 0 96;S 1 r0 0 96;"
expect "scatter, the receiving group" "$(listed -s 2 scatter inter 3 1 4 8)" \
  "R 0 1 0;R 0 2 0;R r1 0 0 96;S 0 1 1 32;S 0 2 2 32;"
expect "alltoall: each rank's one round" "$(listed 3 alltoall inter 2 0 4 8)" \
  "R r0 0 0 32;R r1 0 0 32;R r2 0 0 32;S 0 r0 0 32;S 0 r1 0 32;S 0 r2 0 32;R r0 1 0 32;R r1 1 0 32;R r2 1 0 32;S 1 r0 0 32;S 1 r1 0 32;S 1 r2 0 32;"
"$COLL_LIST" -i 3 gather inter 2 none 4 8 > "$WORK/gn"
expect "gather, MPI_PROC_NULL: nothing" "$(cat "$WORK/gn")" "alg 15 inter"
# Allgather, a group of 2 against one of 3 whose blocks are 16 B: rank 1
# gathers to 0 (32 B), rank 0 swaps with remote rank 0 (64 B for 48) and
# broadcasts the 48 B to rank 1.
expect "allgather" "$(listed 3 allgather inter 2 0 4 8 16)" "R 1 0 0;R r0 0 1 48;S 0 r0 1 64;S 0 1 2 48;S 1 0 0 32;R 0 1 1;"
# Reduce_scatter_block, a group of 2 against one of 3: both ranks send
# their 64 B to remote rank 0; rank 0 swaps with it, takes remote ranks 1
# and 2 in turn, and sends rank 1 its 32 B.
expect "reduce_scatter_block" "$(listed 3 reduce_scatter_block inter 2 0 4 8)" \
  "R r0 0 0 64;S 0 r0 0 64;R r1 0 1 64;R r2 0 2 64;S 0 1 3 32;S 1 r0 0 64;R 0 1 1;"
# Alltoallv, a group of 3 against one of 2: 0 B to remote rank 0 and 32 B
# to rank 1, 16 B from remote rank 0 and none from 1: no message of 0 bytes
# either way (each local rank listed with these sizes).
expect "alltoallv" "$(listed 2 alltoallv inter 3 none 1 1 0 32 16 0)" \
  "R r0 0 0 16;S 0 r1 0 32;R r0 1 0 16;S 1 r1 0 32;R r0 2 0 16;S 2 r1 0 32;"
# Reduce_scatter, a group of 2 (receiving 24 B and 40 B) against one of 3:
# the Reduce_scatter_block's rounds with the sum, 64 B, and rank 1's 40 B.
expect "reduce_scatter" "$(listed 3 reduce_scatter inter 2 none 1 1 24 40)" \
  "R r0 0 0 64;S 0 r0 0 64;R r1 0 1 64;R r2 0 2 64;S 0 1 3 40;S 1 r0 0 64;R 0 1 1;"
"$COLL_LIST" -i 3 reduce_scatter inter 2 none 1 1 24 > /dev/null 2>&1 &&
  fail "coll-list: a Reduce_scatter with a size short"
# Gatherv, a group of 2 (16 B and 32 B) against one of 3: rank 1 sends
# rank 0 its count (4 B), then its 32 B; rank 0 sends the 48 B to the root,
# remote rank 1.  At the root: one receive of them, from remote rank 0.
expect "gatherv, the sending group" "$(listed 3 gatherv inter 2 1 1 1 16 32 0 0 0)" \
  "R 1 0 0;R 1 0 1;S 0 r1 2 48;S 1 0 0 4;S 1 0 1 32;"
expect "gatherv, at the root" "$(listed 2 gatherv inter 3 root 1 1 0 0 0 16 32)" \
  "R r0 0 0 48;R r0 1 0 48;R r0 2 0 48;"
# Scatterv: the root sends remote rank 0 the counts (2 x 4 B), then the
# 48 B, and rank 0 sends rank 1 its 32 B
expect "scatterv, from the root" "$(listed 2 scatterv inter 1 root 1 1 0 16 32)" "S 0 r0 0 8;S 0 r0 1 48;"
expect "scatterv, the receiving group" "$(listed 3 scatterv inter 2 1 1 1 16 32 0 0 0)" \
  "R r1 0 0 8;R r1 0 1 48;S 0 1 2 32;R 0 1 0;"
# Allgatherv, a group of 2 (16 B, 32 B) against one of 3 (8 B, 24 B, 40 B):
# the Gatherv's two steps to rank 0, which swaps 48 B for 72 B with remote
# rank 0 and sends the 72 B on to rank 1
expect "allgatherv" "$(listed 3 allgatherv inter 2 0 1 1 16 32 8 24 40)" \
  "R 1 0 0;R 1 0 1;R r0 0 2 72;S 0 r0 2 48;S 0 1 3 72;S 1 0 0 4;S 1 0 1 32;R 0 1 2;"
"$COLL_LIST" -i 3 allgatherv inter 2 0 1 1 16 32 8 24 > /dev/null 2>&1 &&
  fail "coll-list: an Allgatherv with a size short"
# The I-forms (nbc: libnbc's), a group of 3 against one of 2.  Ibarrier:
# rank 0 hears from remote rank 1, swaps with remote rank 0, then lets
# remote rank 1 go; ranks 1 and 2 swap with remote rank 0.
expect "ibarrier" "$(listed 2 barrier nbc 3 0 0 1)" \
  "R r1 0 0 0;R r0 0 0 0;S 0 r0 0 0;S 0 r1 1 0;R r0 1 0 0;S 1 r0 0 0;R r0 2 0 0;S 2 r0 0 0;"
# Iallreduce: rank 0 swaps with remote rank 0, takes remote rank 1's,
# swaps the sums, and sends remote rank 1 its own group's
expect "iallreduce" "$(listed 2 allreduce nbc 3 0 4 8)" \
  "R r0 0 0 32;S 0 r0 0 32;R r1 0 1 32;R r0 0 2 32;S 0 r0 2 32;S 0 r1 3 32;R r0 1 0 32;S 1 r0 0 32;R r0 2 0 32;S 2 r0 0 32;"
# Ireduce_scatter_block: every rank sends remote rank 0 its 96 B; rank 0
# takes remote rank 0's and rank 1's, then sends ranks 1 and 2 their blocks
expect "ireduce_scatter_block" "$(listed 2 reduce_scatter_block nbc 3 0 4 8)" \
  "R r0 0 0 96;S 0 r0 0 96;R r1 0 1 96;S 0 1 2 32;S 0 2 2 32;R 0 1 0;S 1 r0 0 96;R 0 2 0;S 2 r0 0 96;"
# Ireduce at the root: remote ranks 0 and 1 in one round, then 2
expect "ireduce, at the root" "$(listed 3 reduce nbc 2 root 4 8)" \
  "R r0 0 0 32;R r1 0 0 32;R r2 0 1 32;R r0 1 0 32;R r1 1 0 32;R r2 1 1 32;"
# Iallgatherv with empty blocks: no receive of 0 bytes, no send of nothing
expect "iallgatherv" "$(listed 3 allgatherv nbc 2 0 1 1 0 0 8 0 40)" \
  "R r0 0 0 8;R r2 0 0 40;R r0 1 0 8;R r2 1 0 40;"
# Nothing to move: Open MPI's MPI layer returns before coll/inter runs
# (Alltoall and Barrier have no such test there).  Groups of 4 and 3.
for op in bcast reduce allreduce gather scatter allgather reduce_scatter_block reduce_scatter alltoall barrier; do
  "$SYNTH" intercomm "$WORK/z$op" --ranks 7 --op $op --bytes 0 --comp 1000 > /dev/null || fail "synth intercomm --op $op --bytes 0"
  predict "$WORK/z$op"
  case $op in
  alltoall | barrier) [ "$(q "d['simulator']['messages']")" -gt 0 ] || fail "a 0-byte $op sent nothing" ;;
  *) expect "0-byte $op: messages, run time" "$(q "d['simulator']['messages'], d['predicted_ps']")" "0 $((1000 * 1000))" ;;
  esac
done
exit 0
