#!/bin/sh
# Calls phantom does not sequence pass through untouched: one-sided
# communication still works, local queries are counted, the rest is counted
# as unknown, and none of them is an event.
. "$top_srcdir/tests/lib.sh"
prog=$(cd "$WORK" && build_prog unknown.c)
"$PHANTOM" record -o "$WORK/u.trace" -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "unknown.c under phantom record"; }
grep -q "rank 0 got 2 from rank 1" "$WORK/out" || fail "MPI_Put did not work under the recorder"
"$PHANTOM" stats "$WORK/u.trace" --json > "$WORK/s.json"
"$PHANTOM" dump "$WORK/u.trace" --json > "$WORK/d.jsonl"
python3 - "$WORK/s.json" "$WORK/d.jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
def die(m): print("FAIL:", m); sys.exit(1)
for rk in s["ranks"]:
    c = rk["counted"]
    want = {"MPI_Comm_rank": (3, False), "MPI_Comm_size": (1, False), "MPI_Win_create": (1, True),
            "MPI_Win_fence": (2, True), "MPI_Put": (1, True), "MPI_Win_free": (1, True)}
    for name, (calls, unknown) in want.items():
        if name not in c or c[name]["calls"] != calls or c[name]["unknown"] != unknown:
            die(f"rank {rk['rank']}: {name}: {c.get(name)} != calls {calls}, unknown {unknown}")
ops = [json.loads(l)["op"] for l in open(sys.argv[2]) if '"rank":0' in l and '"op"' in l]
if ops != ["MPI_Init", "MPI_Barrier", "MPI_Finalize"]: die(f"events: {ops}")
print("unknown-calls: ok")
PY
