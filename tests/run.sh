#!/bin/sh
# phantom run: the whole chain on our stencil at 4 ranks, two groups, two
# platforms, three node counts.  Every prediction it keeps is byte for byte
# what `phantom predict` gives for the same trace, plan and replayed vectors;
# the replay covers exactly the plan's runs (one, from a subgroup log; with
# four groups, two from a full log); a rerun redoes nothing, a touched
# platform file redoes only its own predictions, and a newer phantom all of
# them (nothing else), a replay run lost or
# another --repeat redoes steps 4 and 5; another command on
# the study, a failing command and bad options get one clear line; with one
# group, the ranks replayed on the representative's node keep their own
# vectors; a job whose calls change from run to run is recorded once with
# its whole log; and a replay of another job is refused by predict --comp DIR.
. "$top_srcdir/tests/lib.sh"
prog=$(build_prog stencil.c)
cp "$top_srcdir/platforms/ib-qdr.conf" "$top_srcdir/platforms/10gbe-cloud.conf" "$WORK/"
plats="$WORK/ib-qdr.conf,$WORK/10gbe-cloud.conf"
S="$WORK/s"

chain() { # extra options, then the command
  "$PHANTOM" run -o "$S" --platforms "$plats" --nodes 1,2,4 --ppn 2 -k 2 "$@" > "$WORK/out" 2> "$WORK/err"
}
cd "$WORK"
chain -- mpirun --oversubscribe -np 4 "$prog" 256 40 || { cat "$WORK/err"; fail "phantom run"; }
for k in 1 2 3 4 5 6; do
  grep -q "^phantom run: step $k/6, " "$WORK/err" || fail "no step $k in: $(cat "$WORK/err")"
done
for f in study.json trace/meta.json trace/groups.json log.trace/meta.json \
         log.trace/replay/target/meta.json report.html report.md report.json; do
  [ -s "$S/$f" ] || fail "no $f in the study"
done

# Every prediction equals phantom predict's own answer for the same inputs.
python3 - "$S" > "$WORK/predicts" <<'PY' || fail "study.json: $(cat "$WORK/predicts")"
import json, sys
s = sys.argv[1]
d = json.load(open(f"{s}/study.json"))
assert d["format"] == "phantom-study" and d["ranks"] == 4 and d["ppn"] == 2, d
assert d["launcher"] == ["mpirun", "--oversubscribe"] and d["program"][1:] == ["256", "40"], d
p = d["predictions"]
assert len(p) == 2 * 3 * 3 and d["skipped"] == [], (len(p), d["skipped"])
seen = set()
for e in p:
    key = (e["platform"], e["nodes"], e["what_if"]["comp"], e["what_if"]["net"])
    assert key not in seen, key
    seen.add(key)
    assert e["ppn"] == -(-4 // e["nodes"]), e
    wi = [] if key[2:] == (1.0, 1.0) else ["--what-if", "comp=0.5" if key[2] == 0.5 else "net=0.5"]
    print(e["file"], e["platform_file"], e["ppn"], *wi)
PY
while read -r file pf ppn wi; do
  # shellcheck disable=SC2086
  "$PHANTOM" predict "$S/trace" --platform "$pf" --ppn "$ppn" --groups "$S/trace/groups.json" \
    --comp "$S/log.trace/replay/target" --json --no-progress $wi > "$WORK/direct.json" ||
    fail "phantom predict for $file"
  cmp -s "$WORK/direct.json" "$S/$file" || fail "$file differs from phantom predict's answer"
done < "$WORK/predicts"

# The replay is of the plan's runs, from a log of the second recording.
python3 - "$S" <<'PY' || fail "the replay does not match the plan"
import json, sys
s = sys.argv[1]
def ranks(spec):
    out = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out |= set(range(int(a), int(b or a) + 1))
    return out
plan = json.load(open(f"{s}/trace/groups.json"))
want = set().union(*(ranks(r["ranks"]) for r in plan["runs"]))
rep = json.load(open(f"{s}/log.trace/replay/target/meta.json"))["replay"]
got = {pr["rank"] for r in rep["replays"] for pr in r["per_rank"]}
assert got == want, (got, want)
assert len(rep["replays"]) == len(plan["runs"]), rep["replays"]
assert set(plan["rank_representative"]) <= got
log = json.load(open(f"{s}/log.trace/meta.json"))
assert log["mode"]["log"] is True, log["mode"]
PY

# A rerun makes nothing; a touched platform file remakes its own predictions.
ls -l --time-style=full-iso "$S/predict" > "$WORK/before"
chain -- mpirun --oversubscribe -np 4 "$prog" 256 40 || { cat "$WORK/err"; fail "phantom run again"; }
for k in 1 2 3 4; do
  grep -q "^phantom run: step $k/6, .*: up to date$" "$WORK/err" || fail "step $k ran again: $(cat "$WORK/err")"
done
grep -q "predict ib-qdr: 9 predictions, 0 made, 9 up to date" "$WORK/err" || fail "ib-qdr predicted again"
ls -l --time-style=full-iso "$S/predict" | cmp -s - "$WORK/before" || fail "a prediction file changed"
touch "$WORK/ib-qdr.conf"
chain -- mpirun --oversubscribe -np 4 "$prog" 256 40 || { cat "$WORK/err"; fail "phantom run after touch"; }
grep -q "predict ib-qdr: 9 predictions, 9 made, 0 up to date" "$WORK/err" || fail "ib-qdr not predicted again"
grep -q "predict 10gbe-cloud: 9 predictions, 0 made, 9 up to date" "$WORK/err" || fail "10gbe-cloud predicted again"
# Predictions older than phantom itself (an upgrade) are made again, and
# nothing else: every input is older than them, they are older than it.
find "$S" "$WORK/ib-qdr.conf" "$WORK/10gbe-cloud.conf" -exec touch -d '2001-01-01 00:00' {} +
touch -d '2001-01-02 00:00' "$S"/predict/*.json
chain -- mpirun --oversubscribe -np 4 "$prog" 256 40 || { cat "$WORK/err"; fail "phantom run after an upgrade"; }
for k in 1 2 3 4; do
  grep -q "^phantom run: step $k/6, .*: up to date$" "$WORK/err" || fail "step $k ran again after an upgrade: $(cat "$WORK/err")"
done
for p in ib-qdr 10gbe-cloud; do
  grep -q "predict $p: 9 predictions, 9 made, 0 up to date" "$WORK/err" || fail "$p not predicted again after an upgrade: $(cat "$WORK/err")"
done

# Four groups on two nodes: two replay runs from one full log, cut at the
# iterations they replay.  One run's result lost (as when step 4 is
# interrupted) is noticed, and steps 4 and 5 are redone.
S2="$WORK/s2"
"$PHANTOM" run -o "$S2" --platforms "$WORK/ib-qdr.conf" --nodes 2 --ppn 2 -k 4 \
  -- mpirun --oversubscribe -np 4 "$prog" 256 40 > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err"; fail "-k 4"; }
python3 - "$S2" <<'PY' || fail "two replay runs"
import json, sys
s = sys.argv[1]
plan = json.load(open(f"{s}/trace/groups.json"))
assert [r["ranks"] for r in plan["runs"]] == ["0-1", "2-3"], plan["runs"]
log = json.load(open(f"{s}/log.trace/meta.json"))["mode"]
assert log["log"] is True and log["log_ranks"] is None, log
rep = json.load(open(f"{s}/log.trace/replay/target/meta.json"))
assert [r["ranks"] for r in rep["replay"]["replays"]] == ["0-1", "2-3"], rep["replay"]["replays"]
rep["replay"]["replays"] = rep["replay"]["replays"][:1]
json.dump(rep, open(f"{s}/log.trace/replay/target/meta.json", "w"))
PY
"$PHANTOM" run -o "$S2" --platforms "$WORK/ib-qdr.conf" --nodes 2 --ppn 2 -k 4 \
  -- mpirun --oversubscribe -np 4 "$prog" 256 40 > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err"; fail "-k 4 again"; }
grep -q "step 3/6, record the message log: up to date" "$WORK/err" || fail "step 3 redone: $(cat "$WORK/err")"
grep -q "step 4/6, replay ranks 2-3 (run 2 of 2)$" "$WORK/err" || fail "step 4 not redone: $(cat "$WORK/err")"
grep -q "predict ib-qdr: 3 predictions, 3 made" "$WORK/err" || fail "step 5 not redone: $(cat "$WORK/err")"
# Another --repeat redoes the replays (each twice now, medians kept).
"$PHANTOM" run -o "$S2" --platforms "$WORK/ib-qdr.conf" --nodes 2 --ppn 2 -k 4 --repeat 2 \
  -- mpirun --oversubscribe -np 4 "$prog" 256 40 > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err"; fail "--repeat 2"; }
grep -q "step 4/6, replay ranks 0-1 (run 1 of 2)$" "$WORK/err" || fail "--repeat 2: step 4 not redone: $(cat "$WORK/err")"
python3 - "$S2" <<'PY' || fail "--repeat 2 is not in the replay or the study"
import json, sys
s = sys.argv[1]
rep = json.load(open(f"{s}/log.trace/replay/target/meta.json"))["replay"]["replays"]
assert [r["repeat"] for r in rep] == [2, 2], rep
assert json.load(open(f"{s}/study.json"))["repeat"] == 2
PY

# One group: its representative's node is replayed; a rank replayed there
# computes as itself, the two others as the representative, whether the
# plan replays the whole run or, when its iterations were alike on this
# host (Equation 2), only the first and extrapolates.
S3="$WORK/s3"
"$PHANTOM" run -o "$S3" --platforms "$WORK/ib-qdr.conf" --nodes 2 --ppn 2 -k 1 \
  -- mpirun --oversubscribe -np 4 "$prog" 256 40 > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err"; fail "-k 1"; }
python3 - "$S3" <<'PY' || fail "-k 1: who computes as whom"
import json, sys
s = sys.argv[1]
rep_of = json.load(open(f"{s}/trace/groups.json"))["rank_representative"]
assert len(set(rep_of)) == 1, rep_of
rep = rep_of[0]
per_rank = {p["rank"]: p for r in json.load(open(f"{s}/log.trace/replay/target/meta.json"))["replay"]["replays"]
            for p in r["per_rank"]}
assert len(per_rank) == 2 and rep in per_rank, (per_rank.keys(), rep_of)
# less each rank's start-up, which stays its host's (doc/simmpi.md, section 1)
comp = {r["rank"]: r["comp_ps"] - r["startup_ps"] for r in json.load(open(f"{s}/predict/ib-qdr-2n.json"))["ranks"]}
for rank, c in comp.items():
    p = per_rank.get(rank)
    if p is None:  # not replayed: the representative's, extrapolation included
        assert c == comp[rep], (rank, c, comp, rep)
    elif p["loop"] is None:  # replayed whole: its own replayed computation
        assert c == p["computation_ns"] * 1000, (rank, c, p)
    else:  # replayed in part (the plan's Equation 2 held): that, extrapolated
        assert c > p["computation_ns"] * 1000, (rank, c, p)
other = [r for r in per_rank if r != rep]
assert comp[other[0]] != comp[rep], ("the replayed rank does not compute as itself", comp, rep)
PY

# A job whose calls change from run to run (timed.c decides on its clock):
# the two recordings differ, so the chain records once more with the whole
# log and replays and predicts from that one recording; a rerun keeps it.
timed=$(build_prog timed.c)
S4="$WORK/s4"
run4() {
  "$PHANTOM" run -o "$S4" --platforms "$WORK/ib-qdr.conf" --nodes 1 --ppn 2 \
    -- mpirun --oversubscribe -np 2 "$timed" > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err"; fail "timed.c: $*"; }
}
run4 first
grep -q "^phantom run: the job's second run made [0-9]* MPI calls, its first [0-9]*: its calls change from run to run; recording it once, with the whole message log (--one-recording)$" "$WORK/err" ||
  fail "timed.c: no switch to one recording: $(cat "$WORK/err")"
[ ! -e "$S4/log.trace" ] || fail "timed.c: the second recording was kept"
python3 - "$S4" <<'PY' || fail "timed.c: the study is not of one recording"
import json, sys
s = sys.argv[1]
d = json.load(open(f"{s}/study.json"))
assert d["one_recording"] is True and d["log"] == "trace" and d["replay"] == "trace/replay/target", d
assert json.load(open(f"{s}/trace/meta.json"))["mode"]["log"] is True
rep = json.load(open(f"{s}/trace/replay/target/meta.json"))["replay"]["replays"]
assert [r["ranks"] for r in rep] == ["0-1"], rep
assert len(d["predictions"]) == 3, d["predictions"]
PY
run4 again
for k in 1 2 4; do
  grep -q "^phantom run: step $k/6, .*: up to date$" "$WORK/err" || fail "timed.c: step $k ran again: $(cat "$WORK/err")"
done
grep -q "step 3/6, record the message log: in the trace (one recording)$" "$WORK/err" || fail "timed.c: step 3 again"

# A job whose two runs make as many calls in all but not rank by rank
# (alternate.c swaps which rank works more): it too is recorded once.
alt=$(build_prog alternate.c)
S5="$WORK/s5"
"$PHANTOM" run -o "$S5" --platforms "$WORK/ib-qdr.conf" --nodes 1 --ppn 2 \
  -- mpirun --oversubscribe -np 2 "$alt" "$WORK/alt.count" > "$WORK/out" 2> "$WORK/err" ||
  { cat "$WORK/err"; fail "alternate.c"; }
grep -q "^phantom run: the job's two runs made [0-9]* MPI calls each, but not the same on every rank: its calls change from run to run; recording it once" "$WORK/err" ||
  fail "alternate.c: no switch to one recording: $(cat "$WORK/err")"
python3 - "$S5" <<'PY' || fail "alternate.c: the study is not of one recording"
import json, sys
d = json.load(open(f"{sys.argv[1]}/study.json"))
assert d["one_recording"] is True and len(d["predictions"]) == 3, d
m = json.load(open(f"{sys.argv[1]}/trace/meta.json"))
assert sum(m["rank_events"]) == m["events"] and len(m["rank_events"]) == 2, m["rank_events"]
PY

# one_line CODE PATTERN: the last chain exited CODE with PATTERN on its first line.
one_line() {
  [ "$rc" = "$1" ] || { cat "$WORK/err"; fail "exit $rc, expected $1 ($2)"; }
  head -1 "$WORK/err" | grep -q "^phantom run: .*$2" || { cat "$WORK/err"; fail "no '$2'"; }
}
rc=0; chain -- mpirun --oversubscribe -np 4 "$prog" 256 30 || rc=$?
one_line 1 "s: this study is of another command (mpirun --oversubscribe -np 4 .*stencil 256 40); use another -o"
[ "$(wc -l < "$WORK/err")" = 1 ] || fail "more than one line: $(cat "$WORK/err")"
rc=0; "$PHANTOM" run -o "$WORK/f" -- false > "$WORK/out" 2> "$WORK/err" || rc=$?
[ "$rc" = 1 ] && grep -q "^phantom run: step 1 (record) failed" "$WORK/err" || fail "failing command: $(cat "$WORK/err")"
rc=0; "$PHANTOM" run -- true 2> "$WORK/err" || rc=$?
one_line 2 "no study directory given"
rc=0; "$PHANTOM" run -o "$WORK/g" --nodes 2,x -- true 2> "$WORK/err" || rc=$?
[ "$rc" != 0 ] || fail "--nodes 2,x accepted"
rc=0; "$PHANTOM" run -o "$WORK/g" -- mpirun -np 2 2> "$WORK/err" || rc=$?
one_line 2 "mpirun: no program in the command"
# a bundled platform by its name; an unknown name, before anything is run
rc=0; "$PHANTOM" run -o "$WORK/g" --platforms ib-qdr,nosuch -- true 2> "$WORK/err" || rc=$?
one_line 1 "--platforms nosuch: no such file, nor a bundled platform (.*: 10gbe-cloud, ib-qdr, "
[ ! -e "$WORK/g" ] || fail "a study was begun with an unknown platform"

# Vectors replayed from another job's recording are refused.
"$PHANTOM" record --log -o "$WORK/other" -- mpirun --oversubscribe -np 4 "$prog" 256 30 > /dev/null 2>&1 ||
  fail "recording the 30-iteration stencil"
for r in 0-1 2-3; do
  "$PHANTOM" replay "$WORK/other" --ranks $r --name x -- "$prog" 256 30 > /dev/null 2>&1 || fail "replaying $r of it"
done
rc=0
"$PHANTOM" predict "$S/trace" --platform "$WORK/ib-qdr.conf" --comp "$WORK/other/replay/x" \
  > /dev/null 2> "$WORK/err" || rc=$?
[ "$rc" = 1 ] && [ "$(wc -l < "$WORK/err")" = 1 ] &&
  grep -q "^phantom predict: --comp $WORK/other/replay/x: rank 0 was replayed from a recording of [0-9]* events, this trace has [0-9]*: not a replay of this job" "$WORK/err" ||
  fail "a replay of another job: $(cat "$WORK/err")"
echo "ok: phantom run"
