#!/bin/sh
# app-lammps.sh - LAMMPS (Debian `lammps`, example `melt`) under `phantom record --log`
# at 2 ranks:
#   - the recorded run exits 0 like the bare one and prints the same thermo
#     table (LAMMPS is deterministic for a fixed seed and rank count);
#   - the recorder warns about nothing;
#   - the point-to-point messages and bytes in the trace, per (rank, peer),
#     equal Open MPI's own count (pml monitoring) of the same execution;
#   - its C++ call sites are shown demangled.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
need python3
ompi_info --param pml monitoring --level 9 2>/dev/null | grep -q pml_monitoring_enable ||
  skip "Open MPI's pml monitoring component is missing"

# 4000 atoms, 250 steps, thermo every 50: about 2 s at 2 ranks.
need_lammps 250 50

thermo() { # the thermo table: from the "Step ..." header to "Loop time"
  awk '/^ *Step /{on=1} /^Loop time/{on=0} on' "$1"
}
mkdir "$WORK/bare" "$WORK/rec"
(cd "$WORK/bare" && mpirun_n 2 "$LMP" -in ../in.melt -log none > out 2> err) ||
  fail "bare LAMMPS run failed: $(tail -5 "$WORK/bare/err")"
thermo "$WORK/bare/out" > "$WORK/bare/thermo"
[ "$(wc -l < "$WORK/bare/thermo")" -eq 7 ] ||
  fail "bare run: expected a thermo table of 1 header + 6 rows, got: $(cat "$WORK/bare/thermo")"

record_monitored 300 "$LMP" -in ../in.melt -log none
thermo "$WORK/rec/out" > "$WORK/rec/thermo"
diff "$WORK/bare/thermo" "$WORK/rec/thermo" > "$WORK/thermo.diff" ||
  fail "the thermo table changed under phantom record: $(cat "$WORK/thermo.diff")"
check_recorded_trace
"$PHANTOM" dump "$WORK/trace" --json > "$WORK/dump.jsonl" 2> "$WORK/dump.err" ||
  fail "phantom dump --json failed: $(cat "$WORK/dump.err")"
python3 "$top_srcdir/tests/count_p2p.py" "$WORK/dump.jsonl" "$WORK/mon" 2 > "$WORK/count" ||
  fail "point-to-point counts differ from Open MPI's: $(cat "$WORK/count")"
cat "$WORK/count"

# LAMMPS is C++ without debug information: its call sites are symbols,
# shown demangled (c++filt, binutils', is the oracle) with the address that
# tells a function's calls apart.
"$PHANTOM" stats "$WORK/trace" --json > "$WORK/stats.json" || fail "phantom stats --json"
python3 - "$WORK/stats.json" <<'PY' || fail "LAMMPS call sites are not shown demangled"
import json, subprocess, sys
sites = [s for s in json.load(open(sys.argv[1]))["sites"] if (s["function"] or "").startswith("_Z")]
if len(sites) < 4: sys.exit(f"{len(sites)} C++ call sites: {sites}")
names = subprocess.run(["c++filt"], input="\n".join(s["function"] for s in sites), capture_output=True,
                       text=True, check=True).stdout.splitlines()
for s, name in zip(sites, names):
    rest = s["where"][len(name):]
    if not s["where"].startswith(name + " (liblammps") or "+0x" not in rest or not rest.endswith(")"):
        sys.exit(f"site {s['id']}: {s['where']!r}, c++filt says {name!r}")
print(f"{len(sites)} C++ call sites demangled, e.g. {sites[0]['where']}")
PY
echo "ok: LAMMPS melt, 2 ranks: thermo table unchanged, $(grep -c . "$WORK/dump.jsonl") dump lines"
