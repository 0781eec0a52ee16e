#!/bin/sh
# A replay on a node that something else uses (doc/replay.md, "A busy
# node").  A rank that waits in MPI spins on its CPU, so alone on a core it
# has it nearly all of the time; a busy loop pinned to the replayed rank's
# core takes half of it, and the computation measured holds the turns the
# rank waited.  phantom replay then says so in one warning line naming the
# rank and its share, and meta.json has the share (cpu_busy, per rank and
# per run) and the verdict (shared_cpu).  A replay without the busy loop
# has its share too.
. "$top_srcdir/tests/lib.sh"
command -v taskset > /dev/null || skip "taskset is not installed"
prog=$(cd "$WORK" && build_prog stencil.c)
T="$WORK/st.trace"
# 150 iterations of a 1024 x 1024 grid: a replay of a third of a second or
# more, past the 0.2 s below which start-up's own waits could decide
timeout 300 "$PHANTOM" record --log -o "$T" -- mpirun -np 2 "$prog" 1024 150 > "$WORK/rec" 2>&1 ||
  fail "recording the stencil: $(tail -3 "$WORK/rec")"

# busy RESULT: rank 0's cpu_busy, checked against shared_cpu and its runs
busy() {
  python3 - "$T/replay/$1/meta.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))['replay']['replays'][-1]['per_rank'][0]
b, runs = r['cpu_busy'], [x['cpu_busy'] for x in r['runs']]
if not (isinstance(b, float) and 0 < b <= 1): sys.exit(f'cpu_busy {b!r}')
if len(runs) != 1 or runs[0] != b: sys.exit(f'runs {runs}, rank {b}')
if r['shared_cpu'] != (b < 0.8): sys.exit(f"shared_cpu {r['shared_cpu']} at cpu_busy {b}")
print(b)
PY
}

# the rank on core 0, alone there: no other process of this test runs
"$PHANTOM" replay "$T" --ranks 0 --isolated --name alone -- taskset -c 0 "$prog" 1024 150 \
  > "$WORK/alone" 2>&1 || fail "replay: $(tail -3 "$WORK/alone")"
b=$(busy alone) || fail "$T/replay/alone/meta.json: $b"
echo "alone on core 0: cpu_busy $b"

# ... and with a busy loop on the same core
taskset -c 0 sh -c 'while :; do :; done' &
spin=$!
"$PHANTOM" replay "$T" --ranks 0 --isolated --name shared -- taskset -c 0 "$prog" 1024 150 \
  > "$WORK/shared" 2>&1
rc=$?
kill "$spin"
[ $rc = 0 ] || fail "replay beside a busy loop: $(tail -3 "$WORK/shared")"
b=$(busy shared) || fail "$T/replay/shared/meta.json: $b"
echo "beside a busy loop: cpu_busy $b"
python3 -c "import sys; sys.exit(not float(sys.argv[1]) < 0.7)" "$b" ||
  fail "rank 0 had its CPU $b of the time beside a busy loop on its core"
pct=$(python3 -c "print(f'{100 * float(__import__(\"sys\").argv[1]):.0f}')" "$b")
grep -q "^phantom replay: warning: rank 0 had its CPU $pct% of the time .*other work shared this node" \
  "$WORK/shared" || fail "no warning naming rank 0 and $pct%: $(cat "$WORK/shared")"
[ "$(grep -c warning "$WORK/shared")" = 1 ] || fail "more than one warning line: $(cat "$WORK/shared")"
exit 0
