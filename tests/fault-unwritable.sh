#!/bin/sh
# fault-unwritable.sh - a trace directory that cannot be created or written.
# The recorder must not change the job: same exit code and stdout as a bare
# run, and on stderr exactly one "phantom: rank N: ... recording stopped" line
# per rank and nothing else from phantom.  Two ways to fail (we run as root, so
# permissions alone stop nothing):
#   1. PHANTOM_TRACE_DIR below a regular file (ENOTDIR), at 3 ranks;
#   2. PHANTOM_TRACE_DIR on a read-only tmpfs (EROFS), when mount is allowed.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
prog=$(build_prog fault-loop.c)
NP=3

mpirun_n $NP "$prog" -n 20000 -x 0 > "$WORK/bare.out" 2> "$WORK/bare.err" || fail "bare run failed"
grep -q "^fault-loop: $NP ranks, 20000 iterations" "$WORK/bare.out" || fail "bare run: unexpected output"

check_case() { # name trace-dir expected-reason
  name=$1 dir=$2 reason=$3
  rc=0
  OMPI_MCA_mca_base_env_list="LD_PRELOAD=$PRELOAD_LIST;PHANTOM_TRACE_DIR=$dir;PHANTOM_LOG=1" \
    mpirun_n $NP "$prog" -n 20000 -x 0 > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
  [ $rc -eq 0 ] || fail "$name: the job exited $rc, the bare run 0: $(cat "$WORK/$name.err")"
  cmp -s "$WORK/bare.out" "$WORK/$name.out" ||
    fail "$name: stdout differs from the bare run: $(diff "$WORK/bare.out" "$WORK/$name.out")"
  grep 'phantom' "$WORK/$name.err" > "$WORK/$name.warn" || true
  [ "$(wc -l < "$WORK/$name.warn")" -eq $NP ] ||
    fail "$name: expected $NP phantom lines on stderr, got: $(cat "$WORK/$name.err")"
  r=0
  while [ $r -lt $NP ]; do
    n=$(grep -c "^phantom: rank $r: .*recording stopped" "$WORK/$name.warn" || true)
    [ "$n" -eq 1 ] || fail "$name: rank $r warned $n times: $(cat "$WORK/$name.warn")"
    r=$((r + 1))
  done
  grep -q "$reason" "$WORK/$name.warn" || fail "$name: the warning does not say '$reason': $(cat "$WORK/$name.warn")"
  echo "$name: ok: $(head -1 "$WORK/$name.warn")"
}

: > "$WORK/file"
check_case notdir "$WORK/file/sub/trace" "Not a directory"
[ ! -e "$WORK/file/sub" ] || fail "notdir: something was created below a regular file"

mkdir "$WORK/ro"
if mount -t tmpfs -o ro,size=64k tmpfs "$WORK/ro" 2>/dev/null; then
  trap 'rc=$?; umount "$WORK/ro" 2>/dev/null || true; (exit $rc); cleanup' EXIT
  check_case readonly "$WORK/ro/trace" "Read-only file system"
  umount "$WORK/ro"
else
  echo "readonly: not run (mount is not permitted here)"
fi
