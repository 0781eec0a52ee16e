#!/bin/sh
# Planted groups come back exactly: NPB MG's two groups at 16 ranks (only the
# computation differs), LU's 9-class wavefront on a 4x4 grid (the
# communication sequences differ: 3 classes by number of calls, 9 by
# sequence), by every method and partition; replay subgroups under block,
# cyclic and file mappings; the dendrogram as text and SVG.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/cluster-lib.sh"

"$SYNTH" "$WORK/mg" --pattern mg --ranks 16 --noise 0.02
MG="0-3,8-11 4-7,12-15"
for args in "" "--threshold 5%" "-k 2" "--method kmeans -k 2" "--threshold 250us" "--partition commseq"; do
  $CLUSTER "$WORK/mg" $args -o "$WORK/mg.json" > "$WORK/out" || fail "cluster mg $args"
  check_plan "$WORK/mg.json"
  got=$(groups_of "$WORK/mg.json")
  [ "$got" = "$MG" ] || fail "mg $args: groups '$got', planted '$MG'"
done
grep -q "^grouping: complete linkage (Manhattan distance) cut at 5% of the mean computation" "$WORK/out" \
  || fail "summary names the method"
# The default plan lives in the trace and every group is replayed from 1 of 20 iterations.
$CLUSTER "$WORK/mg" > "$WORK/out" || fail "cluster mg default output"
[ -f "$WORK/mg/groups.json" ] || fail "default output TRACE/groups.json"
[ "$(plan_get "$WORK/mg/groups.json" '[g["iterations"]["replay_iterations"] for g in d["groups"]]')" = "[1, 1]" ] \
  || fail "replay iterations"
# Representatives: the member closest to its group's mean, recomputed here.
python3 - "$WORK/mg" "$WORK/mg/groups.json" "$PHANTOM" <<'PY' || fail "representatives are not the members closest to the mean"
import json, subprocess, sys
d = json.load(open(sys.argv[2]))
dump = subprocess.run([sys.argv[3], "dump", sys.argv[1], "--json"], capture_output=True, text=True)
assert dump.returncode == 0, dump.stderr
ev = {}
for l in dump.stdout.splitlines():
    e = json.loads(l)
    if "op" in e: ev.setdefault(e["rank"], []).append(e)
vec = {r: [b["t_entry"] - a["t_exit"] for a, b in zip(es, es[1:])] for r, es in ev.items()}
for g in d["groups"]:
    mem = [r for r in range(16) if d["rank_group"][r] == g["id"]]
    mean = [sum(vec[r][k] for r in mem) / len(mem) for k in range(len(vec[mem[0]]))]
    dist = {r: sum(abs(x - m) for x, m in zip(vec[r], mean)) for r in mem}
    best = min(mem, key=lambda r: (dist[r], r))
    assert abs(dist[best] - dist[g["representative"]]) <= 1e-4 * dist[best] + 1, (g, best, dist)
PY

"$SYNTH" "$WORK/lu" --pattern lu --grid 4x4 --noise 0.02
LU="0 1-2 3 4,8 5-6,9-10 7,11 12 13-14 15"
for args in "" "-k 9" "--method commseq" "--method kmeans -k 9" "--partition commseq" "--partition commseq -k 9" \
            "--partition dims"; do
  $CLUSTER "$WORK/lu" $args -o "$WORK/lu.json" > "$WORK/out" || fail "cluster lu $args"
  check_plan "$WORK/lu.json"
  got=$(groups_of "$WORK/lu.json")
  [ "$got" = "$LU" ] || fail "lu $args: groups '$got', planted '$LU'"
done
grep -q "16 ranks in 3 classes" "$WORK/out" || fail "dims: 3 classes (2, 3 and 4 neighbours)"
$CLUSTER "$WORK/lu" --partition commseq -o "$WORK/lu.json" > "$WORK/out" || fail "cluster lu commseq"
grep -q "16 ranks in 9 communication classes" "$WORK/out" || fail "commseq: 9 sequences"

# Replay subgroups: the representative's node under the mapping.
$CLUSTER "$WORK/lu" --ppn 4 --map block -o "$WORK/b.json" > /dev/null || fail "block"
python3 - "$WORK/b.json" <<'PY' || fail "block mapping: replay ranks are not the representative's node"
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["groups"]:
    n = g["representative"] // 4
    assert g["replay_ranks"] == f"{4 * n}-{4 * n + 3}", g
assert d["saving"]["nodes"] == 4
PY
$CLUSTER "$WORK/lu" --ppn 4 --map cyclic -o "$WORK/c.json" > /dev/null || fail "cyclic"
python3 - "$WORK/c.json" <<'PY' || fail "cyclic mapping: replay ranks"
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["groups"]:
    n = g["representative"] % 4
    assert g["replay_ranks"] == ",".join(str(n + 4 * i) for i in range(4)), g
PY
printf '# two big nodes\n' > "$WORK/map"
echo "nodeA nodeA nodeA" >> "$WORK/map" # words, any number a line
for r in $(seq 3 15); do [ $r -lt 6 ] && echo nodeA >> "$WORK/map" || echo "nodeB  # rank $r" >> "$WORK/map"; done
$CLUSTER "$WORK/lu" --map "$WORK/map" -o "$WORK/f.json" > /dev/null || fail "map file"
python3 - "$WORK/f.json" <<'PY' || fail "file mapping: replay ranks"
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["groups"]:
    assert g["replay_ranks"] == ("0-5" if g["representative"] < 6 else "6-15"), g
assert d["saving"]["replay_runs"] == 2 and d["saving"]["replayed_ranks"] == 16
assert [r["ranks"] for r in d["runs"]] == ["0-5", "6-15"], d["runs"]  # in the order of the groups
assert [r["replay_iterations"] for r in d["runs"]] == [1, 1], d["runs"]
def ranks(s):
    return [r for p in s.split(",") for r in range(int(p.split("-")[0]), int(p.split("-")[-1]) + 1)]
reps = sorted(g["representative"] for g in d["groups"])
assert ranks(d["runs"][0]["representatives"]) == [r for r in reps if r < 6], d["runs"][0]
assert ranks(d["runs"][1]["representatives"]) == [r for r in reps if r >= 6], d["runs"][1]
PY

# The dendrogram: 15 merges of 16 ranks, the classes joined at infinity.
$CLUSTER "$WORK/lu" --dendrogram "$WORK/d.txt" -o "$WORK/x.json" > /dev/null || fail "dendrogram text"
[ "$(grep -vc '^#' "$WORK/d.txt")" = 15 ] || fail "15 merges"
[ "$(grep -c ' inf ' "$WORK/d.txt")" = 2 ] || fail "3 classes by number of calls join in 2 merges at infinity"
$CLUSTER "$WORK/lu" --partition commseq --dendrogram "$WORK/d.txt" -o "$WORK/x.json" > /dev/null || fail "dendrogram text"
[ "$(grep -c ' inf ' "$WORK/d.txt")" = 8 ] || fail "9 classes by sequence join in 8 merges at infinity"
grep ' 5-6,9-10$' "$WORK/d.txt" | grep -vq ' inf ' || fail "the interior merges below infinity"
$CLUSTER "$WORK/mg" --dendrogram "$WORK/d.svg" -o "$WORK/x.json" > /dev/null || fail "dendrogram svg"
python3 - "$WORK/d.svg" <<'PY' || fail "dendrogram svg"
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
texts = [t.firstChild.data for t in doc.getElementsByTagName("text") if t.firstChild]
leaves = sorted(int(t) for t in texts if t.isdigit())
assert leaves == list(range(16)), leaves
assert len([p for p in doc.getElementsByTagName("path") if p.getAttribute("class") == "m"]) == 15
assert any(p.getAttribute("class") == "cut" for p in doc.getElementsByTagName("path")), "the cut line"
PY
exit 0
