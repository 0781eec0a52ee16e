#!/bin/sh
# spawn.sh - a job that starts processes with MPI_Comm_spawn
# (tests/progs/spawns.c).  Recorded, it must finish as it does bare, with
# the same lines.  The spawned processes record nothing: their own
# MPI_COMM_WORLD has ranks 0 and 1 too, and they used to write over the
# job's rank files (the trace then read as corrupt).  A rank stops
# recording at its first call on a communicator that reaches them, which a
# trace cannot hold (it used to write their MPI_UNDEFINED world ranks as
# members), and says why in its stream; its events before stay, exactly.
# phantom replay refuses such a trace with one line: a spawned process
# would wait forever on a rank that stopped where its recording did.
. "$top_srcdir/tests/lib.sh"
need mpirun
need python3
prog=$(build_prog spawns.c)
mpirun_n 2 "$prog" > "$WORK/bare" 2>&1 || { cat "$WORK/bare"; fail "bare run of spawns.c"; }
rc=0
timeout 120 "$PHANTOM" record --log -o "$WORK/sp.trace" -- mpirun --oversubscribe -np 2 "$prog" \
  > "$WORK/rec.out" 2> "$WORK/rec.err" || rc=$?
[ $rc -eq 0 ] || fail "the recorded run exited $rc: $(cat "$WORK/rec.err")"
printf 'child 0 got 100\nchild 1 got -1\nparent 0 sum 201\nparent 1 sum 201\n' > "$WORK/want"
for run in bare rec.out; do
  grep -E '^(parent|child) ' "$WORK/$run" | sort | cmp -s - "$WORK/want" || fail "$run printed: $(cat "$WORK/$run")"
done
[ "$(grep -c 'the processes this job started with MPI_Comm_spawn are not recorded' "$WORK/rec.err")" -eq 1 ] ||
  fail "the spawned processes did not say once that they are not recorded: $(cat "$WORK/rec.err")"
for r in 0 1; do
  grep -q "^phantom: rank $r: a communicator reaches processes outside MPI_COMM_WORLD" "$WORK/rec.err" ||
    fail "rank $r did not say why it stopped recording: $(cat "$WORK/rec.err")"
done
[ "$(cd "$WORK/sp.trace" && echo *)" = "meta.json rank-000000.evt rank-000000.log rank-000001.evt rank-000001.log" ] ||
  fail "the trace holds $(cd "$WORK/sp.trace" && echo *)"
"$PHANTOM" dump "$WORK/sp.trace" --json > "$WORK/d.jsonl" 2> "$WORK/d.err" || fail "dump: $(cat "$WORK/d.err")"
[ "$(grep -c 'no end record (a communicator reaches processes outside MPI_COMM_WORLD' "$WORK/d.err")" -eq 2 ] ||
  fail "the streams do not say why they end: $(cat "$WORK/d.err")"
python3 - "$WORK/d.jsonl" <<'PY' || fail "the events before the spawned processes are wrong"
import json, sys
ops = {0: [], 1: []}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e:
        ops[e["rank"]].append(e["op"])
# rank 0 stops at its Send to a child, rank 1 at the Comm_disconnect
want = {0: ["MPI_Init", "MPI_Barrier"], 1: ["MPI_Init", "MPI_Barrier", "MPI_Allreduce"]}
if ops != want:
    print(f"FAIL: events {ops}, want {want}"); sys.exit(1)
PY
echo "spawn: recorded as the bare run ran; the spawned processes not, the ranks up to them"
for how in "--ranks 0-1" "--ranks 0 --isolated"; do
  rc=0
  # shellcheck disable=SC2086 # the options are words
  timeout 60 "$PHANTOM" replay "$WORK/sp.trace" $how --launcher "mpirun --oversubscribe" -- "$prog" \
    > "$WORK/rep.out" 2> "$WORK/rep.err" || rc=$?
  [ $rc -eq 1 ] && [ "$(cat "$WORK/rep.err")" = "phantom replay: $WORK/sp.trace: rank 0 started processes with \
MPI_Comm_spawn (1 call), which phantom does not record: it cannot be replayed (doc/replay.md, section 5)" ] ||
    fail "replay $how exited $rc: $(cat "$WORK/rep.err")"
done
echo "spawn: phantom replay refuses the trace in one line"
