#!/bin/sh
# LAMMPS (Debian `lammps`, example `melt`, 4000 atoms, 250 steps) recorded
# at 2 ranks with its message log, then replayed: rank 0 alone (every
# message, every collective from the log) and both ranks as a subgroup.  The
# thermo table rank 0 prints - energies and pressures summed over both
# ranks' atoms - must be the recorded run's, digit for digit.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
need mpirun
need_lammps 250 50

thermo() { awk '/^ *Step /{on=1} /^Loop time/{on=0} on' "$1"; }
cd "$WORK"
"$PHANTOM" record --log -o "$WORK/lmp.trace" -- mpirun --oversubscribe -np 2 "$LMP" -in in.melt -log none \
  > rec.out 2> rec.err || fail "recording LAMMPS: $(tail -5 rec.err)"
thermo rec.out > rec.thermo
[ "$(wc -l < rec.thermo)" -eq 7 ] || fail "recorded run: expected 1 header + 6 thermo rows, got: $(cat rec.thermo)"
for mode in "--ranks 0 --isolated" "--ranks 0-1"; do
  replay_app "$WORK/lmp.trace" "$WORK" "$WORK/rec.thermo" thermo "$mode" "$LMP" -in in.melt -log none
done
