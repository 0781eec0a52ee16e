#!/bin/sh
# Exact data replay in subgroups: the ranks of a subgroup run together,
# exchanging their own messages through real MPI (wildcard receives matched
# as recorded), and take only what came from outside from the log.  From a
# full log (record --log) for several subgroups, and from a subgroup log
# recorded for exactly that set (record --log-ranks).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
for src in p2p.c nonblocking.c collectives.c comms.c imbalance.c timed.c fortran.f90 fortran08.f90; do
  prog=$(cd "$WORK" && build_prog "$src")
  name=${src%.*}
  PH_IMB_UNIT=2000 record "$name" "$prog" 4 --log
  # timed.c broadcasts rank 0's time(): replay in another second than recorded
  [ "$name" != timed ] || sleep 1
  for set in 0-1 2-3 0,2 0-3; do
    PH_IMB_UNIT=2000 replay_same "$name" "$prog" "$set" --name "sub$set"
  done
  PH_IMB_UNIT=2000 record "$name" "$prog" 4 --log-ranks 1,3
  PH_IMB_UNIT=2000 replay_same "$name" "$prog" 1,3 --name sub
done
echo "replay-subgroup: subgroups of 7 programs print the recorded checksums, from full and subgroup logs"
