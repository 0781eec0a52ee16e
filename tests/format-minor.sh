#!/bin/sh
# format-minor.sh - a trace of a later minor version (doc/trace-format.md,
# section 4.2): records of types 0xF9-0xFF carry their length, and a reader
# that does not know them skips them.  A recorded trace gets two such
# records (0xFA with 5 bytes, 0xFF with none) in its first block, right
# after the block header, put there apart from phantom (the frame
# decompressed and recompressed by zstd(1), found by tests/zstd_frames.py):
# `phantom dump` and `predict` must read it exactly as the original.  One
# whose length runs past its block is corrupt: one line naming the file and
# the frame's offset, exit 1.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
need python3
need zstd
prog=$(build_prog p2p.c)
"$PHANTOM" record -o "$WORK/good" -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/rec.out" 2>&1 ||
  fail "recording failed: $(cat "$WORK/rec.out")"

# insert CASE BYTES(hex): CASE is good with BYTES after rank 0's first block header
insert() {
  rm -rf "${WORK:?}/$1"
  cp -r "$WORK/good" "$WORK/$1"
  PYTHONPATH="$top_srcdir/tests" python3 - "$WORK/$1/rank-000000.evt" "$2" "$WORK/$1.blk" <<'PY' ||
import subprocess, sys
import zstd_frames
path, extra, tmp = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
start, end, size, complete = next(zstd_frames.frames(data))
block = subprocess.run(["zstd", "-d", "-c"], input=data[start:end], capture_output=True, check=True).stdout
off = 0
for _ in range(3):  # the block header: first, base, next_req (doc/trace-format.md 4.1)
    while block[off] & 0x80:
        off += 1
    off += 1
open(tmp, "wb").write(block[:off] + extra + block[off:])
# from a file, so that the frame states its content size, as phantom's do
frame = subprocess.run(["zstd", "-q", "-c", tmp], capture_output=True, check=True).stdout
open(path, "wb").write(data[:start] + frame + data[end:])
PY
    fail "$1: could not rewrite the first frame"
}

# 0xFA, length 5, "hello"; 0xFF, length 0
insert ext "fa0568656c6c6fff00"
"$PHANTOM" dump "$WORK/good" > "$WORK/good.dump" || fail "dump of the recorded trace"
"$PHANTOM" dump "$WORK/ext" > "$WORK/ext.dump" 2> "$WORK/ext.err" || fail "dump with extension records: $(cat "$WORK/ext.err")"
[ -s "$WORK/good.dump" ] && [ ! -s "$WORK/ext.err" ] || fail "empty dump, or a complaint: $(cat "$WORK/ext.err")"
cmp -s "$WORK/good.dump" "$WORK/ext.dump" || fail "the dumps differ: $(diff "$WORK/good.dump" "$WORK/ext.dump" | head -5)"
[ "$(cmp "$WORK/good/rank-000000.evt" "$WORK/ext/rank-000000.evt" 2>&1)" ] || fail "the records were not inserted"
echo "format-minor: dump reads $(wc -l < "$WORK/ext.dump") events past two extension records as without them"
for t in good ext; do
  "$PHANTOM" predict "$WORK/$t" --platform "$top_srcdir/platforms/ib-qdr.conf" --json > "$WORK/$t.json" ||
    fail "predict $t"
done
python3 - "$WORK/good.json" "$WORK/ext.json" <<'PY' || fail "predict reads the trace with extension records otherwise"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
if a["predicted_ps"] != b["predicted_ps"] or a["ranks"] != b["ranks"] or a["ops"] != b["ops"]:
    sys.exit(f"FAIL: {a['predicted_s']} s, with extension records {b['predicted_s']} s")
print(f"format-minor: predict {b['predicted_s']} s, as without them")
PY

# 0xFB, length 1,000,000 in a block of a few KiB
insert long "fbc0843d"
first=$(python3 "$top_srcdir/tests/zstd_frames.py" "$WORK/long/rank-000000.evt" | head -1 | cut -d' ' -f1)
rc=0
"$PHANTOM" dump "$WORK/long" > /dev/null 2> "$WORK/long.err" || rc=$?
[ $rc -eq 1 ] || fail "a truncated extension record: exit $rc, expected 1"
[ "$(wc -l < "$WORK/long.err")" -eq 1 ] || fail "expected one line, got: $(cat "$WORK/long.err")"
grep -q "^phantom dump: $WORK/long/rank-000000.evt: offset $first: corrupt block (extension record truncated" \
  "$WORK/long.err" || fail "got: $(cat "$WORK/long.err")"
echo "format-minor: $(cat "$WORK/long.err")"

# STARTUP (0xF9, format 1.2) is an extension record that phantom reads: one
# with no value, or with 2^62 ns (146 years of CPU), is corrupt, named in one
# line, as is one (5 ns) before the recorder's own: two of them.
for c in "trunc f900 start-up record truncated" "huge f909808080808080808040 start-up time over 30 days" \
  "twice f90105 a second start-up record"; do
  set -- $c
  name=$1 hex=$2
  shift 2
  insert "$name" "$hex"
  rc=0
  "$PHANTOM" predict "$WORK/$name" --platform "$top_srcdir/platforms/ib-qdr.conf" > /dev/null 2> "$WORK/$name.err" || rc=$?
  [ $rc -eq 1 ] && [ "$(wc -l < "$WORK/$name.err")" -eq 1 ] || fail "STARTUP $name: exit $rc, $(cat "$WORK/$name.err")"
  grep -q "$WORK/$name/rank-000000.evt: offset [0-9]*: corrupt block ($*" "$WORK/$name.err" ||
    fail "STARTUP $name: got $(cat "$WORK/$name.err")"
  echo "format-minor: $(cat "$WORK/$name.err")"
done
