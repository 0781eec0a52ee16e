#!/bin/sh
# ./check.sh - set up a fresh Debian 12 machine, build phantom, run every test.
#
#   1. installs the Debian packages phantom needs (tests/install-deps.sh);
#   2. builds in build/ and runs `make check` (real Open MPI jobs);
#   3. builds again with AddressSanitizer and UBSan in build-asan/ and runs
#      the suite once more, then with ThreadSanitizer in build-tsan/ and
#      runs the tests of our own threads (the simulator's workers, the
#      clustering's distance threads), which preload nothing into MPI jobs:
#      TSan's runtime cannot be preloaded into uninstrumented programs
#      (skip both with PHANTOM_NO_SANITIZERS=1).
# It ends with one line: "check: N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")"
top=$(pwd)
sh tests/install-deps.sh
[ -x configure ] || autoreconf -fi
jobs=$(nproc 2>/dev/null || echo 2)

run_suite() { # dir configure-args...
  dir=$1; shift
  mkdir -p "$dir"
  (cd "$dir" && "$top/configure" -q --enable-werror "$@" && make -s -j"$jobs") || return 1
  # SUITE_TESTS, when set, names the tests to run (all of them otherwise)
  (cd "$dir" && make -s check -j1 ${SUITE_TESTS:+"TESTS=$SUITE_TESTS"}) || true
  sed -n 's/^# \(TOTAL\|PASS\|SKIP\|XFAIL\|FAIL\|XPASS\|ERROR\): *\([0-9]*\)/\1 \2/p' "$dir/test-suite.log" > "$dir/summary.txt"
  cat "$dir/summary.txt"
}

# Can this kernel run a ThreadSanitizer program?  (Some address-space
# layouts defeat the runtime of Debian 12's gcc; the pass is then skipped.)
tsan_runs() {
  probe=$(mktemp -d)
  printf 'int main(void) { return 0; }\n' > "$probe/p.c"
  ok=1
  gcc -fsanitize=thread -o "$probe/p" "$probe/p.c" 2> /dev/null && "$probe/p" 2> /dev/null || ok=0
  rm -rf "$probe"
  [ $ok = 1 ]
}

count() { awk -v k="$2" '$1 == k { s += $2 } END { print s + 0 }' "$1"; }

rm -f build/summary.txt build-asan/summary.txt build-tsan/summary.txt
echo "== build and test (build/)"
run_suite build || { echo "check: 0 passed, 1 failed (build failed)"; exit 1; }
if [ "${PHANTOM_NO_SANITIZERS:-0}" = 0 ]; then
  echo "== build and test with AddressSanitizer and UBSan (build-asan/)"
  PHANTOM_ASAN_RUNTIME=$(gcc -print-file-name=libasan.so)
  export PHANTOM_ASAN_RUNTIME
  run_suite build-asan --enable-sanitizers || { echo "check: 0 passed, 1 failed (sanitizer build failed)"; exit 1; }
  unset PHANTOM_ASAN_RUNTIME
  if tsan_runs; then
    echo "== build and test our threads with ThreadSanitizer (build-tsan/)"
    SUITE_TESTS="tests/simmpi-determinism.sh tests/simmpi-closed-forms.sh tests/cluster-unit.sh"
    SUITE_TESTS="$SUITE_TESTS tests/cluster-planted.sh tests/cluster-period.sh"
    run_suite build-tsan --enable-sanitizers=thread ||
      { echo "check: 0 passed, 1 failed (thread sanitizer build failed)"; exit 1; }
    SUITE_TESTS=""
  else
    echo "== ThreadSanitizer cannot run a program on this machine: its pass is skipped"
  fi
fi
cat build/summary.txt build-asan/summary.txt build-tsan/summary.txt 2>/dev/null > summary.all || true
pass=$(count summary.all PASS); skip=$(count summary.all SKIP)
failed=$(( $(count summary.all FAIL) + $(count summary.all ERROR) + $(count summary.all XPASS) ))
rm -f summary.all
for d in build build-asan build-tsan; do
  [ -f "$d/test-suite.log" ] && [ "$failed" -gt 0 ] && grep -A30 '^FAIL\|^ERROR' "$d/test-suite.log" | head -80
done
echo "check: $pass passed, $failed failed, $skip skipped"
[ "$failed" -eq 0 ]
