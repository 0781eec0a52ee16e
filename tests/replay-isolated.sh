#!/bin/sh
# Exact data replay, every rank alone: record the test programs at 4 ranks
# with their message log, replay each rank in a job of its own (--isolated:
# every incoming message from the log) and check that it prints the recorded
# run's checksum of everything it received.  Then the result is a trace that
# phantom stats reads, with the recorded events.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
for src in p2p.c nonblocking.c collectives.c comms.c imbalance.c timed.c fortran.f90 fortran08.f90; do
  prog=$(cd "$WORK" && build_prog "$src")
  name=${src%.*}
  PH_IMB_UNIT=2000 record "$name" "$prog" 4 --log
  for r in 0 1 2 3; do
    PH_IMB_UNIT=2000 replay_same "$name" "$prog" $r --isolated --name alone
  done
done

# timed.c's clock readings are in its log, and dump shows them, in order.
"$PHANTOM" dump "$WORK/timed.trace" --rank 0 --log --json > "$WORK/timed.jsonl" || fail "dump --log of timed"
python3 - "$WORK/timed.jsonl" <<'PY' || fail "dump --log: no MPI_Wtime values, or not increasing"
import json, sys
v = [p['value'] for l in open(sys.argv[1]) if '"log"' in l for p in json.loads(l)['log'] if 'wtime' in p]
if len(v) < 100 or v != sorted(v): sys.exit(f'{len(v)} values')
PY
# ... and its one time() call per rank, but none of the MPI library's own.
for r in 0 1 2 3; do
  "$PHANTOM" dump "$WORK/timed.trace" --rank $r --log --json > "$WORK/timed.jsonl" || fail "dump --log of timed"
  python3 - "$WORK/timed.jsonl" "$WORK/timed.rec" $r <<'PY' || fail "dump --log: rank $r's time() not logged once, as printed"
import json, re, sys
v = [p['value'] for l in open(sys.argv[1]) if '"log"' in l for p in json.loads(l)['log'] if 'time' in p]
printed = {m.group(1): int(m.group(2)) for m in re.finditer(r'rank (\d+) checksum .*seed (-?\d+)', open(sys.argv[2]).read())}
if len(v) != 1: sys.exit(f'rank {sys.argv[3]}: {len(v)} time() values: {v}')
# rank 0's value is the seed every rank printed; the others' are their own, within a minute of it
if sys.argv[3] == '0' and v[0] != printed['0']: sys.exit(f'logged {v[0]}, printed {printed["0"]}')
if abs(v[0] - printed['0']) > 60: sys.exit(f'rank {sys.argv[3]}: logged {v[0]}, seed {printed["0"]}')
PY
  # ... and its clock_gettime, gettimeofday and clock() loops, each read
  # once per send and twice more (the start, the read that ended the loop;
  # clock() as the CLOCK_PROCESS_CPUTIME_ID read it makes), then the
  # 100,000 reads in one gap, in order, and none of Open MPI's own reads
  # (MPI_Wtime reads clock_gettime too).
  python3 - "$WORK/timed.jsonl" "$WORK/timed.rec" $r <<'PY' || fail "dump --log: rank $r's clock reads not logged as made"
import json, re, sys
r = sys.argv[3]
c = [p for l in open(sys.argv[1]) if '"log"' in l for p in json.loads(l)['log'] if 'clock' in p]
m = re.search(rf'rank {r} checksum \S+ \(\d+\+(\d+)\+(\d+)\+(\d+)\+\d+\+\d+ sends', open(sys.argv[2]).read())
monotonic, timeofday, cpu = int(m.group(1)), int(m.group(2)), int(m.group(3))
ids = [p['id'] for p in c]
# gettimeofday's is CLOCK_REALTIME (0), clock()'s CLOCK_PROCESS_CPUTIME_ID (2)
want = [1] * (monotonic + 2) + [0] * (timeofday + 2) + [2] * (cpu + 2) + [1] * 100000
if ids != want:
    sys.exit(f'rank {r}: clock ids {ids[:3]}... ({len(ids)}), the program read {monotonic}+2, {timeofday}+2, {cpu}+2')
for k in (0, 1, 2):
    t = [p['sec'] * 10**9 + p['nsec'] for p in c if p['id'] == k]
    if t != sorted(t): sys.exit(f'rank {r}: clock {k} went back')
PY
  # ... and its getrusage and times loops the same way, after clock()'s:
  # getrusage(RUSAGE_SELF) read once per send and twice more, then times(),
  # after the times(NULL) the program began with.
  python3 - "$WORK/timed.jsonl" "$WORK/timed.rec" $r <<'PY' || fail "dump --log: rank $r's getrusage and times not logged as made"
import json, re, sys
r = sys.argv[3]
u = [p for l in open(sys.argv[1]) if '"log"' in l for p in json.loads(l)['log'] if 'usage' in p]
m = re.search(rf'rank {r} checksum \S+ \((?:\d+\+){{4}}(\d+)\+(\d+) sends', open(sys.argv[2]).read())
rusage, times = int(m.group(1)), int(m.group(2))
calls = [(p['call'], p.get('who')) for p in u]
want = [('times', None)] + [('getrusage', 0)] * (rusage + 2) + [('times', None)] * (times + 2)
if calls != want:
    sys.exit(f'rank {r}: {len(calls)} usage records {calls[:2]}..., the program made 1 times(NULL), {rusage}+2 getrusage, {times}+2 times')
cpu = [p['utime_us'] + p['stime_us'] for p in u if p['call'] == 'getrusage']
if cpu != sorted(cpu) or cpu[-1] - cpu[0] < 3000:
    sys.exit(f'rank {r}: getrusage CPU time {cpu[0]}..{cpu[-1]} us, not increasing by the 3 ms the loop ran')
PY
done

# mpi_f08's MPI_Wtime is the C symbol MPI_Wtime: logged and answered as C's.
prog=$(cd "$WORK" && build_prog wtime08.f90)
record wtime08 "$prog" 2 --log
# ... and its calls' sites start at the program's own call, not in a frame of ours
python3 - "$WORK/wtime08.trace/meta.json" "$prog" <<'PY' || fail "mpi_f08 call sites start inside the recorder"
import json, os, sys
sites = json.load(open(sys.argv[1]))['sites']
first = {os.path.basename(s['frames'][0]['module']) for s in sites}
if len(sites) < 3 or first != {os.path.basename(sys.argv[2])}: sys.exit(f'{len(sites)} sites, first frames in {first}')
PY
replay_same wtime08 "$prog" 0 --isolated --name alone
replay_same wtime08 "$prog" 1 --isolated --name alone

# The bundled example prints a residual that depends on every halo it received.
prog=$(cd "$WORK" && build_prog stencil.c)
"$PHANTOM" record --log -o "$WORK/st.trace" -- mpirun --oversubscribe -np 4 "$prog" 64 25 \
  > "$WORK/st.rec" 2>&1 || fail "recording the stencil"
"$PHANTOM" replay "$WORK/st.trace" --ranks 0 --isolated --name alone -- "$prog" 64 25 \
  > "$WORK/st.rep" 2>&1 || { cat "$WORK/st.rep"; fail "replaying the stencil's rank 0"; }
want=$(grep '^stencil:' "$WORK/st.rec") got=$(grep '^stencil:' "$WORK/st.rep")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "stencil residual: recorded '$want', replayed '$got'"

# The result: the replayed rank's events, as recorded, with the replay's times.
"$PHANTOM" stats "$WORK/st.trace/replay/alone" --rank 0 --json > "$WORK/st.stats" 2> "$WORK/st.err" ||
  fail "phantom stats on the replay result: $(cat "$WORK/st.err")"
python3 - "$PHANTOM" "$WORK" <<'PY' || fail "replay result differs from the recorded events"
import json, subprocess, sys
phantom, w = sys.argv[1], sys.argv[2]
def events(t):
    out = subprocess.run([phantom, 'dump', t, '--rank', '0', '--json'], capture_output=True,
                         text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if '"op"' in l]
rec, rep = events(w + '/st.trace'), events(w + '/st.trace/replay/alone')
strip = lambda e: {k: v for k, v in e.items() if not k.startswith('t_')}
if [strip(e) for e in rec] != [strip(e) for e in rep]:
    sys.exit('events differ')
meta = json.load(open(w + '/st.trace/replay/alone/meta.json'))
one = meta['replay']['replays'][0]
r = one['per_rank'][0]
if r['rank'] != 0 or r['events'] != len(rec) or r['end'] != 'complete' or one['mode'] != 'isolated':
    sys.exit('meta.json: %s' % r)
PY
# --repeat: the per-unit median in NAME, the minimum in NAME.min, every run's totals in meta.json.
"$PHANTOM" replay "$WORK/st.trace" --ranks 2 --isolated --repeat 3 --name three -- "$prog" 64 25 \
  > "$WORK/st.rep" 2>&1 || { cat "$WORK/st.rep"; fail "--repeat 3"; }
"$PHANTOM" stats "$WORK/st.trace/replay/three.min" --rank 2 > /dev/null 2>&1 || fail "phantom stats on NAME.min"
python3 - "$WORK/st.trace/replay" <<'PY' || fail "--repeat 3: median and minimum"
import json, sys
d = sys.argv[1]
med = json.load(open(d + '/three/meta.json'))['replay']['replays'][0]
mn = json.load(open(d + '/three.min/meta.json'))['replay']['replays'][0]
r, rm = med['per_rank'][0], mn['per_rank'][0]
runs = [x['computation_ns'] for x in r['runs']]
if (med['repeat'], med['statistic'], mn['statistic'], len(runs)) != (3, 'median', 'minimum', 3):
    sys.exit(f"{med['repeat']} {med['statistic']} {mn['statistic']} {runs}")
if not (r['computation_min_ns'] <= r['computation_ns'] and r['computation_min_ns'] <= min(runs)):
    sys.exit(f"minimum {r['computation_min_ns']} above the median {r['computation_ns']} or a run {runs}")
PY
# replay_size_limited BLOCKS REPLAY-ARGS...: phantom replay under a file-size
# limit of BLOCKS (SIGXFSZ ignored, so a write fails with EFBIG, as on a full
# disk), the replayed job launched without it; output in st.rep and st.err.
printf 'ulimit -S -f unlimited\nexec mpirun "$@"\n' > "$WORK/unlimited.sh"
replay_size_limited() {
  limit=$1; shift
  sh -c 'trap "" XFSZ; ulimit -S -f "$1"; shift; exec "$@"' sh "$limit" \
    "$PHANTOM" replay --launcher "sh $WORK/unlimited.sh" "$WORK/st.trace" "$@" > "$WORK/st.rep" 2> "$WORK/st.err"
}
# With --repeat, the median's meta.json is replaced first; when the minimum's
# then cannot be written, the median's is put back as it was.  A field of
# 200 kB in NAME.min's earlier replay (which a new meta.json copies) and a
# file-size limit 100 kB above the median's let the median's be written and
# not the minimum's.
cp "$WORK/st.trace/replay/three/meta.json" "$WORK/med.before"
python3 - "$WORK/st.trace/replay/three.min/meta.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m['replay']['replays'][0]['padding'] = 'x' * 200000
json.dump(m, open(sys.argv[1], 'w'), indent=2)
PY
cp "$WORK/st.trace/replay/three.min/meta.json" "$WORK/min.before"
blocks=$(( ($(wc -c < "$WORK/med.before") + 100000) / 512 ))
replay_size_limited $blocks --ranks 3 --isolated --repeat 2 --name three -- "$prog" 64 25 && fail "a replay whose NAME.min/meta.json could not be written succeeded"
[ "$(wc -l < "$WORK/st.err")" = 1 ] && grep -q "^phantom replay: .*/three.min/meta.json: cannot write: File too large" "$WORK/st.err" ||
  fail "NAME.min/meta.json not written: $(cat "$WORK/st.err")"
cmp -s "$WORK/med.before" "$WORK/st.trace/replay/three/meta.json" ||
  fail "the median's meta.json was not put back when the minimum's could not be written"
cmp -s "$WORK/min.before" "$WORK/st.trace/replay/three.min/meta.json" || fail "the minimum's earlier meta.json changed"
[ ! -e "$WORK/st.trace/replay/three/rank-000003.evt" ] && [ ! -e "$WORK/st.trace/replay/three.min/rank-000003.evt" ] ||
  fail "the replay that could not write NAME.min/meta.json left rank 3's vector"
ls "$WORK/st.trace/replay/three" "$WORK/st.trace/replay/three.min" | grep -q "tmp$" && fail "a temporary meta.json was left behind"
# A replay whose result cannot be made leaves the earlier replays' result as
# it was (a launcher that spoils the run's times files stands in for a disk
# that filled), and the same replay can then be run again.
cat > "$WORK/spoil.sh" <<SPOIL
mpirun "\$@"; rc=\$?
for f in "$WORK/st.trace/replay/.alone.runs"/run-*/rank-*.times; do truncate -s 10 "\$f"; done
exit \$rc
SPOIL
"$PHANTOM" replay "$WORK/st.trace" --ranks 1 --isolated --name alone --launcher "sh $WORK/spoil.sh" -- "$prog" 64 25 \
  > "$WORK/st.rep" 2> "$WORK/st.err" && fail "a replay with spoiled times files succeeded"
grep -q "^phantom replay: .*rank-000001.times" "$WORK/st.err" || fail "spoiled times: $(cat "$WORK/st.err")"
[ ! -e "$WORK/st.trace/replay/alone/rank-000001.evt" ] || fail "the failed replay left rank 1's vector behind"
replayed_ranks() {
  python3 -c 'import json, sys; print(*[p["rank"] for x in json.load(open(sys.argv[1]))["replay"]["replays"] for p in x["per_rank"]])' \
    "$WORK/st.trace/replay/alone/meta.json"
}
[ "$(replayed_ranks)" = 0 ] || fail "the failed replay changed the earlier result: ranks $(replayed_ranks)"
# A file-size limit just under the result's meta.json lets the rank's file
# be written but not the new meta.json: the old one stays as it was, byte
# for byte.
cp "$WORK/st.trace/replay/alone/meta.json" "$WORK/meta.before"
blocks=$(( $(wc -c < "$WORK/meta.before") / 512 - 1 ))
replay_size_limited $blocks --ranks 1 --isolated --name alone -- "$prog" 64 25 && fail "a replay whose meta.json could not be written succeeded"
[ "$(wc -l < "$WORK/st.err")" = 1 ] && grep -q "^phantom replay: .*/alone/meta.json: cannot write: File too large" "$WORK/st.err" ||
  fail "meta.json not written: $(cat "$WORK/st.err")"
cmp -s "$WORK/meta.before" "$WORK/st.trace/replay/alone/meta.json" ||
  fail "a replay that could not write meta.json changed the earlier one"
[ ! -e "$WORK/st.trace/replay/alone/rank-000001.evt" ] || fail "the replay that could not write meta.json left rank 1's vector"
ls "$WORK/st.trace/replay/alone" | grep -q tmp && fail "a temporary meta.json was left behind"
"$PHANTOM" replay "$WORK/st.trace" --ranks 1 --isolated --name alone -- "$prog" 64 25 > "$WORK/st.rep" 2>&1 ||
  { cat "$WORK/st.rep"; fail "replaying rank 1 again after the failed replay"; }
[ "$(replayed_ranks)" = "0 1" ] || fail "after the second try, the result holds ranks $(replayed_ranks)"
# A program that never reaches MPI_Init under the replayer: said so, and no result.
"$PHANTOM" replay "$WORK/st.trace" --ranks 0 --isolated --name none -- /bin/true > /dev/null 2> "$WORK/st.err" &&
  fail "a replay of /bin/true succeeded"
[ "$(wc -l < "$WORK/st.err")" = 1 ] && grep -q "rank 0 replayed nothing: /bin/true never called MPI_Init" "$WORK/st.err" ||
  fail "replay of /bin/true: $(cat "$WORK/st.err")"
[ ! -e "$WORK/st.trace/replay/none" ] || fail "the replay of /bin/true left a result directory"
# Collectives across an intercommunicator of 3 and 2 ranks
# (tests/progs/intercoll.c checks every value it receives, and exits 1 if
# one is wrong): every rank replayed alone gets them from the log.  A
# Reduce_scatter's receive counts are the local group's: the replayer
# summed the remote group's, past the array at ranks 1 and 3 (AddressSanitizer
# saw it).
prog=$(cd "$WORK" && build_prog intercoll.c)
record intercoll "$prog" 5 --log
for r in 0 1 2 3 4; do
  "$PHANTOM" replay "$WORK/intercoll.trace" --ranks $r --isolated --name alone --force -- "$prog" \
    > "$WORK/ic.rep" 2>&1 || { tail -20 "$WORK/ic.rep"; fail "intercoll: replaying rank $r alone"; }
  grep -q '^intercoll:' "$WORK/ic.rep" && { cat "$WORK/ic.rep"; fail "intercoll: rank $r received wrong data"; }
done
echo "replay-isolated: every rank of 9 programs replayed alone prints the recorded checksums or checks its data"
