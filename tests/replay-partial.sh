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
# The plan's representatives follow the recorded timings, so which ranks it
# replays varies from run to run: read back the first one it did.
rank=$(echo "$runs" | cut -d' ' -f1 | cut -d, -f1 | cut -d- -f1)
"$PHANTOM" stats "$T/replay/part" --rank "$rank" > "$WORK/stats" 2>&1 || fail "phantom stats: $(cat "$WORK/stats")"
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
# The other ranks' first 5 iterations join rank 1's in "five", and the
# prediction scales them up to the whole run (PHANTOM Section 5.4.2), as
# doc/replay.md §4 says, restated here: units the replay measured as they
# are; the rest of the loop is the host's units, each times the ratio
# replayed/host at its position in the loop over the iterations replayed;
# units after the loop are the host's, times the replayed/recorded ratio of
# the part replayed.  Host units are the recorded gaps less the recorder's
# own part of each (meta.json clock.probe_gap_ns); the replay took its own
# off its units.
"$PHANTOM" replay "$T" --ranks 0,2-3 --isolated --plan "$WORK/plan.json" --iterations 5 --name five \
  -- "$prog" 256 100 > "$WORK/rep" 2>&1 || { cat "$WORK/rep"; fail "--iterations 5 of ranks 0,2-3"; }
"$PHANTOM" predict "$T" --platform "$top_srcdir/platforms/shm-2core-local.conf" --comp five --json \
  > "$WORK/p.json" || fail "phantom predict --comp five"
"$PHANTOM" dump "$T" --json > "$WORK/host.jsonl" &&
  "$PHANTOM" dump "$T/replay/five" --json > "$WORK/rep.jsonl" 2> "$WORK/dump.err" || fail "phantom dump"
# a partial replay's streams end early, and say why
[ "$(grep -c 'no end record (a partial replay: it stops after the iterations planned)' "$WORK/dump.err")" = 4 ] ||
  fail "dump of a partial replay: $(cat "$WORK/dump.err")"
python3 - "$WORK/p.json" "$WORK/host.jsonl" "$WORK/rep.jsonl" "$T/replay/five/meta.json" "$T/meta.json" <<'PY' ||
import json, sys
pred, host_f, rep_f, meta = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], json.load(open(sys.argv[4]))
probe = int(json.load(open(sys.argv[5]))['clock']['probe_gap_ns'] + 0.5)
if pred['host_probe_gap_ns'] != probe: sys.exit(f"predict took {pred['host_probe_gap_ns']} ns off, not {probe}")
def units(path, probe):
    ev = {}
    for l in open(path):
        e = json.loads(l)
        if 'op' in e: ev.setdefault(e['rank'], []).append(e)
    return {r: [0] + [max(0, b['t_entry'] - a['t_exit'] - probe) for a, b in zip(es, es[1:])] for r, es in ev.items()}
host, rep = units(host_f, probe), units(rep_f, 0)
per = {r['rank']: r for one in meta['replay']['replays'] for r in one['per_rank']}
for pr in pred['ranks']:
    r = pr['rank']
    m, got, loop = per[r], rep[r], per[r]['loop']
    if m['recorded_computation_ns'] != sum(host[r][:len(got)]):
        sys.exit(f"rank {r}: recorded computation {m['recorded_computation_ns']}, the units say {sum(host[r][:len(got)])}")
    ratio = m['computation_ns'] / m['recorded_computation_ns']
    first, period = (loop['start'] + 1, loop['period']) if loop else (0, 0)
    pos = {}
    if loop:  # replayed over host, per position, over the iterations replayed
        end = min(first + loop['iterations_replayed'] * period, len(got))
        for p in range(period):
            ks = range(first + p, end, period)
            h = sum(host[r][k] for k in ks)
            pos[p] = sum(got[k] for k in ks) / h if h else ratio
    total = 0
    for k, h in enumerate(host[r]):
        if k < len(got):
            u = got[k]
        elif loop and first <= k <= loop['start'] + loop['iterations'] * period:
            u = round(h * pos[(k - first) % period])
        else:
            u = round(h * ratio)
        total += u
    if abs(pr['comp_ps'] - pr['startup_ps'] - total * 1000) > len(host[r]) * 1000:
        sys.exit(f"rank {r}: predicted computation {pr['comp_ps']} ps, the model says {total * 1000}")
    print(f"rank {r}: {len(got)} of {len(host[r])} units replayed, whole run {total / 1e6:.2f} ms")
PY
  fail "predict --comp five does not scale the partial replay up as documented"

# record --plan: a subgroup log of the first 3 iterations only (the events
# stay whole); the replay of that subgroup stops where the log does, without
# --plan, and says it covered 3 of the loop's iterations.
first=$(echo "$runs" | cut -d' ' -f1)
"$PHANTOM" record --log-ranks "$first" --plan "$WORK/plan.json" --iterations 3 -o "$WORK/p3.trace" \
  -- mpirun --oversubscribe -np 4 "$prog" 256 100 > "$WORK/rec" 2>&1 || { cat "$WORK/rec"; fail "record --plan"; }
[ ! -e "$WORK/p3.trace/.log-until" ] || fail "record --plan left its .log-until file"
"$PHANTOM" replay "$WORK/p3.trace" --ranks "$first" --name p3 -- "$prog" 256 100 > "$WORK/rep" 2>&1 ||
  { cat "$WORK/rep"; fail "replay of a recording with a partial log"; }
python3 - "$WORK/p3.trace" "$WORK/plan.json" "$T" <<'PY' || fail "the replay of a partial log did not stop where the log does"
import json, os, sys
trace, plan, full = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
meta = json.load(open(trace + '/meta.json'))
part = meta['partial']
if (part['iterations'], part['log_only']) != (3, True): sys.exit(f'meta.json partial: {part}')
res = json.load(open(trace + '/replay/p3/meta.json'))['replay']['replays'][0]
for pr in res['per_rank']:
    it = plan['groups'][plan['rank_group'][pr['rank']]]['iterations']
    stop = it['start'] + 3 * it['period']
    if pr['events'] != stop + 1 or pr['end'] != 'partial' or pr['recorded_events'] != 512:
        sys.exit(f"rank {pr['rank']}: {pr['events']} events ({pr['end']}), expected {stop + 1} (partial)")
    if {'rank': pr['rank'], 'stop': stop, 'start': it['start'], 'period': it['period'],
        'iterations': it['iterations']} not in part['ranks']:
        sys.exit(f"rank {pr['rank']}: not in meta.json partial.ranks {part['ranks']}")
if res['iterations'] != {'replayed': 3, 'total': part['total_iterations']}:
    sys.exit(f"iterations {res['iterations']}")
# 3 of 100 iterations logged: far less than the whole run's log of the same rank
r = res['per_rank'][-1]['rank']
small, whole = (os.path.getsize(f'{d}/rank-{r:06d}.log') for d in (trace, full))
if small * 4 > whole: sys.exit(f'rank {r}: the partial log is {small} bytes, the whole one {whole}')
PY
"$PHANTOM" replay "$WORK/p3.trace" --ranks "$first" --plan "$WORK/plan.json" --iterations 5 --name p5 \
  -- "$prog" 256 100 > "$WORK/rep" 2>&1 && fail "replayed 5 iterations from a log of 3"
grep -q "message log ends at event" "$WORK/rep" || fail "unclear error for a log too short: $(cat "$WORK/rep")"
"$PHANTOM" record --plan "$WORK/plan.json" -o "$WORK/x.trace" -- true > /dev/null 2> "$WORK/err" &&
  fail "record --plan without --log"
grep -q -- "--plan needs --log" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"
# a plan of 4 ranks for a job of 2: recorded, with a warning
"$PHANTOM" record --log --plan "$WORK/plan.json" --iterations 1 -o "$WORK/two.trace" \
  -- mpirun --oversubscribe -np 2 "$prog" 256 20 > /dev/null 2> "$WORK/err" || fail "record --plan of another size"
grep -q "the plan is for 4 ranks, the job had 2" "$WORK/err" || fail "no warning for a plan of 4 ranks: $(cat "$WORK/err")"

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
echo "replay-partial: plan runs ($runs) stop after their iterations; a log of 3 iterations replays 3; a cut recording replays to its end"
