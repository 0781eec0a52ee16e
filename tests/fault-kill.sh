#!/bin/sh
# fault-kill.sh - a rank dies of SIGKILL mid-run (PHANTOM_FLUSH_SECS=1).
# mpirun must end as it does without phantom (same exit code as a bare run of
# the same program), and the flushed part of the trace must stay readable:
# `phantom stats` works, the killed rank has events, and phantom says that its
# stream is incomplete.  Replayed together, the ranks must stop at the same
# collective, not hang.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
need python3
prog=$(build_prog fault-loop.c)
# 3 s of ping-pong at ~100 us per iteration, then rank 1 raises SIGKILL.
set -- -k 1 -t 3 -s 100 -b 64

brc=0
mpirun_n 2 "$prog" "$@" > "$WORK/bare.out" 2> "$WORK/bare.err" || brc=$?
[ $brc -ne 0 ] || fail "bare run: the killed job exited 0"

rc=0
PHANTOM_FLUSH_SECS=1 timeout 300 "$PHANTOM" record --log -o "$WORK/trace" -- \
  mpirun --oversubscribe -np 2 "$prog" "$@" > "$WORK/rec.out" 2> "$WORK/rec.err" || rc=$?
[ $rc -eq $brc ] || fail "recorded run exited $rc, the bare run $brc: $(cat "$WORK/rec.err")"
grep -q 'rank 1 .*signal 9' "$WORK/rec.err" || fail "mpirun did not report rank 1 killed: $(cat "$WORK/rec.err")"
echo "both runs exited $rc ($(grep -m1 'signal 9' "$WORK/rec.err"))"
[ -s "$WORK/trace/rank-000001.evt" ] || fail "the killed rank left no events"

rc=0
"$PHANTOM" stats "$WORK/trace" --json > "$WORK/stats.json" 2> "$WORK/stats.err" || rc=$?
[ $rc -eq 0 ] || fail "phantom stats on the killed job's trace exited $rc: $(cat "$WORK/stats.err")"
grep -q 'warning: rank 1: .*no end record' "$WORK/stats.err" ||
  fail "phantom stats does not warn that rank 1's stream is incomplete: $(cat "$WORK/stats.err")"
python3 - "$WORK/stats.json" <<'PY' || fail "phantom stats --json on the killed job (above)"
import json, sys
s = json.load(open(sys.argv[1]))
r1 = [r for r in s['ranks'] if r['rank'] == 1][0]
print(f"phantom stats: rank 1: {r1['events']} events, complete: {r1['complete']}")
if r1['complete'] or r1['events'] <= 0:
    sys.exit('rank 1 must have events and be marked incomplete')
PY

rc=0
"$PHANTOM" dump "$WORK/trace" --json > "$WORK/dump.jsonl" 2> "$WORK/dump.err" || rc=$?
[ $rc -eq 0 ] || fail "phantom dump --json exited $rc: $(cat "$WORK/dump.err")"
python3 - "$WORK/dump.jsonl" <<'EOF' || fail "the killed rank's flushed events are wrong (above)"
import json, sys
ev = {0: [], 1: []}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if 'op' in e:
        ev[e['rank']].append(e)
for r, es in ev.items():
    print(f'rank {r}: {len(es)} events flushed, last {es[-1]["op"] if es else None}')
# Rank 1 ran 3 s and flushed at least once a second, so its first second or
# more is there: thousands of events (a Send and a Recv per 100-200 us).
n = len(ev[1])
if n < 1000:
    sys.exit(f'rank 1: only {n} events flushed in 3 s of running')
ops = [e['op'] for e in ev[1]]
if ops[0] != 'MPI_Init' or 'MPI_Finalize' in ops:
    sys.exit(f'rank 1: the stream should start at MPI_Init and have no MPI_Finalize')
idx = [e.get('seq', e.get('index')) for e in ev[1]]
if idx != list(range(n)):
    sys.exit('rank 1: event indices are not 0..n-1')
EOF

# Replayed together, the ranks stop after the last collective on
# MPI_COMM_WORLD that both recorded with their message log's records: each
# used to run to the end of its own stream, and the one whose stream ends
# later waited in an Allreduce for the other forever; past the log's end
# (its blocks are bigger, so it ends sooner) the clock reads got the real
# clock, and rank 1 killed itself again.  Alone, a rank stops where its
# log ends (past it a receive had no data and the replay failed).  Where
# each log ends is read here apart from phantom: the complete zstd frames
# (tests/zstd_frames.py), decompressed by zstd(1), record by record.
rc=0
timeout 120 "$PHANTOM" replay "$WORK/trace" --ranks 0-1 --name together --launcher "mpirun --oversubscribe" \
  -- "$prog" "$@" > "$WORK/rep.out" 2> "$WORK/rep.err" || rc=$?
together_rc=$rc
rc=0
timeout 120 "$PHANTOM" replay "$WORK/trace" --ranks 1 --isolated --name alone -- "$prog" "$@" \
  > "$WORK/alone.out" 2> "$WORK/alone.err" || rc=$?
[ $rc -eq 0 ] || fail "replaying the killed rank alone exited $rc: $(cat "$WORK/alone.err")"
for name in together alone; do
  only=; [ $name = together ] || only="--rank 1"
  [ $name = alone ] || [ $together_rc -eq 0 ] || continue # refused, checked below
  # shellcheck disable=SC2086 # the option is words
  "$PHANTOM" dump "$WORK/trace/replay/$name" --json $only > "$WORK/$name.jsonl" 2> "$WORK/$name-dump.err" ||
    fail "dump of the replay: $(cat "$WORK/$name-dump.err")"
  grep -q 'no end record (the recording it replays ends here)' "$WORK/$name-dump.err" ||
    fail "the replay's streams do not say that the recording ends: $(cat "$WORK/$name-dump.err")"
done
python3 - "$WORK" "$top_srcdir/tests" "$together_rc" <<'EOF' || fail "the replayed ranks stop in the wrong places"
import json, sys
work = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import zstd_frames
COLL = {"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Allgather",
        "MPI_Scatter", "MPI_Alltoall", "MPI_Scan", "MPI_Exscan", "MPI_Reduce_scatter_block"}
def per_rank(path):
    ev = {}
    for line in open(path):
        e = json.loads(line)
        if "op" in e:
            ev.setdefault(e["rank"], []).append(e)
    return ev
def log_last_event(path):
    """The event of the log's last record."""
    last = 0
    for _, last, _, _ in zstd_frames.log_records(path):
        pass
    return last
rec = per_rank(f"{work}/dump.jsonl")
covered = {r: log_last_event(f"{work}/trace/rank-{r:06d}.log") for r in (0, 1)}
# together: collectives whose event and the one after it the log covers
world = {r: [e["seq"] for e in rec[r] if e["op"] in COLL and e.get("comm") == 0 and e["seq"] + 1 < covered[r]]
         for r in (0, 1)}
m = min(len(w) for w in world.values())
# A log that ends before the first collective (a host so slow that its
# first flush came sooner) leaves nothing to stop at together: refused.
if m == 0 and sys.argv[3] != "0" and "share no collective on MPI_COMM_WORLD that their recordings hold whole" \
        in open(f"{work}/rep.err").read():
    print(f"logs cover {covered}: no collective in them; replaying together refused")
elif sys.argv[3] != "0":
    sys.exit("replaying both ranks exited " + sys.argv[3] + ": " + open(f"{work}/rep.err").read())
rep = per_rank(f"{work}/together.jsonl") if m else {}
for r in (0, 1) if m else ():
    # the events up to and with collective m, and the call it stops at,
    # whose computation before it the replay measured
    want = world[r][m - 1] + 2
    print(f"rank {r}: {len(rec[r])} events recorded, its log covers {covered[r]}, {len(world[r])} world "
          f"collectives in them; together replayed {len(rep[r])}, to the call after collective {m}: {want}")
    if len(rep[r]) != want or [e["op"] for e in rep[r]] != [e["op"] for e in rec[r][:want]]:
        sys.exit(f"rank {r}: replayed {len(rep[r])} events together")
if m and f"stop after collective {m} on MPI_COMM_WORLD" not in open(f"{work}/rep.err").read():
    sys.exit("phantom replay did not say where the ranks stop")
# alone: rank 1 to the event where its log ends (with it), or its stream's end
alone = per_rank(f"{work}/alone.jsonl")[1]
want = covered[1] if covered[1] < len(rec[1]) else len(rec[1])
print(f"rank 1 alone: replayed {len(alone)} events, want {want}")
if len(alone) != want or [e["op"] for e in alone] != [e["op"] for e in rec[1][:want]]:
    sys.exit(f"rank 1: replayed {len(alone)} events alone")
if want < len(rec[1]) and f"it stops at event {want - 1} of {len(rec[1])}" not in open(f"{work}/alone.err").read():
    sys.exit("phantom replay did not say where rank 1 stops alone")
EOF

# phantom predict says that the recording ends early, not that the program
# deadlocks.  (Streams that happen to end at matching calls predict.)
rc=0
timeout 120 "$PHANTOM" predict "$WORK/trace" --platform "$top_srcdir/platforms/ib-qdr.conf" \
  > "$WORK/pred.out" 2> "$WORK/pred.err" || rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 1 ] && [ -s "$WORK/pred.err" ] &&
    ! grep -v "^phantom predict: $WORK/trace: the recording ends early (rank [01]'s stream has no end record): rank [01] blocked in MPI_" "$WORK/pred.err" ||
    fail "predict on the killed job's trace exited $rc: $(cat "$WORK/pred.err")"
fi
echo "predict: $(head -c 160 "$WORK/pred.err")"
