#!/bin/sh
# Record each test program of tests/progs at 2 and 4 ranks with its message
# log, and check the trace event by event, and every logged payload byte for
# byte (by hash), against what the program says it did (its oracle, written
# by tests/progs/oracle.h when PH_EXPECT is set).  The 4-rank runs use 1 KiB
# blocks, so that records and request ids cross many block boundaries.  The
# Fortran programs' local calls must be counted exactly as made.
. "$top_srcdir/tests/lib.sh"
# The Fortran programs' local calls, which Open MPI's Fortran bindings pass
# to PMPI_* directly: each rank's counts must be exactly the program's.
fortran_counted() { # TRACE WHAT
  "$PHANTOM" stats "$1" --json > "$WORK/counted.json" || fail "phantom stats $2"
  python3 - "$WORK/counted.json" "$2" <<'PY' || fail "$2: local calls not counted as made"
import json, sys
want = {"MPI_Comm_rank": 2, "MPI_Comm_size": 2, "MPI_Comm_group": 2, "MPI_Get_count": 7,
        "MPI_Type_contiguous": 2, "MPI_Type_commit": 2, "MPI_Type_free": 2, "MPI_Group_incl": 1,
        "MPI_Group_free": 4, "MPI_Group_size": 1, "MPI_Group_compare": 1,
        "MPI_Group_range_excl": 1, "MPI_Topo_test": 1}
for rk in json.load(open(sys.argv[1]))["ranks"]:
    got = {k: v["calls"] for k, v in rk["counted"].items()}
    if got != want:
        sys.exit(f"{sys.argv[2]}: rank {rk['rank']}: counted {got}, the program made {want}")
PY
}
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
    python3 - "$WORK/$name-$n.jsonl" <<'PY' || fail "$name at $n ranks: no start-up on MPI_Init"
import json, sys
first = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e:
        first.setdefault(e["rank"], e)
# C and Fortran alike: the process's CPU time before it (tests/startup.sh checks its value)
bad = {r: e for r, e in first.items() if not (e["op"].startswith("MPI_Init") and 0 < e.get("startup_ns", 0) < 10**10)}
if bad:
    sys.exit(f"first events without a plausible start-up: {bad}")
PY
    python3 "$top_srcdir/tests/check_trace.py" "$exp" "$WORK/$name-$n.jsonl" --log \
      || fail "$name at $n ranks: trace differs from what the program did"
    case $name in fortran*) fortran_counted "$t" "$name at $n ranks" ;; esac
  done
done
echo "events: all programs match their oracles at 2 and 4 ranks"
