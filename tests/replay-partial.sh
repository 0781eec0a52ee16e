#!/bin/sh
# Partial replay (PHANTOM Section 5.4.2): with a plan of phantom cluster,
# each subgroup run of the plan replays only the first iterations of its
# ranks' loops, stops cleanly, and records how much it covered; the runs
# gather into one result, which phantom stats reads and phantom predict
# extends to the whole run.  A recording cut short is replayed up to its end.
. "$top_srcdir/tests/lib.sh"
prog=$(cd "$WORK" && build_prog stencil.c)
T="$WORK/st.trace"
"$PHANTOM" record --log -o "$T" -- mpirun --oversubscribe -np 4 "$prog" 256 100 > "$WORK/rec" 2>&1 ||
  fail "recording the stencil"
"$PHANTOM" cluster "$T" --ppn 2 -o "$WORK/plan.json" > "$WORK/cluster.out" 2>&1 ||
  fail "phantom cluster: $(cat "$WORK/cluster.out")"
runs=$(python3 -c 'import json, sys; print(" ".join(r["ranks"] for r in json.load(open(sys.argv[1]))["runs"]))' \
  "$WORK/plan.json")
[ -n "$runs" ] || fail "the plan has no replay runs"
for run in $runs; do
  timeout 300 "$PHANTOM" replay "$T" --ranks "$run" --plan "$WORK/plan.json" --name part -- "$prog" 256 100 \
    > "$WORK/rep" 2>&1 || { cat "$WORK/rep"; fail "partial replay of ranks $run"; }
done
python3 - "$T" "$WORK/plan.json" <<'PY' || fail "the partial replays do not cover what the plan says"
import json, sys
trace, plan = sys.argv[1], json.load(open(sys.argv[2]))
meta = json.load(open(trace + '/replay/part/meta.json'))
seen = set()
for one, run in zip(meta['replay']['replays'], plan['runs']):
    r_it = run['replay_iterations']
    for pr in one['per_rank']:
        it = plan['groups'][plan['rank_group'][pr['rank']]]['iterations']
        seen.add(pr['rank'])
        if r_it is None or r_it >= it['iterations']:
            want, end = pr['recorded_events'], 'complete'
        else:
            want, end = it['start'] + r_it * it['period'] + 1, 'partial'
            if pr['loop'] != {'start': it['start'], 'period': it['period'],
                              'iterations_replayed': r_it, 'iterations': it['iterations']}:
                sys.exit(f"rank {pr['rank']}: loop {pr['loop']}")
        if pr['events'] != want or pr['end'] != end or pr['recorded_events'] != 512:
            sys.exit(f"rank {pr['rank']}: {pr['events']} events ({pr['end']}), expected {want} ({end})")
want = set()
for run in plan['runs']:
    for part in run['ranks'].split(','):
        lo, _, hi = part.partition('-')
        want.update(range(int(lo), int(hi or lo) + 1))
if seen != want:
    sys.exit(f'ranks replayed: {sorted(seen)}, the plan: {sorted(want)}')
PY
"$PHANTOM" stats "$T/replay/part" --rank 1 > "$WORK/stats" 2>&1 || fail "phantom stats: $(cat "$WORK/stats")"
# Every rank computes as its representative did in the replay (PHANTOM's whole flow).
"$PHANTOM" predict "$T" --platform "$top_srcdir/platforms/shm-2core-local.conf" --groups "$WORK/plan.json" \
  --comp part > "$WORK/predict" 2>&1 || fail "phantom predict --groups --comp part: $(cat "$WORK/predict")"
grep -q '^predicted run time' "$WORK/predict" || fail "no prediction: $(cat "$WORK/predict")"

# --iterations overrides the plan; a second replay of a rank in the same result is refused.
"$PHANTOM" replay "$T" --ranks 1 --isolated --plan "$WORK/plan.json" --iterations 5 --name five \
  -- "$prog" 256 100 > "$WORK/rep" 2>&1 || { cat "$WORK/rep"; fail "--iterations 5"; }
grep -Eq '^ +1 +257/512 ' "$WORK/rep" || { cat "$WORK/rep"; fail "--iterations 5: not 1 + 5 x 51 + 1 events"; }
! "$PHANTOM" replay "$T" --ranks 1 --isolated --name five -- "$prog" 256 100 > "$WORK/rep" 2>&1 ||
  fail "replaying rank 1 into a result that has it"
grep -q "rank 1 was replayed already" "$WORK/rep" || fail "no message for a rank replayed twice: $(cat "$WORK/rep")"

# A recording cut short (rank 2's stream after its third frame) replays to its end.
PHANTOM_BLOCK_KB=1 "$PHANTOM" record --log -o "$WORK/cut.trace" -- mpirun --oversubscribe -np 4 "$prog" 64 100 \
  > "$WORK/rec" 2>&1 || fail "recording with 1 KiB blocks"
python3 - "$WORK/cut.trace/rank-000002.evt" <<'PY' || fail "cannot cut the stream"
import sys
p = sys.argv[1]
d = open(p, 'rb').read()
magic, starts, i = b'\x28\xb5\x2f\xfd', [], 32
while (i := d.find(magic, i)) >= 0:
    starts.append(i)
    i += 4
if len(starts) < 5:
    sys.exit('too few frames')
open(p, 'wb').write(d[:starts[3]])
PY
n=$("$PHANTOM" dump "$WORK/cut.trace" --rank 2 --json 2>/dev/null | grep -c '"op"')
"$PHANTOM" replay "$WORK/cut.trace" --ranks 2 --isolated --name cut -- "$prog" 64 100 > "$WORK/rep" 2>&1 ||
  { cat "$WORK/rep"; fail "replay of a recording cut short"; }
grep -Eq "^ +2 +$n/$n .*end of recording" "$WORK/rep" || { cat "$WORK/rep"; fail "the cut replay did not end with the recording ($n events)"; }
echo "replay-partial: plan runs ($runs) stop after their iterations; a cut recording replays to its end"
