#!/bin/sh
# The writer is the reader's inverse: recorded traces of the test programs,
# copied event by event through ph_writer, dump exactly as the originals.
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
