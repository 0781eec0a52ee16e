#!/bin/sh
# app-nwchem.sh - NWChem (Debian `nwchem-openmpi`), whose Global Arrays run
# over MPI-3 windows: one-sided communication that phantom passes through,
# counts and times, and the simulation leaves out.  The water SCF at 2 ranks:
#   - under `phantom record --log` it prints the bare run's SCF energy, and
#     its point-to-point messages are Open MPI's own count of them
#     (tests/count_p2p.py: the one-sided traffic is not among them);
#   - every rank made as many windows as it freed, the same number (a
#     window's creation is collective), and its one-sided calls took time;
#   - phantom predict's "untraced" is the stats' one-sided calls of both
#     ranks, function by function, with their times, and its one warning
#     says so.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
need python3
NW=$(command -v nwchem.openmpi || true)
[ -n "$NW" ] || skip "NWChem is not installed (apt-get install nwchem-openmpi)"

cat > "$WORK/h2o.nw" <<'EOF2'
start h2o
geometry units angstrom
  O   0.000000    0.000000   -0.065587
  H   0.000000   -0.757136    0.520545
  H   0.000000    0.757136    0.520545
end
basis
  * library 6-31g*
end
scf
  direct
end
task scf energy
EOF2
export OMP_NUM_THREADS=1
mkdir "$WORK/bare" "$WORK/rec"
(cd "$WORK/bare" && mpirun_n 2 "$NW" ../h2o.nw > out 2> err) || fail "bare NWChem run failed: $(tail -5 "$WORK/bare/err")"
energy() { grep -E '^ +Total SCF energy = ' "$1"; }
energy "$WORK/bare/out" > "$WORK/bare/energy" || fail "bare run: no SCF energy: $(tail -5 "$WORK/bare/out")"

record_monitored 300 "$NW" ../h2o.nw
energy "$WORK/rec/out" > "$WORK/rec/energy" || fail "recorded run: no SCF energy: $(tail -5 "$WORK/rec/out")"
python3 - "$WORK/bare/energy" "$WORK/rec/energy" <<'PY' || fail "the SCF energy changed under phantom record"
import sys
a, b = (float(open(f).read().split("=")[1]) for f in sys.argv[1:])
print(f"SCF energy: bare {a}, recorded {b}")
if abs(a - b) > 1e-9: sys.exit(1) # the GA's sums may round apart in the last digits, not more
PY
check_recorded_trace
"$PHANTOM" dump "$WORK/trace" --json > "$WORK/dump.jsonl"
python3 "$top_srcdir/tests/count_p2p.py" "$WORK/dump.jsonl" "$WORK/mon" 2 > "$WORK/count" ||
  fail "phantom's point-to-point counts are not Open MPI's: $(cat "$WORK/count")"

"$PHANTOM" stats "$WORK/trace" --json > "$WORK/stats.json" || fail "phantom stats --json"
"$PHANTOM" predict "$WORK/trace" --platform "$top_srcdir/platforms/ib-qdr.conf" --json > "$WORK/p.json" \
  2> "$WORK/p.err" || fail "phantom predict: $(cat "$WORK/p.err")"
python3 - "$WORK/stats.json" "$WORK/p.json" "$WORK/p.err" "$WORK/trace" <<'PY' || fail "NWChem's one-sided calls"
import json, re, sys
stats, pred = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def die(m): print("FAIL:", m); sys.exit(1)
rma = ("MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap")
per_fn = {}
wins = []
for rk in stats["ranks"]:
    c = rk["counted"]
    made, freed = c.get("MPI_Win_allocate", {}).get("calls", 0), c.get("MPI_Win_free", {}).get("calls", 0)
    if made < 10 or made != freed: die(f"rank {rk['rank']}: {made} windows made, {freed} freed")
    wins.append(made)
    if not any(f in c for f in rma): die(f"rank {rk['rank']}: no Put, Get or accumulate: {sorted(c)}")
    for name, v in c.items():
        if name in rma or name.startswith("MPI_Win_") and name not in ("MPI_Win_get_attr", "MPI_Win_set_name"):
            if not isinstance(v["ns"], int) or v["ns"] <= 0: die(f"rank {rk['rank']}: {name} untimed: {v}")
            calls, ns = per_fn.get(name, (0, 0))
            per_fn[name] = (calls + v["calls"], ns + v["ns"])
if len(set(wins)) != 1: die(f"the ranks made different numbers of windows: {wins}")
u = pred["untraced"]
if [k["kind"] for k in u] != ["one-sided"]: die(f"untraced kinds {[k['kind'] for k in u]}")
got = {f["name"]: (f["calls"], f["ns"]) for f in u[0]["functions"]}
if got != per_fn: die(f"predict's one-sided functions {got}, stats' {per_fn}")
k = u[0]
share = k["ns"] / (2 * pred["measured_ns"])
if abs(k["share"] - share) > 1e-9 or not 0 < share < 1: die(f"share {k['share']}, want {share}")
err = open(sys.argv[3]).read().splitlines()
if len(err) != 1 or not err[0].startswith(f"phantom predict: warning: {sys.argv[4]}: the simulation leaves out {k['calls']} one-sided calls ("):
    die(f"predict's warning: {err}")
print(f"{wins[0]} windows a rank; {k['calls']} one-sided calls, {k['ns'] / 1e6:.1f} ms, {100 * share:.1f}% of the ranks' time")
PY
echo "app-nwchem: the recorded SCF is the bare run's; its one-sided calls counted, timed and named by predict"
