#!/bin/sh
# MPI_THREAD_MULTIPLE: four threads per rank call MPI concurrently.  Every call
# must be in the trace exactly once, each receive with its own thread's tag,
# and every request completed by the Waitall that its thread called.
. "$top_srcdir/tests/lib.sh"
prog=$(cd "$WORK" && mpicc -g -O1 -o threads "$top_srcdir/tests/progs/threads.c" -lpthread && echo "$WORK/threads")
"$PHANTOM" record --log -o "$WORK/t.trace" -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "threads under phantom record"; }
grep -q "no MPI_THREAD_MULTIPLE" "$WORK/out" && skip "this Open MPI has no MPI_THREAD_MULTIPLE"
"$PHANTOM" dump "$WORK/t.trace" --json --log > "$WORK/d.jsonl"
python3 - "$WORK/d.jsonl" "$WORK/out" <<'PY'
import json, re, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"op"' in l]
calls = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"rank (\d+) calls (\d+)", open(sys.argv[2]).read())}
def die(m): print("FAIL:", m); sys.exit(1)
for r in (0, 1):
    mine = [e for e in ev if e["rank"] == r]
    if len(mine) != calls[r]: die(f"rank {r}: {len(mine)} events, the program made {calls[r]} calls")
    ops = {}
    for e in mine: ops[e["op"]] = ops.get(e["op"], 0) + 1
    want = {"MPI_Init_thread": 1, "MPI_Finalize": 1, "MPI_Barrier": 1, "MPI_Sendrecv": 800,
            "MPI_Irecv": 800, "MPI_Isend": 800, "MPI_Waitall": 800}
    if ops != want: die(f"rank {r}: ops {ops}")
    created = {}
    for e in mine:
        if "newreq" in e: created[e["newreq"]] = e
    done = set()
    for e in mine:
        if e["op"] == "MPI_Sendrecv" and (e["status"]["tag"] != e["tag"] or e["status"]["bytes"] != 256):
            die(f"rank {r}: sendrecv status {e}")
        if e["op"] == "MPI_Waitall":
            a, b = (created.get(i) for i in e["reqs"])
            if not a or not b or a["op"] != "MPI_Irecv" or b["op"] != "MPI_Isend" or a["tag"] != b["tag"]:
                die(f"rank {r}: Waitall {e['reqs']} does not complete one thread's Irecv+Isend")
            if e["statuses"][0]["tag"] != a["tag"]: die(f"rank {r}: status tag {e['statuses'][0]}")
            if any(i in done for i in e["reqs"]): die(f"rank {r}: request completed twice")
            done.update(e["reqs"])
            # the data only: under ASan its allocator's clock reads, made in this thread, are logged too
            data = [l for l in e.get("log", []) if "slot" in l]
            if len(data) != 1 or data[0]["len"] != 256: die(f"rank {r}: log of Waitall {e.get('log')}")
print("threads: ok")
PY
