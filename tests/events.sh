#!/bin/sh
# Record each test program of tests/progs at 2 and 4 ranks with its message
# log, and check the trace event by event, and every logged payload byte for
# byte (by hash), against what the program says it did (its oracle, written
# by tests/progs/oracle.h when PH_EXPECT is set).  The 4-rank runs use 1 KiB
# blocks, so that records and request ids cross many block boundaries.
. "$top_srcdir/tests/lib.sh"
progs="p2p.c nonblocking.c collectives.c comms.c imbalance.c fortran.f90 fortran08.f90"
for src in $progs; do
  prog=$(cd "$WORK" && build_prog "$src")
  name=${src%.*}
  for n in 2 4; do
    t="$WORK/$name-$n.trace" exp="$WORK/$name-$n.expect"
    blk=1024; [ "$n" = 4 ] && blk=1
    PH_EXPECT="$exp" PHANTOM_BLOCK_KB=$blk "$PHANTOM" record --log -o "$t" -- \
      mpirun --oversubscribe -np "$n" "$prog" > "$WORK/$name-$n.out" 2>&1 \
      || { cat "$WORK/$name-$n.out"; fail "$name at $n ranks exited non-zero under phantom record"; }
    grep -q FAIL "$WORK/$name-$n.out" && fail "$name at $n ranks: the program's own check failed"
    "$PHANTOM" dump "$t" --json --log > "$WORK/$name-$n.jsonl" || fail "phantom dump $name-$n"
    python3 "$top_srcdir/tests/check_trace.py" "$exp" "$WORK/$name-$n.jsonl" --log \
      || fail "$name at $n ranks: trace differs from what the program did"
  done
done
echo "events: all programs match their oracles at 2 and 4 ranks"
