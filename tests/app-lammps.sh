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
# tells a function's calls apart.  One call reached from two callers
# (CommBrick::borders() from Verlet::setup and from Verlet::run) is two
# sites, and each label ends with its caller, demangled too.
"$PHANTOM" stats "$WORK/trace" --json > "$WORK/stats.json" || fail "phantom stats --json"
python3 - "$WORK/stats.json" <<'PY' || fail "LAMMPS call sites are not shown demangled"
import json, re, subprocess, sys
def demangle(names):
    return subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                          check=True).stdout.splitlines()
sites = [s for s in json.load(open(sys.argv[1]))["sites"] if (s["function"] or "").startswith("_Z")]
if len(sites) < 4: sys.exit(f"{len(sites)} C++ call sites: {sites}")
names = demangle([s["function"] for s in sites])
callers = demangle([(s["caller"] or {}).get("function") or "-" for s in sites])
shared = {}
for s, name, caller in zip(sites, names, callers):
    label = re.fullmatch(re.escape(name) + r" \((liblammps[^ ]*\+0x[0-9a-f]+)\)( from (.*))?", s["where"])
    if not label:
        sys.exit(f"site {s['id']}: {s['where']!r}, c++filt says {name!r}")
    shared.setdefault(label.group(1), []).append((s, label.group(3), caller))
parted = 0
for at, same in shared.items():
    named = len({caller for _, _, caller in same}) == len(same) # else the callers' addresses
    if len(same) > 1 and len({shown for _, shown, _ in same}) != len(same):
        sys.exit(f"sites of {at} still read the same: {[s['where'] for s, _, _ in same]}")
    for s, shown, caller in same:
        if len(same) > 1 and (shown != caller if named else not re.fullmatch(r"liblammps[^ ]*\+0x[0-9a-f]+", shown or "")):
            sys.exit(f"site {s['id']}: {s['where']!r} shares {at} with another site, c++filt says its caller is {caller!r}")
        if len(same) == 1 and shown is not None:
            sys.exit(f"site {s['id']}: {s['where']!r} names a caller though no other site reads the same")
    parted += len(same) > 1
if not parted: sys.exit("no call reached from two callers: the check of their labels cannot fail")
print(f"{len(sites)} C++ call sites demangled, {parted} reached from several callers, e.g. " +
      next(s["where"] for same in shared.values() if len(same) > 1 for s, _, _ in same))
PY
echo "ok: LAMMPS melt, 2 ranks: thermo table unchanged, $(grep -c . "$WORK/dump.jsonl") dump lines"
