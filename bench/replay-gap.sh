#!/bin/sh
# replay-gap.sh - the tools' own part of a gap, recorder and replayer side by
# side (not a test).
#
#   sh bench/replay-gap.sh BUILDDIR [POLLS]
#
# tests/progs/polls.c calls MPI_Test on MPI_REQUEST_NULL POLLS times back to
# back (default 1,000,000) at 2 ranks: its gaps hold next to nothing but the
# tools' own instructions.  It is recorded with its log and replayed as a
# subgroup with --keep-runs; then, per rank, over the loop's gaps:
#   recorder   the recorded gaps' mean and median, the recorder's probe
#              (meta.json clock.probe_gap_ns), and the mean unit left
#              (gaps less the probe, at least 0: what predict simulates);
#   replayer   the same from the raw times files, the replayer's probe
#              (replayer_gap_ns), and the mean unit of the result;
#   ratio      replayer over recorder, of the mean gap.
# doc/replay.md, "The replayer's own part of a gap", has a run.
set -eu
B=$(cd "${1:?usage: replay-gap.sh BUILDDIR [POLLS]}" && pwd)
POLLS=${2:-1000000}
S=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/phantom-replay-gap.XXXXXX")
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PHANTOM=$B/cli/phantom
mpicc -O2 -std=c11 -o "$W/polls" "$S/tests/progs/polls.c" -I"$S/tests/progs"
"$PHANTOM" record --log -o "$W/t" -- mpirun --oversubscribe -np 2 "$W/polls" "$POLLS" > "$W/rec.out" 2>&1 ||
  { cat "$W/rec.out"; exit 1; }
"$PHANTOM" replay "$W/t" --ranks 0-1 --name r --keep-runs -- "$W/polls" "$POLLS" > "$W/rep.out" 2>&1 ||
  { cat "$W/rep.out"; exit 1; }
for r in 0 1; do "$PHANTOM" dump "$W/t" --rank $r --json; done > "$W/rec.jsonl"
python3 - "$W/t" "$W/rec.jsonl" <<'PY'
import json, statistics as st, struct, sys
t, dump = sys.argv[1:]
rec_probe = json.load(open(f'{t}/meta.json'))['clock']['probe_gap_ns']
rp = int(rec_probe + 0.5)
meta = json.load(open(f'{t}/replay/r/meta.json'))['replay']['replays'][-1]['per_rank']
ev = {}
for l in open(dump):
    e = json.loads(l)
    if 'op' in e: ev.setdefault(e['rank'], []).append(e)
print(f"{'':9} {'rank':>4} {'mean gap':>9} {'median':>7} {'probe':>6} {'unit left':>10}  (ns, over the gaps between two Tests)")
for pr in meta:
    r = pr['rank']
    es = ev[r]
    g = [b['t_entry'] - a['t_exit'] for a, b in zip(es, es[1:]) if a['op'] == b['op'] == 'MPI_Test']
    rec = (st.mean(g), st.median(g), rec_probe, st.mean(max(0, x - rp) for x in g))
    raw = open(f'{t}/replay/.r.runs/run-1/rank-{r:06d}.times', 'rb').read()
    c0, t0, c1, t1, nev = struct.unpack_from('<5Q', raw, 16)
    npr = struct.unpack_from('<Q', raw, 80)[0]
    ns = lambda c: t0 + (c - c0) * (t1 - t0) // (c1 - c0)
    ent = [struct.unpack_from('<3Q', raw, 88 + 24 * i) for i in range(npr, npr + nev)]
    # the same calls as above: event k of the times is event k of the trace
    h = [ns(ent[k][0]) - ns(ent[k - 1][1]) for k in range(1, nev) if es[k - 1]['op'] == es[k]['op'] == 'MPI_Test']
    p = pr['replayer_gap_ns']
    rep = (st.mean(h), st.median(h), p, st.mean(max(0, x - p) for x in h))
    for name, v, n in (('recorder', rec, len(g)), ('replayer', rep, len(h))):
        print(f"{name:9} {r:>4} {v[0]:9.1f} {v[1]:7.0f} {v[2]:6.1f} {v[3]:10.2f}  {n} gaps")
    print(f"{'ratio':9} {r:>4} {rep[0] / rec[0]:9.2f}")  # units left near 0 make no useful ratio
PY
