#!/bin/sh
# app-mpi4py.sh - a Python program (mpi4py: Debian's python3-mpi4py, for
# Debian's /usr/bin/python3) under `phantom record --log` at 3 ranks, and its
# rank 1 replayed alone:
#   - the program's output (each rank's checksum of what it received) is the
#     same bare, recorded and replayed;
#   - every rank's trace is the program's calls, event by event: Init_thread
#     (mpi4py's MPI_Init), 100 x (Sendrecv of 8,000 bytes to rank+1 from
#     rank-1, tag 1; Barrier), the Sendrecv again with tag 2, an Allreduce of
#     one double, Finalize; mpi4py's own local calls (attributes, error
#     handlers) are counted, not sequenced;
#   - the isolated replay of rank 1 makes the same calls as recorded, and
#     phantom predict takes the trace.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import mpi4py' 2> /dev/null || skip "python3-mpi4py is not installed"
prog="$top_srcdir/tests/progs/ring.py"
cd "$WORK"
mpirun_n 3 "$PY" "$prog" > bare.out 2> bare.err || fail "bare run: $(tail -3 bare.err)"
[ "$(wc -l < bare.out)" -eq 3 ] || fail "bare run printed: $(cat bare.out)"
"$PHANTOM" record --log -o "$WORK/py.trace" -- mpirun --oversubscribe -np 3 "$PY" "$prog" > rec.out 2> rec.err ||
  fail "recorded run: $(tail -3 rec.err)"
sort bare.out > bare.sorted
grep -v '^phantom' rec.out | sort | cmp -s - bare.sorted || fail "recorded output: $(cat rec.out), bare: $(cat bare.out)"
! grep -v '^phantom record: ' rec.err | grep -q '^phantom' || fail "the recorder warned: $(grep '^phantom' rec.err)"

"$PHANTOM" dump "$WORK/py.trace" --json > dump.jsonl || fail "phantom dump"
python3 - dump.jsonl <<'PY' || fail "the recorded calls are not ring.py's"
import json, sys
events = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e:
        events.setdefault(e["rank"], []).append(e)
if sorted(events) != [0, 1, 2]: sys.exit(f"ranks {sorted(events)}")
def sendrecv(me, tag):
    return {"op": "MPI_Sendrecv", "peer_world": (me + 1) % 3, "tag": tag, "bytes": 8000,
            "rpeer_world": (me - 1) % 3, "rtag": tag, "rbytes": 8000,
            "status": {"source_world": (me - 1) % 3, "tag": tag, "bytes": 8000}}
for me, got in events.items():
    want = [{"op": "MPI_Init_thread"}]
    for i in range(100):
        want += [sendrecv(me, 1), {"op": "MPI_Barrier", "comm": 0}]
    want += [sendrecv(me, 2), {"op": "MPI_Allreduce", "comm": 0, "bytes": 8}, {"op": "MPI_Finalize"}]
    if len(got) != len(want): sys.exit(f"rank {me}: {len(got)} events, want {len(want)}")
    for k, (e, w) in enumerate(zip(got, want)):
        have = {f: ({g: e[f].get(g) for g in w[f]} if isinstance(w[f], dict) else e.get(f)) for f in w}
        if have != w: sys.exit(f"rank {me}, event {k}: {have}, want {w}")
print(f"ok: 3 ranks x {len(want)} events as ring.py makes them")
PY

"$PHANTOM" replay "$WORK/py.trace" --ranks 1 --isolated --name alone -- "$PY" "$prog" > rep.out 2> rep.err ||
  fail "isolated replay of rank 1: $(tail -3 rep.err)"
want=$(grep '^1 ' bare.out) got=$(grep '^1 ' rep.out)
[ -n "$want" ] && [ "$want" = "$got" ] || fail "rank 1's checksum: bare '$want', replayed '$got'"
for t in py.trace py.trace/replay/alone; do
  "$PHANTOM" dump "$WORK/$t" --rank 1 --json | grep '"op"' | sed 's/"t_entry":[0-9]*,"t_exit":[0-9]*,//' > "$(basename "$t").ev"
done
cmp -s py.trace.ev alone.ev || fail "the replay of rank 1 made other calls than recorded"
"$PHANTOM" predict "$WORK/py.trace" --platform "$top_srcdir/platforms/ib-qdr.conf" --json > pred.json ||
  fail "phantom predict"
echo "ok: mpi4py ring, 3 ranks: recorded, replayed (rank 1: $got), predicted"
