#!/bin/sh
# The progress bar of phantom predict, seen through a pseudo-terminal
# (script(1)): drawn on stderr with a percentage (the total comes from
# meta.json, no counting pass), erased at the end, never in the JSON on
# stdout, and absent with --no-progress or when stderr is not a terminal.
# PHANTOM_PROGRESS_DELAY=0 draws it from the start, so the test does not
# depend on how fast this machine simulates.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
need script
"$SYNTH" stencil "$WORK/st.trace" --dims 4,4,4 --iters 300 > /dev/null || fail "synth stencil"
total=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$WORK/st.trace/meta.json") ||
  fail "meta.json has no event count"
P="$top_srcdir/platforms/ib-qdr.conf"
cmd="$PREDICT $WORK/st.trace --platform $P --json --threads 1"
PHANTOM_PROGRESS_DELAY=0 script -q -e -c "$cmd > $WORK/tty.json" /dev/null > "$WORK/tty.err" ||
  fail "predict under a terminal"
$cmd > "$WORK/plain.json" 2> "$WORK/plain.err" || fail "predict"
cmp -s "$WORK/tty.json" "$WORK/plain.json" || fail "the JSON differs with the progress bar"
[ ! -s "$WORK/plain.err" ] || fail "output on stderr that is not a terminal: $(cat "$WORK/plain.err")"
python3 - "$WORK/tty.err" "$total" <<'PY' || fail "no proper progress bar: $(tr '\r' '\n' < "$WORK/tty.err" | head -5)"
import re, sys
out, total = open(sys.argv[1], errors='replace', newline='').read(), int(sys.argv[2])
frames = [f for f in out.split('\r') if f.strip()]
bars = [f for f in frames if re.match(r'simulating +\d+% \[[# ]{20}\] [\d.]+[kMG]/[\d.]+[kMG] events', f)]
if not bars: sys.exit('no bar with a percentage')
want = f'{total / 1e6:.1f}M' if total >= 1e6 else f'{total / 1e3:.0f}k'
if f'/{want} events' not in bars[0]: sys.exit(f'the total is not meta.json\'s {want}: {bars[0]}')
if out.rstrip('\r\n').split('\r')[-1].strip(): sys.exit('the bar is not erased at the end')
print(f'{len(bars)} redraws, first: {bars[0].strip()}')
PY
PHANTOM_PROGRESS_DELAY=0 script -q -e -c "$cmd --no-progress > /dev/null" /dev/null > "$WORK/none.err" ||
  fail "predict --no-progress under a terminal"
[ ! -s "$WORK/none.err" ] || fail "--no-progress drew: $(cat "$WORK/none.err")"
echo "simmpi-progress: ok"
