#!/bin/sh
# fault-disk-full.sh - the trace fills its file system mid-run.
# A 64 KiB tmpfs holds the trace of 2 ranks x 200,000 events (about 300 KB
# compressed per rank), written in 16 KiB blocks so that some frames are
# complete when the device fills.  The job must end with its own exit code (3) and its
# own stdout; each rank warns exactly once that recording stopped because the
# device is full; and the reader either reads what was flushed or stops with
# exactly one line naming the file and the offset (exit 1), never a crash.
# Without permission to mount, RLIMIT_FSIZE on the ranks plays the full disk
# (then over TCP: Open MPI's shared-memory files would hit the limit first).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
prog=$(build_prog fault-loop.c)

mpirun_n 2 "$prog" -n 100000 -x 3 > "$WORK/bare.out" 2> "$WORK/bare.err" && brc=0 || brc=$?
[ $brc -eq 3 ] || fail "bare run exited $brc, expected the program's 3: $(cat "$WORK/bare.err")"

mkdir "$WORK/small"
if [ "${PHANTOM_TEST_NO_MOUNT:-0}" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$WORK/small" 2>/dev/null; then
  trap 'rc=$?; umount "$WORK/small" 2>/dev/null || true; (exit $rc); cleanup' EXIT
  how="64 KiB tmpfs"
  set -- mpirun --oversubscribe -np 2 "$prog" -n 100000 -x 3
  reason="No space left on device"
else
  how="ulimit -f 64 on the ranks"
  set -- mpirun --oversubscribe -np 2 --mca btl self,tcp sh -c 'ulimit -f 64 && exec "$0" "$@"' \
    "$prog" -n 100000 -x 3
  reason="File too large"
fi
export PHANTOM_BLOCK_KB=16
rc=0
timeout 300 "$PHANTOM" record -o "$WORK/small/trace" -- "$@" > "$WORK/rec.out" 2> "$WORK/rec.err" || rc=$?
[ $rc -eq 3 ] || fail "recorded run ($how) exited $rc, the bare run 3: $(cat "$WORK/rec.err")"
cmp -s "$WORK/bare.out" "$WORK/rec.out" ||
  fail "stdout differs from the bare run: $(diff "$WORK/bare.out" "$WORK/rec.out")"
for r in 0 1; do
  n=$(grep -c "^phantom: rank $r: .*recording stopped" "$WORK/rec.err" || true)
  [ "$n" -eq 1 ] || fail "rank $r warned $n times that recording stopped: $(grep phantom "$WORK/rec.err")"
done
grep "^phantom: rank" "$WORK/rec.err" | grep -v -q "$reason" &&
  fail "a warning does not say '$reason': $(grep phantom "$WORK/rec.err")"
echo "recorded run ($how): exit 3, stdout unchanged; $(grep -m1 '^phantom: rank' "$WORK/rec.err")"
ls -l "$WORK/small/trace" || fail "no trace directory"

# What was flushed: readable, or one line naming the file and the offset.
for verb in stats dump; do
  rc=0
  "$PHANTOM" $verb "$WORK/small/trace" > "$WORK/$verb.out" 2> "$WORK/$verb.err" || rc=$?
  case $rc in
    0)
      [ -s "$WORK/$verb.out" ] || fail "phantom $verb printed nothing"
      # recording stopped on both ranks: both streams must be reported incomplete
      for r in 0 1; do
        grep -q "warning: rank $r: .*no end record" "$WORK/$verb.err" ||
          fail "phantom $verb does not say that rank $r's stream is incomplete: $(cat "$WORK/$verb.err")"
      done
      echo "phantom $verb: read the flushed part; $(grep -c . "$WORK/$verb.err") lines on stderr" ;;
    1)
      [ "$(wc -l < "$WORK/$verb.err")" -eq 1 ] ||
        fail "phantom $verb: expected one line on stderr, got: $(cat "$WORK/$verb.err")"
      file=$(sed -n 's|.*\(rank-00000[01]\.evt\): offset \([0-9][0-9]*\).*|\1|p' "$WORK/$verb.err")
      off=$(sed -n 's|.*\(rank-00000[01]\.evt\): offset \([0-9][0-9]*\).*|\2|p' "$WORK/$verb.err")
      [ -n "$file" ] && [ -n "$off" ] ||
        fail "phantom $verb: the error does not name the file and offset: $(cat "$WORK/$verb.err")"
      # It must be the first frame the full device cut short: all before it are whole.
      bad=$(python3 "$top_srcdir/tests/zstd_frames.py" "$WORK/small/trace/$file" --first-bad)
      [ "$off" = "$bad" ] || fail "phantom $verb: error at offset $off of $file, but its first cut frame is at $bad"
      echo "phantom $verb: exit 1: $(cat "$WORK/$verb.err")" ;;
    *) fail "phantom $verb exited $rc: $(tail -5 "$WORK/$verb.err")" ;;
  esac
done
