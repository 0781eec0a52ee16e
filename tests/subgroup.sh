#!/bin/sh
# Subgroup record (--log-ranks 0-1 at 4 ranks): only ranks 0 and 1 have a
# message log, and it holds exactly the data that entered {0,1} from ranks 2
# and 3: every received message from outside, no message from inside, and
# collective outputs only on communicators with a member outside the set.
. "$top_srcdir/tests/lib.sh"
for src in p2p.c nonblocking.c collectives.c; do
  prog=$(cd "$WORK" && build_prog "$src")
  t="$WORK/${src%.c}.trace"
  "$PHANTOM" record --log-ranks 0-1 -o "$t" -- mpirun --oversubscribe -np 4 "$prog" > "$WORK/out" 2>&1 \
    || { cat "$WORK/out"; fail "$src under phantom record --log-ranks"; }
  for r in 2 3; do [ ! -e "$t/rank-00000$r.log" ] || fail "$src: rank $r is outside the set but has a log"; done
  for r in 0 1; do [ -s "$t/rank-00000$r.log" ] || fail "$src: rank $r has no log"; done
  "$PHANTOM" dump "$t" --json --log > "$WORK/d.jsonl"
  python3 - "$WORK/d.jsonl" "$src" <<'PY' || fail "$src: subgroup log content"
import json, sys
inside = {0, 1}
comms, n = {0: [0, 1, 2, 3]}, 0
def die(m): print("FAIL:", sys.argv[2], m); sys.exit(1)
# the logged data: not the clock values (MPI_Wtime, time, clock_gettime) logged with it
def data(e): return [l for l in e.get("log", []) if "slot" in l]
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "comm_def" in e:
        comms[e["comm_def"]] = e["members"] + e.get("remote", [])
        continue
    if e["rank"] not in inside:
        if data(e): die(f"rank {e['rank']} logged data")
        continue
    logged = {l["slot"]: l for l in data(e)}
    # (slot, status) of every completed receive of this event
    done = []
    if e["op"] in ("MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Mrecv"):
        done = [(0, e["status"])]
    elif "completed" in e:  # Waitsome/Testsome: statuses follow the completed list
        done = [(i, s) for i, s in zip(e["completed"], e["statuses"]) if s]
    elif e.get("statuses") is not None:
        done = [(i, s) for i, s in enumerate(e["statuses"]) if s]
    elif e["op"] in ("MPI_Wait", "MPI_Test") and e.get("status"):
        done = [(0, e["status"])]
    elif e["op"] in ("MPI_Waitany", "MPI_Testany") and e.get("status"):
        done = [(e["index"], e["status"])]
    for slot, s in done:
        if s["source_world"] < 0:
            continue
        outside = s["source_world"] not in inside
        if outside and s["bytes"] > 0 and slot not in logged:
            die(f"rank {e['rank']} seq {e['seq']}: message from {s['source_world']} not logged")
        if not outside and slot in logged:
            die(f"rank {e['rank']} seq {e['seq']}: message from inside the set was logged")
        n += outside
    if e["op"] in ("MPI_Allreduce", "MPI_Alltoall", "MPI_Allgather"):
        if set(comms[e["comm"]]) <= inside and data(e): die(f"collective inside the set logged: {e}")
        if not set(comms[e["comm"]]) <= inside and e["bytes"] and not data(e):
            die(f"collective with outside members not logged: {e}")
        n += not set(comms[e["comm"]]) <= inside
print("subgroup:", sys.argv[2], "ok,", n, "messages and collectives from outside checked")
PY
done
