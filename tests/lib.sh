# tests/lib.sh - shared by the test scripts: paths, mpirun, and assertions.
# Sourced with top_srcdir and top_builddir set by `make check`
# (AM_TESTS_ENVIRONMENT); runnable by hand from the build directory too.
set -eu
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
export top_srcdir top_builddir
PHANTOM="$top_builddir/cli/phantom"
PRELOAD="$top_builddir/libpmpi-rec/.libs/libpmpi-rec.so"
export PHANTOM_PRELOAD="$PRELOAD"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than cores, and no binding surprises on a 2-core machine.
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none

# A scratch directory per test, removed on success.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/phantom-test.XXXXXX")
cleanup() { rc=$?; if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then rm -rf "$WORK"; else echo "left $WORK for inspection" >&2; fi; }
trap cleanup EXIT

# Under the sanitizer build the preloaded library needs the ASan runtime first.
if [ -n "${PHANTOM_ASAN_RUNTIME:-}" ]; then
  export PHANTOM_PRELOAD_EXTRA="$PHANTOM_ASAN_RUNTIME"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}"
fi
# LD_PRELOAD for a job recorded by hand, as a production job is (no phantom record)
PRELOAD_LIST=$PRELOAD
[ -z "${PHANTOM_PRELOAD_EXTRA:-}" ] || PRELOAD_LIST="$PHANTOM_PRELOAD_EXTRA:$PRELOAD"

mpirun_n() { n=$1; shift; timeout "${PHANTOM_TEST_TIMEOUT:-300}" mpirun --oversubscribe -np "$n" "$@"; }

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

# need_lammps STEPS THERMO: Debian's LAMMPS (sets LMP) and its melt example,
# written to $WORK/in.melt (tests/melt-input.sh) to run STEPS steps with
# thermo output every THERMO; skips the test when either is missing.
need_lammps() {
  LMP=$(command -v lmp || command -v lmp_openmpi || command -v lammps || true)
  [ -n "$LMP" ] || skip "LAMMPS is not installed (apt-get install lammps lammps-examples)"
  sh "$top_srcdir/tests/melt-input.sh" "$WORK/in.melt" ||
    skip "the LAMMPS melt example is not installed (apt-get install lammps-examples)"
  sed -i -e "s/^run[[:space:]].*/run $1/" -e "s/^thermo[[:space:]].*/thermo $2/" "$WORK/in.melt"
  grep -q "^run $1" "$WORK/in.melt" || fail "cannot set the run length in the melt example ($WORK/in.melt)"
}

# Build one of our test programs from tests/progs into $WORK.
build_prog() {
  src="$top_srcdir/tests/progs/$1"
  out="$WORK/${1%.*}"
  case "$1" in
    *.f90) mpif90 -g -O1 -o "$out" "$src" -I"$top_srcdir/tests/progs" || fail "cannot build $1" ;;
    *) mpicc -g -O1 -std=c11 -Wall -Wextra -o "$out" "$src" -I"$top_srcdir/tests/progs" -lm || fail "cannot build $1" ;;
  esac
  echo "$out"
}

# Real applications: record CMD at 2 ranks with its message log, inside
# $WORK/rec, with Open MPI's pml monitoring counting the same execution's
# messages into $WORK/mon (the independent count tests/count_p2p.py reads).
record_monitored() { # timeout cmd args...
  t=$1; shift
  rc=0
  (cd "$WORK/rec" && timeout "$t" "$PHANTOM" record --log -o "$WORK/trace" -- \
     mpirun --oversubscribe -np 2 --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 3 \
       --mca pml_monitoring_filename "$WORK/mon" "$@" > out 2> err) || rc=$?
  [ $rc -eq 0 ] || fail "recorded run of $1 exited $rc: $(tail -5 "$WORK/rec/err")"
}

# The trace of record_monitored is complete, warning-free, has both ranks'
# events and logs, and phantom stats reads it.
check_recorded_trace() {
  ! grep -E 'recording stopped|warning|incomplete' "$WORK/rec/err" || fail "phantom complained (above)"
  grep -q '^phantom record: trace in .*: 2 ranks, [1-9][0-9]* events' "$WORK/rec/err" ||
    fail "phantom record did not finish the trace: $(grep phantom "$WORK/rec/err")"
  for r in 0 1; do
    for ext in evt log; do
      [ -s "$WORK/trace/rank-00000$r.$ext" ] || fail "$WORK/trace/rank-00000$r.$ext is missing or empty"
    done
  done
  "$PHANTOM" stats "$WORK/trace" > "$WORK/stats" 2> "$WORK/stats.err" ||
    fail "phantom stats failed: $(cat "$WORK/stats.err")"
}
