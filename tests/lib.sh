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

mpirun_n() { n=$1; shift; timeout "${PHANTOM_TEST_TIMEOUT:-300}" mpirun --oversubscribe -np "$n" "$@"; }

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }

# Build one of our test programs from tests/progs into $WORK.
build_prog() {
  src="$top_srcdir/tests/progs/$1"
  out="$WORK/${1%.*}"
  case "$1" in
    *.f90) mpif90 -g -O1 -o "$out" "$src" -I"$top_srcdir/tests/progs" ;;
    *) mpicc -g -O1 -std=c11 -Wall -Wextra -o "$out" "$src" -I"$top_srcdir/tests/progs" -lm ;;
  esac
  echo "$out"
}
