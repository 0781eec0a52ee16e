#!/bin/sh
# app-espresso.sh - Quantum ESPRESSO (Debian `quantum-espresso`), a Fortran
# code through "use mpi", on the silicon SCF of its own examples, at 2 ranks:
#   - under `phantom record --log` it prints the same SCF energies as the
#     bare run, and the recorder warns about nothing (pw.x makes and frees
#     thousands of datatypes from Fortran, whose handles Open MPI hands out
#     again: a recorder that missed MPI_TYPE_FREE logged wrong sizes and
#     stopped with "cannot pack");
#   - its Fortran local calls are counted, every datatype it commits freed;
#   - replayed, rank 0 alone (every message from the log) and both ranks as
#     a subgroup print the recorded SCF energies digit for digit and reach
#     the end of the recording.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
need mpirun
need python3
PW=$(command -v pw.x || true)
[ -n "$PW" ] || skip "Quantum ESPRESSO is not installed (apt-get install quantum-espresso quantum-espresso-data)"
PSEUDO=/usr/share/espresso/pseudo
[ -s "$PSEUDO/Si.pz-vbc.UPF" ] ||
  skip "the Si pseudopotential is not installed (apt-get install quantum-espresso-data)"

# Silicon, 2 atoms, 6x6x6 k-points: about a second at 2 ranks.
cat > "$WORK/si.scf.in" <<EOF
 &control
    calculation = 'scf', prefix = 'si', pseudo_dir = '$PSEUDO/', outdir = './scratch/'
 /
 &system
    ibrav = 2, celldm(1) = 10.2, nat = 2, ntyp = 1, ecutwfc = 24.0
 /
 &electrons
    conv_thr = 1.0d-10
 /
ATOMIC_SPECIES
 Si  28.086  Si.pz-vbc.UPF
ATOMIC_POSITIONS alat
 Si 0.00 0.00 0.00
 Si 0.25 0.25 0.25
K_POINTS automatic
 6 6 6 1 1 1
EOF
export OMP_NUM_THREADS=1
# The SCF's energies, iteration by iteration, and its end.
energies() {
  grep -E '^!? +total energy +=|estimated scf accuracy|convergence has been achieved' "$1"
}
mkdir "$WORK/bare" "$WORK/rec" "$WORK/rep"
(cd "$WORK/bare" && mpirun_n 2 "$PW" -in ../si.scf.in > out 2> err) ||
  fail "bare pw.x run failed: $(tail -5 "$WORK/bare/err")"
energies "$WORK/bare/out" > "$WORK/bare/energies"
grep -q '^!' "$WORK/bare/energies" && grep -q 'convergence has been achieved' "$WORK/bare/energies" ||
  fail "bare run: no converged SCF: $(tail -5 "$WORK/bare/out")"

record_monitored 300 "$PW" -in ../si.scf.in
energies "$WORK/rec/out" > "$WORK/rec/energies"
diff "$WORK/bare/energies" "$WORK/rec/energies" > "$WORK/energies.diff" ||
  fail "the SCF energies changed under phantom record: $(cat "$WORK/energies.diff")"
check_recorded_trace

"$PHANTOM" stats "$WORK/trace" --json > "$WORK/stats.json" || fail "phantom stats --json"
python3 - "$WORK/stats.json" <<'PY' || fail "pw.x's Fortran local calls are not counted"
import json, sys
for rk in json.load(open(sys.argv[1]))["ranks"]:
    c = {k: v["calls"] for k, v in rk["counted"].items()}
    made, freed = c.get("MPI_Type_commit", 0), c.get("MPI_Type_free", 0)
    if made < 100 or freed != made or c.get("MPI_Comm_rank", 0) < 100:
        sys.exit(f"rank {rk['rank']}: {c}")
    print(f"rank {rk['rank']}: {made} datatypes committed and freed, {c['MPI_Comm_rank']} MPI_Comm_rank")
PY

for mode in "--ranks 0 --isolated" "--ranks 0-1"; do
  rm -rf "$WORK/rep/scratch"
  replay_app "$WORK/trace" "$WORK/rep" "$WORK/rec/energies" energies "$mode" "$PW" -in ../si.scf.in
done
echo "ok: Quantum ESPRESSO pw.x, 2 ranks: $(grep -c . "$WORK/rec/energies") SCF lines unchanged under record and replay"
