#!/bin/sh
# The writer is the reader's inverse: recorded traces of the test programs,
# copied event by event through ph_writer, dump exactly as the originals.
# And a first frame longer than the reader's first read dumps the same.
. "$top_srcdir/tests/lib.sh"
for src in p2p.c nonblocking.c collectives.c comms.c; do
  prog=$(cd "$WORK" && build_prog "$src")
  t="$WORK/${src%.c}.trace"
  PHANTOM_BLOCK_KB=1 "$PHANTOM" record -o "$t" -- mpirun --oversubscribe -np 4 "$prog" > "$WORK/out" 2>&1 \
    || { cat "$WORK/out"; fail "$src under phantom record"; }
  "$top_builddir/tests/trace_copy" "$t" "$t.copy" || fail "$src: trace_copy"
  "$PHANTOM" dump "$t" --json > "$WORK/a.jsonl"
  "$PHANTOM" dump "$t.copy" --json > "$WORK/b.jsonl"
  [ -s "$WORK/a.jsonl" ] || fail "$src: empty dump"
  cmp -s "$WORK/a.jsonl" "$WORK/b.jsonl" || { diff "$WORK/a.jsonl" "$WORK/b.jsonl" | head -5; fail "$src: copy differs"; }
  echo "roundtrip: $src $(wc -l < "$WORK/a.jsonl") lines identical"
done

# A frame longer than the reader's first read (64 KiB, which comes with the
# file's header when a reader opens the file): rank 0's first block stored
# in raw zstd blocks, so that its frame is as long as the block, reads the
# same as compressed.  The reader then reads 64 KiB, 128, 256, 512.
prog=$(cd "$WORK" && build_prog fault-loop.c)
t=$WORK/big.trace
PHANTOM_BLOCK_KB=512 PHANTOM_FLUSH_SECS=600 "$PHANTOM" record -o "$t" -- \
  mpirun --oversubscribe -np 2 "$prog" -n 20000 > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "fault-loop under phantom record"; }
cp -r "$t" "$t.raw"
python3 - "$top_srcdir/tests" "$t.raw/rank-000000.evt" <<'PY' || fail "storing rank 0's first frame raw"
import struct, subprocess, sys
sys.path.insert(0, sys.argv[1])
import zstd_frames
path = sys.argv[2]
data = open(path, "rb").read()
start, end, size, _ = next(zstd_frames.frames(data))
block = subprocess.run(["zstd", "-dc"], input=data[start:end], capture_output=True, check=True).stdout
assert len(block) == size > 4 * 65536, (len(block), size)
# RFC 8878: single segment, 8-byte content size, no checksum; raw blocks of
# at most 128 KiB, the last one flagged
frame = struct.pack("<IB", 0xFD2FB528, 0xE0) + struct.pack("<Q", size)
for o in range(0, size, 1 << 17):
    piece = block[o:o + (1 << 17)]
    last = o + len(piece) == size
    frame += struct.pack("<I", len(piece) << 3 | last)[:3] + piece
open(path, "wb").write(data[:start] + frame + data[end:])
print("rank 0's first frame: %d bytes compressed, %d stored" % (end - start, len(frame)))
PY
"$PHANTOM" dump "$t" --json > "$WORK/a.jsonl" || fail "dump of $t"
"$PHANTOM" dump "$t.raw" --json > "$WORK/b.jsonl" || fail "dump of the stored frame"
[ "$(wc -l < "$WORK/a.jsonl")" -gt 40000 ] || fail "fault-loop: $(wc -l < "$WORK/a.jsonl") events, expected more than 40,000"
cmp -s "$WORK/a.jsonl" "$WORK/b.jsonl" || { diff "$WORK/a.jsonl" "$WORK/b.jsonl" | head -5; fail "the stored frame reads otherwise"; }
echo "roundtrip: a stored first frame of rank 0 reads the same, $(wc -l < "$WORK/a.jsonl") lines"
