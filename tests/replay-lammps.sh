#!/bin/sh
# LAMMPS (Debian `lammps`, example `melt`, 4000 atoms, 250 steps) recorded
# at 2 ranks with its message log, then replayed: rank 0 alone (every
# message, every collective from the log) and both ranks as a subgroup.  The
# thermo table rank 0 prints - energies and pressures summed over both
# ranks' atoms - must be the recorded run's, digit for digit.
. "$top_srcdir/tests/lib.sh"
need mpirun
need_lammps 250 50

thermo() { awk '/^ *Step /{on=1} /^Loop time/{on=0} on' "$1"; }
cd "$WORK"
"$PHANTOM" record --log -o "$WORK/lmp.trace" -- mpirun --oversubscribe -np 2 "$LMP" -in in.melt -log none \
  > rec.out 2> rec.err || fail "recording LAMMPS: $(tail -5 rec.err)"
thermo rec.out > rec.thermo
[ "$(wc -l < rec.thermo)" -eq 7 ] || fail "recorded run: expected 1 header + 6 thermo rows, got: $(cat rec.thermo)"
for mode in "--ranks 0 --isolated" "--ranks 0-1"; do
  # shellcheck disable=SC2086 # the options are words
  timeout 300 "$PHANTOM" replay "$WORK/lmp.trace" $mode --name r --force -- "$LMP" -in in.melt -log none \
    > rep.out 2> rep.err || fail "replay $mode: $(tail -5 rep.err)"
  thermo rep.out > rep.thermo
  diff rec.thermo rep.thermo > thermo.diff || fail "replay $mode: thermo table differs: $(cat thermo.diff)"
  grep -Eq '^ +[01] .*(partial|end of recording|killed)$' rep.err && fail "replay $mode: did not reach MPI_Finalize: $(cat rep.err)"
  echo "ok: replay $mode: thermo table identical; $(grep -E '^ +[01] ' rep.err | awk '{print "rank " $1 ": " $2 " events"}' | tr '\n' ' ')"
done
