#!/bin/sh
# phantom report on a real study (tests/report-lib.sh: stencil.c at 4 ranks,
# replayed here, predicted on two platforms at 1, 2 and 4 nodes with the
# what-ifs).  report.json's numbers are the prediction files' numbers, its
# Pareto flags and recommendation are recomputed here (--within, --deadline
# met and missed), the page has no script and no network reference, the
# Markdown has the recommendation; the page rendered by headless Chromium
# shows both platforms' plot colours and, read back by OCR, the
# recommendation.  The rule must matter: cheap-slow is the cheapest choice
# but not within 10% of the fastest.  A missing study, a missing, broken or stale prediction
# file and a study without base predictions: exit 1 and one line naming the
# file.  Chromium, tesseract and Pillow are dependencies: missing, the test fails.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/report-lib.sh"

command -v chromium > /dev/null || fail "chromium is not installed (tests/install-deps.sh)"
command -v tesseract > /dev/null || fail "tesseract is not installed (tests/install-deps.sh: tesseract-ocr)"
PIL_PY=""
for p in python3 /usr/bin/python3; do
  "$p" -c 'import PIL' 2> /dev/null && { PIL_PY=$p; break; }
done
[ -n "$PIL_PY" ] || fail "Pillow is not installed (tests/install-deps.sh: python3-pil)"

S="$WORK/lu.study"
make_study "$S"

# ---- the default report
"$PHANTOM" report "$S" > "$WORK/out" 2> "$WORK/err" || fail "phantom report: exit $?: $(cat "$WORK/err")"
[ ! -s "$WORK/err" ] || fail "phantom report wrote to stderr: $(cat "$WORK/err")"
for ext in html md json; do
  [ -s "$S/report.$ext" ] || fail "no $S/report.$ext"
  grep -q "$S/report.$ext\$" "$WORK/out" || fail "phantom report does not say where report.$ext is: $(cat "$WORK/out")"
done
[ "$(wc -l < "$WORK/out")" = 3 ] || fail "phantom report printed more than the three files: $(cat "$WORK/out")"

# ---- a report that cannot be written: one line, and an old report whole.
# The page is some 100 kB; a file-size limit of 16 kB (sh's ulimit -f counts
# 512-byte blocks) fails its write, with SIGXFSZ ignored as a shell may.
rc=0; "$PHANTOM" report "$S" -o "$WORK/no/such/dir/r.html" > /dev/null 2> "$WORK/err" || rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$WORK/err")" = 1 ] &&
  grep -qx "phantom report: $WORK/no/such/dir/r.html: cannot write: No such file or directory" "$WORK/err" ||
  fail "report into a missing directory: exit $rc: $(cat "$WORK/err")"
mkdir -p "$WORK/lim" && "$PHANTOM" report "$S" -o "$WORK/lim/r.html" > /dev/null || fail "report -o lim/r.html"
cp "$WORK/lim/r.html" "$WORK/r.before"
[ "$(wc -c < "$WORK/r.before")" -gt 16384 ] || fail "the report page is no larger than 16 kB: the test below would not fail a write"
rc=0; sh -c 'trap "" XFSZ; ulimit -S -f 32; exec "$@"' sh "$PHANTOM" report "$S" -o "$WORK/lim/r.html" > /dev/null 2> "$WORK/err" || rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$WORK/err")" = 1 ] &&
  grep -qx "phantom report: $WORK/lim/r.html: cannot write: File too large" "$WORK/err" ||
  fail "report past a file-size limit: exit $rc: $(cat "$WORK/err")"
cmp -s "$WORK/r.before" "$WORK/lim/r.html" || fail "a report that could not be written changed the old one"
[ -z "$(ls "$WORK/lim" | grep -v '^r\.\(html\|md\|json\)$')" ] || fail "a failed write left files: $(ls "$WORK/lim")"

# check_report REPORT_BASE STUDY RULE VALUE: the numbers, the front and the rule
check_report() {
  python3 - "$@" <<'PY' || fail "$1.json: see above"
import json, os, re, sys
base, study, rule, value = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
r = json.load(open(base + ".json"))
sj = json.load(open(os.path.join(study, "study.json")))
def die(msg):
    print("FAIL: " + msg, file=sys.stderr); sys.exit(1)
docs = {p["file"]: json.load(open(os.path.join(study, p["file"]))) for p in sj["predictions"]}
base_preds = [p for p in sj["predictions"] if p["what_if"] == {"comp": 1.0, "net": 1.0}]
configs = {(c["platform"], c["nodes"]): c for c in r["configs"]}
if len(configs) != len(base_preds) or len(r["configs"]) != 8:
    die("%d configs for %d base predictions" % (len(r["configs"]), len(base_preds)))
for p in base_preds:
    c, d = configs[(p["platform"], p["nodes"])], docs[p["file"]]
    if c["time_s"] != d["predicted_s"] or c["cost"] != d["cost"]:
        die("%s: time %r cost %r, the file says %r, %r" % (p["file"], c["time_s"], c["cost"],
                                                           d["predicted_s"], d["cost"]))
    if not d["cost"] > 0:
        die("%s: no cost" % p["file"])
cs = r["configs"]
for c in cs:
    dominated = any(o["time_s"] <= c["time_s"] and o["cost"] <= c["cost"] and
                    (o["time_s"] < c["time_s"] or o["cost"] < c["cost"]) for o in cs)
    if c["pareto"] == dominated:
        die("Pareto flag of %s at %d nodes is %s" % (c["platform"], c["nodes"], c["pareto"]))
tie = lambda k: (lambda c: (c[k], c["nodes"], c["platform"]))
fastest = min(cs, key=tie("time_s"))
if rule == "deadline":
    ok = [c for c in cs if c["time_s"] <= value]
    want = min(ok, key=tie("cost")) if ok else fastest
else:
    want = min([c for c in cs if c["time_s"] <= fastest["time_s"] * (1 + value / 100)], key=tie("cost"))
rec = r["recommendation"]
if (rec["platform"], rec["nodes"]) != (want["platform"], want["nodes"]):
    die("recommended %s at %d nodes, the rule (%s %g) says %s at %d" % (rec["platform"], rec["nodes"], rule,
        value, want["platform"], want["nodes"]))
reason = rec["reason"]
if not reason.startswith("Rent %d node" % rec["nodes"]) or rec["platform"] not in reason:
    die("the sentence does not name the choice: " + reason)
if rule == "deadline" and not ok and "no choice meets the deadline" not in reason:
    die("a missed deadline is not said: " + reason)
if len(re.findall(r"[.!?](\s|$)", reason)) != 1:
    die("the recommendation is not one sentence: " + reason)
md, html = open(base + ".md").read(), open(base + ".html").read()
if reason not in md:
    die("report.md lacks the recommendation")
if reason.replace("&", "&amp;") not in html:
    die("report.html lacks the recommendation")
if re.search(r"<script", html, re.I) or re.search(r"https?://", html):
    die("report.html has a script or a network reference")
if html.count("<svg") != 3:
    die("report.html has %d plots, not 3" % html.count("<svg"))
# breakdown: sums over ranks of the chosen prediction
for b in r["breakdown"]:
    p = [q for q in base_preds if q["platform"] == b["platform"] and q["nodes"] == b["nodes"]][0]
    comp = sum(x["comp_ps"] for x in docs[p["file"]]["ranks"]) / 1e12
    if abs(b["comp_s"] - comp) > 1e-9 * comp or abs(b["comp_share"] + b["comm_share"] + b["wait_share"] - 1) > 1e-9:
        die("breakdown of %s: %r" % (b["platform"], b))
hs = r["hot_spots"]["sites"]
keys = [s["comm_s"] + s["wait_s"] for s in hs]
if not 1 <= len(hs) <= 10 or keys != sorted(keys, reverse=True):
    die("hot spots not the top ones in order: %r" % keys)
chosen = docs[[q for q in base_preds if q["platform"] == r["hot_spots"]["platform"]
               and q["nodes"] == r["hot_spots"]["nodes"]][0]["file"]]
calls = {x["where"]: x["call"] for x in chosen["sites"]}
if any(s["call"] != calls[s["where"]] or not s["call"].startswith("MPI_") for s in hs):
    die("hot spots' MPI calls %r, the prediction's %r" % ([s["call"] for s in hs], calls))
if len(r["what_if"]) != 8:
    die("%d what-if rows, not 8" % len(r["what_if"]))
for w in r["what_if"]:
    f = "predict/%s-%dn" % (w["platform"], w["nodes"])
    if (w["base_s"], w["comp_half_s"], w["net_half_s"]) != tuple(docs[f + s + ".json"]["predicted_s"]
                                                           for s in ("", "-comp0.5", "-net0.5")):
        die("what-if of %s differs from its files" % f)
    if "bound" not in w["reading"]:
        die("what-if reading: " + w["reading"])
tm = json.load(open(os.path.join(study, "trace", "meta.json")))
rm = json.load(open(os.path.join(study, "trace", "replay", "target", "meta.json")))
pv = r["provenance"]
if (pv["trace"]["host"], pv["trace"]["mpi"], pv["trace"]["command"]) != (tm["host"], tm["mpi"]["library"], tm["command"]):
    die("provenance of the trace: %r" % pv["trace"])
if [x["ranks"] for x in pv["replay"]["runs"]] != [x["ranks"] for x in rm["replay"]["replays"]]:
    die("provenance of the replay: %r" % pv["replay"])
if sorted(p["name"] for p in pv["platforms"]) != ["10gbe-cloud", "cheap-slow", "ib-qdr"] or \
   any(not p["calibrated"] for p in pv["platforms"]):
    die("provenance of the platforms: %r" % pv["platforms"])
if {p["name"]: p["cpu_share"] for p in pv["platforms"]} != {"10gbe-cloud": None, "cheap-slow": 0.5, "ib-qdr": None}:
    die("the platforms' CPU shares during calibration: %r" % pv["platforms"])
rows = [l for l in open(base + ".md") if l.startswith("| cheap-slow |") or l.startswith("| ib-qdr |")]
warned = [l.startswith("| cheap-slow |") for l in rows if "WARNING: its CPU ran 50% of the time while calibrated" in l]
if warned != [True]:
    die("report.md's platform rows do not warn of cheap-slow's throttled calibration alone: %r" % rows)
PY
}
check_report "$S/report" "$S" within 10
python3 - "$S/report.json" <<'PY' || fail "the study does not make the rule matter (tests/report-lib.sh)"
import json, sys
cs = json.load(open(sys.argv[1]))["configs"]
cheapest, fastest = min(cs, key=lambda c: c["cost"]), min(c["time_s"] for c in cs)
print("cheapest: %s at %d nodes, %.4f s, %.2f times the fastest (%.4f s)" %
      (cheapest["platform"], cheapest["nodes"], cheapest["time_s"], cheapest["time_s"] / fastest, fastest))
assert cheapest["platform"] == "cheap-slow" and cheapest["time_s"] > 1.1 * fastest, (cheapest, fastest)
assert sum(c["pareto"] for c in cs) >= 2
PY

# ---- currency: the shipped platform files' $ is the report's, before
# every amount; a platform that does not say is taken to be in it, and two
# currencies are not compared.
check_currency() { # check_currency REPORT_BASE CURRENCY AMOUNT-REGEX TICK-REGEX
  python3 - "$@" <<'PY' || fail "$1: the report's currency"
import json, re, sys
base, cur, amount, tick = sys.argv[1:]
r = json.load(open(base + ".json"))
assert r["currency"] == cur, r["currency"]
assert [p["currency"] for p in r["provenance"]["platforms"]] == [cur] * 3, r["provenance"]["platforms"]
md = open(base + ".md").read()
table = md.split("## Time and cost")[1].split("\n## ")[0]
costs = [l.split("|")[5].strip() for l in table.splitlines() if re.match(r"\| (ib-qdr|10gbe-cloud|cheap-slow) \| \d", l)]
assert len(costs) == 8 and all(re.fullmatch(amount, c) for c in costs), costs
html = open(base + ".html").read()
assert ">cost of a run (" + cur + ") (log scale)<" in html
ticks = re.findall(r'class="tick" text-anchor="end">([^<]*)<', html.split("Cost of a run against its time")[2])
assert ticks and all(re.fullmatch(tick, t) for t in ticks[:3]), ticks
PY
}
check_currency "$S/report" '$' '\$\d+\.\d+' '\$\d+\.\d+'
currency_study() { # currency_study DIR CURRENCY-OF-CHEAP-SLOW (None: unsaid)
  rm -rf "$1" && cp -a "$S" "$1"
  python3 - "$1" "$2" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/predict/cheap-slow-*.json"):
    d = json.load(open(f))
    d["currency"] = None if sys.argv[2] == "None" else sys.argv[2]
    json.dump(d, open(f, "w"))
PY
}
currency_study "$WORK/c.study" None
"$PHANTOM" report "$WORK/c.study" > /dev/null 2> "$WORK/err" || fail "cheap-slow without currency: $(cat "$WORK/err")"
python3 - "$WORK/c.study/report.json" <<'PY' || fail "a platform without currency"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["currency"] == "$" and r["recommendation"]["platform"] != "", r["currency"]
assert {p["name"]: p["currency"] for p in r["provenance"]["platforms"]} == \
    {"10gbe-cloud": "$", "cheap-slow": None, "ib-qdr": "$"}, r["provenance"]["platforms"]
PY
grep -q '^| cheap-slow | 2 | 2 | .* | \$[0-9.]* |' "$WORK/c.study/report.md" ||
  fail "cheap-slow's cost is not in the study's \$: $(grep '^| cheap-slow | 2' "$WORK/c.study/report.md")"
currency_study "$WORK/c.study" EUR # ... in euros, all of them: the code after each amount, and
python3 - "$WORK/c.study" <<'PY' # on the plot's ticks none (it is in the axis title)
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/predict/*.json"):
    d = json.load(open(f))
    d["currency"] = "EUR"
    json.dump(d, open(f, "w"))
PY
"$PHANTOM" report "$WORK/c.study" > /dev/null 2> "$WORK/err" || fail "all in EUR: $(cat "$WORK/err")"
check_currency "$WORK/c.study/report" EUR '\d+\.\d+ EUR' '\d+\.\d+'
currency_study "$WORK/c.study" EUR
rc=0; "$PHANTOM" report "$WORK/c.study" > /dev/null 2> "$WORK/err" || rc=$?
expect_line="phantom report: $WORK/platforms/10gbe-cloud.conf prices in \$, $WORK/platforms/cheap-slow.conf in EUR: costs in two currencies cannot be compared (set one currency in both; doc/platform-format.md)"
[ $rc = 1 ] && [ "$(cat "$WORK/err")" = "$expect_line" ] || fail "two currencies: exit $rc, $(cat "$WORK/err")"

# A replay whose rank shared its core (phantom replay's shared_cpu, as
# tests/replay-busy.sh makes it): one warning under the recommendation, in
# the page and the Markdown, and the run's shared_cpu in report.json.  The
# meta.json keeps its time, so the predictions stay up to date.
B="$WORK/busy.study"
cp -a "$S" "$B"
busy_rank=$(python3 - "$B/trace/replay/target/meta.json" <<'PY'
import json, os, sys
p = sys.argv[1]
st = os.stat(p)
m = json.load(open(p))
for run in m['replay']['replays']: # the others alone on their cores, whatever this machine did
    for r in run['per_rank']:
        r['cpu_busy'], r['shared_cpu'] = 0.99, False
r = m['replay']['replays'][0]['per_rank'][0]
r['cpu_busy'], r['shared_cpu'] = 0.41, True
json.dump(m, open(p, 'w'), indent=2)
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
print(r['rank'])
PY
) || fail "cannot mark a replayed rank as sharing its core"
"$PHANTOM" report "$B" > /dev/null 2> "$WORK/err" || fail "phantom report of $B: $(cat "$WORK/err")"
want="Warning: rank $busy_rank (41%) had the CPU only that share of the time while replayed: other work shared the node"
grep -q "^> $want" "$B/report.md" || fail "report.md: no warning '$want'"
grep -q "<p class=\"warn\">$want" "$B/report.html" || fail "report.html: no warning '$want'"
[ "$(grep -c 'Warning: rank' "$B/report.md")" = 1 ] || fail "report.md: more than one warning"
python3 - "$B/report.json" "$busy_rank" <<'PY' || fail "$B/report.json: the replay runs' shared_cpu"
import json, sys
runs = json.load(open(sys.argv[1]))['provenance']['replay']['runs']
got = [r['shared_cpu'] for r in runs]
if got[0] != f'rank {sys.argv[2]} (41%)' or any(got[1:]): sys.exit(f'shared_cpu {got}')
PY
shared=$(python3 -c "
import json, sys
print('; '.join(r['shared_cpu'] for r in json.load(open(sys.argv[1]))['provenance']['replay']['runs'] if r['shared_cpu']))" "$S/report.json")
if [ -n "$shared" ]; then # this machine was busy while make_study replayed
  grep -q "^> Warning: $shared had the CPU" "$S/report.md" || fail "report.md: no warning of $shared"
else
  ! grep -q 'Warning: rank' "$S/report.md" || fail "report.md warns of a shared CPU where no replay says so"
fi
# stencil.c makes no call the simulation leaves out (tests/unknown-calls.sh has one that does)
! grep -q 'leaves out' "$S/report.md" "$S/report.html" || fail "the report warns of calls left out"

# -o, --within, --json: the same report.json on stdout as in the file
mkdir -p "$WORK/o"
"$PHANTOM" report "$S" -o "$WORK/o/wide.html" --within 50 --json > "$WORK/o/stdout" 2> "$WORK/err" ||
  fail "phantom report -o --within --json: $(cat "$WORK/err")"
cmp -s "$WORK/o/stdout" "$WORK/o/wide.json" || fail "--json printed something else than $WORK/o/wide.json"
check_report "$WORK/o/wide" "$S" within 50
# --deadline: one all choices meet, and one none does
times=$(python3 -c 'import json,sys; t=[c["time_s"] for c in json.load(open(sys.argv[1]))["configs"]]; print(max(t), min(t) / 2)' \
          "$S/report.json")
set -- $times
"$PHANTOM" report "$S" -o "$WORK/o/met.html" --deadline "$1" > /dev/null || fail "--deadline $1"
check_report "$WORK/o/met" "$S" deadline "$1"
"$PHANTOM" report "$S" -o "$WORK/o/missed.html" --deadline "$2" > /dev/null || fail "--deadline $2"
check_report "$WORK/o/missed" "$S" deadline "$2"

# ---- the plots: times in the unit of the longest; node counts 1 and 2 on
# a linear axis with ticks at whole nodes only
rm -rf "$WORK/n.study" && cp -a "$S" "$WORK/n.study"
python3 - "$WORK/n.study/study.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["predictions"] = [p for p in s["predictions"] if p["nodes"] != 4]
json.dump(s, open(sys.argv[1], "w"))
PY
"$PHANTOM" report "$WORK/n.study" > /dev/null 2> "$WORK/err" || fail "report of nodes 1 and 2: $(cat "$WORK/err")"
python3 - "$WORK/n.study/report" <<'PY' || fail "the plots' axes"
import json, re, sys
r = json.load(open(sys.argv[1] + ".json"))
hi = max(c["time_s"] for c in r["configs"])
unit = "s" if hi >= 1 else "ms" if hi >= 1e-3 else "us"
html = open(sys.argv[1] + ".html").read()
time_plot = html.split("Predicted run time against nodes")[2].split("</svg>")[0]
assert ">predicted run time (%s)<" % unit in time_plot, unit
x_ticks = re.findall(r'class="tick" text-anchor="middle">([^<]*)<', time_plot)
assert x_ticks == ["0", "1", "2"], x_ticks
cost_plot = html.split("Cost of a run against its time")[2].split("</svg>")[0]
assert ">predicted run time (%s)<" % unit in cost_plot
y_ticks = [float(t) for t in re.findall(r'class="tick" text-anchor="end">([^<]*)<', time_plot)]
assert y_ticks[-1] >= hi * {"s": 1, "ms": 1e3, "us": 1e6}[unit] > y_ticks[-2], (y_ticks, hi)
PY

# ---- two platforms' points on one spot (one node each, the same time and
# cost): both node-count tags stay readable, no tag's box on another's
rm -rf "$WORK/c.study" && cp -a "$S" "$WORK/c.study"
python3 - "$WORK/c.study" <<'PY'
import json, sys
d = sys.argv[1]
one = [p for p in json.load(open(d + "/study.json"))["predictions"]
       if p["nodes"] == 1 and p["what_if"] == {"comp": 1.0, "net": 1.0}]
assert len({p["platform"] for p in one}) == 2, one
a, b = (json.load(open(d + "/" + p["file"])) for p in one)
for k in ("predicted_ps", "predicted_s", "cost", "price_per_node_hour", "currency"):
    b[k] = a.get(k)
json.dump(b, open(d + "/" + one[1]["file"], "w"))
PY
"$PHANTOM" report "$WORK/c.study" > /dev/null 2> "$WORK/err" || fail "report of two coinciding points: $(cat "$WORK/err")"
python3 - "$WORK/c.study/report.html" <<'PY' || fail "the cost plot's tags"
import re, sys
plot = open(sys.argv[1]).read().split("Cost of a run against its time")[2].split("</svg>")[0]
tags = re.findall(r'<text x="([-0-9.]+)" y="([-0-9.]+)" class="tag"( text-anchor="end")?>([^<]*)<', plot)
assert len(tags) >= 6 and sum(t[3] == "1 n" for t in tags) == 2, tags
def box(x, y, end, text): # as report-svg.c sizes a tag: 12 px type, at most 7 px a character
    x, y, w = float(x), float(y), 7 * len(text) + 2
    return (x - w if end else x, x if end else x + w, y - 12, y + 3)
boxes = [box(*t) for t in tags]
for i in range(len(boxes)):
    for j in range(i):
        a, b = boxes[i], boxes[j]
        if a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]:
            sys.exit(f"tags {tags[j]} and {tags[i]} overlap")
PY

# ---- the page as a browser shows it
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --user-data-dir="$WORK/chromium-profile" --screenshot="$WORK/shot.png" \
  --window-size=1280,4000 "file://$S/report.html" > "$WORK/chromium.log" 2>&1 ||
  fail "chromium failed: $(tail -3 "$WORK/chromium.log")"
[ -s "$WORK/shot.png" ] || fail "chromium wrote no screenshot"
"$PIL_PY" - "$WORK/shot.png" "$WORK/top.png" <<'PY' || fail "the screenshot lacks a platform's plot colour"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
counts = {}
for px in im.getdata():
    counts[px] = counts.get(px, 0) + 1
# the palette's first two colours: the two platforms' lines and points (report-svg.c)
for name, rgb in (("blue #0072B2", (0x00, 0x72, 0xB2)), ("orange #E69F00", (0xE6, 0x9F, 0x00))):
    if counts.get(rgb, 0) < 500:
        print("FAIL: %d pixels of %s" % (counts.get(rgb, 0), name), file=sys.stderr)
        sys.exit(1)
im.crop((0, 0, im.width, 1800)).save(sys.argv[2])  # the sentence and both plots: faster to read
PY
tesseract "$WORK/top.png" - > "$WORK/ocr.txt" 2> /dev/null || fail "tesseract failed"
rec=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["recommendation"]; print(r["platform"], r["nodes"])' \
        "$S/report.json")
set -- $rec
grep -q "Rent $2 node.* of $1" "$WORK/ocr.txt" ||
  fail "the screenshot does not show the recommendation (Rent $2 nodes of $1): $(grep -i rent "$WORK/ocr.txt")"
for w in "Predicted run time" "Cost of a run" "nodes" "Pareto front"; do
  grep -q "$w" "$WORK/ocr.txt" || fail "the screenshot lacks '$w'"
done

# ---- failed polls: the stencil has none, so no note; a study whose
# predictions say 40% of the time went to them gets one, under the breakdown
grep -q "Note\." "$S/report.md" "$S/report.html" && fail "a note on failed polls for the stencil, which has none"
cp -a "$S" "$WORK/p.study"
python3 - "$WORK/p.study" <<'PY' || fail "editing the predictions"
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/predict/*.json"):
    d = json.load(open(f))
    d["simulator"]["failed_poll_share"] = 0.4 if "ib-qdr" in f else 0.2
    d["simulator"]["test_wait_share"] = 0.08 if "cheap-slow" in f else 0.01
    d["simulator"]["test_wait_credit_share"] = 0.07 if "cheap-slow" in f else 0.01
    json.dump(d, open(f, "w"))
PY
"$PHANTOM" report "$WORK/p.study" > /dev/null 2> "$WORK/err" || fail "report with failed polls: $(cat "$WORK/err")"
note="Tests and Iprobes that found nothing are 40% of the ranks' time on ib-qdr."
grep -q "^\*\*Note\.\*\* $note" "$WORK/p.study/report.md" || fail "no note on failed polls in report.md"
grep -q "<p><b>Note.</b> $note" "$WORK/p.study/report.html" || fail "no note on failed polls in report.html"
# ... and a sentence on the waits in successful Tests, from a twentieth
note2="On cheap-slow the ranks wait 8% of their time in Tests that the recorded run saw succeed,.* so 7% of their time,"
grep -q "^\*\*Note\.\*\* .*(doc/simmpi.md, section 4).  $note2" "$WORK/p.study/report.md" ||
  fail "no note on waits in successful Tests in report.md: $(grep Note "$WORK/p.study/report.md")"
grep -q "<p><b>Note.</b> .*  $note2" "$WORK/p.study/report.html" || fail "no note on waits in successful Tests in report.html"
python3 - "$WORK/p.study/report.json" <<'PY' || fail "report.json's breakdown lacks the failed polls' shares"
import json, sys
bd = json.load(open(sys.argv[1]))["breakdown"]
b = {x["platform"]: x["failed_poll_share"] for x in bd}
assert b == {"ib-qdr": 0.4, "10gbe-cloud": 0.2, "cheap-slow": 0.2}, b
w = {x["platform"]: x["test_wait_share"] for x in bd}
assert w == {"ib-qdr": 0.01, "10gbe-cloud": 0.01, "cheap-slow": 0.08}, w
c = {x["platform"]: x["test_wait_credit_share"] for x in bd}
assert c == {"ib-qdr": 0.01, "10gbe-cloud": 0.01, "cheap-slow": 0.07}, c
PY

# ---- bad studies: exit 1, one line naming the file
# expect_error STUDY PATTERN: phantom report STUDY fails with one line matching PATTERN
expect_error() {
  rc=0
  "$PHANTOM" report "$1" -o "$WORK/bad.html" > /dev/null 2> "$WORK/err" || rc=$?
  [ $rc -eq 1 ] || fail "phantom report $1: exit $rc, not 1 ($2)"
  [ "$(wc -l < "$WORK/err")" = 1 ] || fail "phantom report $1: not one line: $(cat "$WORK/err")"
  grep -q "^phantom report: $2" "$WORK/err" || fail "phantom report $1: '$(cat "$WORK/err")' does not match '$2'"
}
expect_error "$WORK/nope.study" "$WORK/nope.study: not a study directory (No such file or directory); make one with .phantom run -o DIR"
expect_error "$S/study.json" "$S/study.json: not a study directory (not a directory)"
mkdir "$WORK/empty.study"
expect_error "$WORK/empty.study" "$WORK/empty.study/study.json: missing: $WORK/empty.study is not a study"
expect_error "$S/trace" "$S/trace/study.json: missing: $S/trace is a trace, not a study; .phantom predict $S/trace"
cp -a "$S" "$WORK/m.study"
rm "$WORK/m.study/predict/ib-qdr-2n.json"
expect_error "$WORK/m.study" "$WORK/m.study/predict/ib-qdr-2n.json: missing; run .phantom run. again (step 5, predict)"
cp "$S/predict/ib-qdr-2n.json" "$WORK/m.study/predict/"
echo '{"predicted_s": ' > "$WORK/m.study/predict/10gbe-cloud-4n-net0.5.json"
expect_error "$WORK/m.study" "$WORK/m.study/predict/10gbe-cloud-4n-net0.5.json: line [0-9]*: not JSON: .*step 5, predict"
rm "$WORK/m.study/predict/10gbe-cloud-4n-net0.5.json" && mkdir "$WORK/m.study/predict/10gbe-cloud-4n-net0.5.json"
expect_error "$WORK/m.study" "$WORK/m.study/predict/10gbe-cloud-4n-net0.5.json: is a directory, not a JSON file; run"
rm -rf "$WORK/m.study" && cp -a "$S" "$WORK/m.study"
python3 - "$WORK/m.study/study.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["predictions"] = [p for p in s["predictions"] if p["what_if"] != {"comp": 1.0, "net": 1.0}]
json.dump(s, open(sys.argv[1], "w"))
PY
expect_error "$WORK/m.study" "$WORK/m.study/study.json: no base predictions.*step 5, predict"
rm -rf "$WORK/m.study" && cp -a "$S" "$WORK/m.study"
sleep 0.01; touch "$WORK/m.study/trace/replay/target/meta.json"
expect_error "$WORK/m.study" "$WORK/m.study/predict/[a-z0-9.-]*json: stale: older than the replay .*step 5, predict"
sleep 0.01; touch "$WORK/platforms/10gbe-cloud.conf"
expect_error "$S" "$S/predict/10gbe-cloud-1n.json: stale: older than its platform file $WORK/platforms/10gbe-cloud.conf.*step 5, predict"

rm -rf "$WORK/m.study" && cp -a "$S" "$WORK/m.study"
python3 - "$WORK/m.study/predict/ib-qdr-2n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["currency"] = "<b>$"  # the page shows a currency as it is
json.dump(d, open(sys.argv[1], "w"))
PY
expect_error "$WORK/m.study" "$WORK/m.study/predict/ib-qdr-2n.json: \"currency\" is not a currency (doc/platform-format.md); run"

# ---- usage errors: exit 2
rc=0; "$PHANTOM" report > /dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "phantom report without a study: exit $rc, not 2"
rc=0; "$PHANTOM" report "$S" --within ten > /dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "phantom report --within ten: exit $rc, not 2"
echo "report: ok ($(cat "$WORK/ocr.txt" | grep -m1 Rent))"
