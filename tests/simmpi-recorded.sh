#!/bin/sh
# A real recorded run: tests/progs/stencil.c at 4 ranks under `phantom record`,
# predicted on this machine's platform file.  The prediction must complete and
# be plausible: at least the longest rank's computation, at most 10 times the
# measured run time; every rank's time accounted for.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
need mpirun
prog=$(cd "$WORK" && build_prog stencil.c)
"$PHANTOM" record -o "$WORK/s.trace" -- timeout 300 mpirun --oversubscribe -np 4 "$prog" 128 60 \
  > "$WORK/out" 2>&1 || { cat "$WORK/out"; fail "stencil under phantom record"; }
P="$top_srcdir/platforms/shm-2core-local.conf"
$PREDICT "$WORK/s.trace" --platform "$P" --ppn 4 --json > "$WORK/p.json" || fail "predict failed"
python3 - "$WORK/p.json" <<'PY' || fail "implausible prediction"
import json, sys
d = json.load(open(sys.argv[1]))
comp = max(r["comp_ps"] for r in d["ranks"])
pred, meas = d["predicted_ps"], d["measured_ns"] * 1000
print(f"predicted {pred / 1e9:.3f} ms, measured {meas / 1e9:.3f} ms, longest computation {comp / 1e9:.3f} ms")
assert d["nranks"] == 4 and all(r["complete"] for r in d["ranks"]), "ranks incomplete"
assert comp <= pred <= 10 * meas, "outside [computation, 10 x measured]"
for r in d["ranks"]:
    assert r["comp_ps"] + r["overhead_ps"] + r["transfer_ps"] + r["syn_ps"] == r["finish_ps"], r
ops = d["ops"]
assert ops["MPI_Waitall"]["calls"] == 4 * 60 and ops["MPI_Isend"]["calls"] == 4 * 2 * 60, ops
assert ops["MPI_Allreduce"]["calls"] == 4 * 6, ops
assert d["simulator"]["messages"] > 0 and d["simulator"]["unmatched_messages"] == 0
PY
# Each computation unit is the recorded gap less the recorder's own part of
# it, which it timed at MPI_Init (meta.json clock.probe_gap_ns, whole ns;
# at least 0), in predict, in the SimGrid export and in phantom stats
# alike: exact sums from the events.  Predict and the export add each rank's
# start-up (its CPU time before MPI_Init, on its first event), which stats
# gives apart.
"$PHANTOM" dump "$WORK/s.trace" --json > "$WORK/s.jsonl" || fail "phantom dump --json"
"$PHANTOM" export "$WORK/s.trace" --format simgrid -o "$WORK/s.tit" > /dev/null || fail "phantom export"
"$PHANTOM" stats "$WORK/s.trace" --json > "$WORK/stats.json" || fail "phantom stats --json"
python3 - "$WORK/s.trace/meta.json" "$WORK/s.jsonl" "$WORK/p.json" "$WORK/s.tit.d" "$WORK/stats.json" <<'PY' ||
import json, sys
meta, dump, pred, tit, stats = sys.argv[1:]
probe_f = json.load(open(meta))["clock"]["probe_gap_ns"]
assert 0 < probe_f < 1000, f"probe_gap_ns {probe_f}: the recorder did not time its part of a gap"
probe = int(probe_f + 0.5)
comp, prev, raw, startup = {}, {}, {}, {}
for line in open(dump):
    e = json.loads(line)
    if "op" not in e:
        continue
    r = e["rank"]
    if r not in prev:
        startup[r] = e.get("startup_ns", 0)
        assert e["op"] == "MPI_Init" and 0 < startup[r] < 10**10, f"rank {r}: start-up {startup[r]} ns"
    if r in prev:
        gap = max(e["t_entry"] - prev[r], 0)
        comp[r] = comp.get(r, 0) + max(gap - probe, 0)
        raw[r] = raw.get(r, 0) + gap
    prev[r] = e["t_exit"]
p = json.load(open(pred))
assert p["host_probe_gap_ns"] == probe, p["host_probe_gap_ns"]
for r in p["ranks"]:
    k = r["rank"]
    assert r["comp_ps"] == 1000 * (comp[k] + startup[k]), (k, r["comp_ps"], comp[k], startup[k], raw[k])
    assert r["startup_ps"] == 1000 * startup[k], (k, r["startup_ps"], startup[k])
    n = sum(int(l.split()[2]) for l in open(f"{tit}/rank-{k}.txt") if l.split()[1] == "compute")
    assert n == comp[k] + startup[k], (k, n, comp[k], startup[k])
st = json.load(open(stats))
assert st["probe_gap_ns"] == probe, st["probe_gap_ns"]
for r in st["ranks"]:
    assert r["comp_ns"] == comp[r["rank"]], ("stats", r["rank"], r["comp_ns"], comp[r["rank"]])
    assert r["startup_ns"] == startup[r["rank"]], ("stats", r["rank"], r["startup_ns"], startup[r["rank"]])
print(f"probe {probe_f} ns: computation {sorted(comp.items())} ns, recorded gaps {sorted(raw.items())} ns, "
      f"start-up {sorted(startup.items())} ns")
PY
  fail "computation units are not the gaps less probe_gap_ns"

# The table for a terminal, and the same prediction twice.
$PREDICT "$WORK/s.trace" --platform "$P" --ppn 4 > "$WORK/table" || fail "table output"
grep -q "^predicted run time: " "$WORK/table" || fail "no predicted run time in the table"
grep -q "^MPI_Waitall " "$WORK/table" || fail "no per-function row"
$PREDICT "$WORK/s.trace" --platform "$P" --ppn 4 --json > "$WORK/p2.json"
cmp -s "$WORK/p.json" "$WORK/p2.json" || fail "two predictions of one recorded trace differ"

# Point-to-point across an intercommunicator (tests/progs/comms.c): its two
# sides are two communicators of the trace, paired by their gids.
prog=$(cd "$WORK" && build_prog comms.c)
(cd "$WORK" && "$PHANTOM" record -o "$WORK/c.trace" -- timeout 300 mpirun --oversubscribe -np 4 "$prog" \
  > "$WORK/out" 2>&1) || { cat "$WORK/out"; fail "comms under phantom record"; }
python3 - "$WORK/c.trace/meta.json" <<'PY' || fail "intercommunicator sides not paired by gid"
import json, sys
inter = [c for c in json.load(open(sys.argv[1]))['comms'] if c.get('remote')]
gids = sorted(int(c['gid'], 16) for c in inter)
assert len(inter) == 2 and gids[0] ^ 1 == gids[1], inter
PY
$PREDICT "$WORK/c.trace" --platform "$P" --ppn 4 --json > "$WORK/c.json" ||
  fail "predict on a trace with intercommunicator traffic"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["simulator"]["unmatched_messages"] == 0, d["simulator"]' \
  "$WORK/c.json" || fail "unmatched messages across the intercommunicator"
# Its Bcast across the intercommunicator (the even leader to the odd half)
# is simulated, as Open MPI's coll/inter runs it, and counted once
# (tests/simmpi-intercomm.sh checks its messages and times).
python3 - "$WORK/c.json" <<'PY' || fail "the intercommunicator Bcast is not simulated as coll/inter"
import json, sys
d = json.load(open(sys.argv[1]))
assert d['collectives']['bcast'].get('inter') == 1, d['collectives']
PY

# Gather, Iscatter, Alltoall, Allgather, Reduce_scatter_block, Allgatherv,
# Gatherv, Scatterv, Alltoallv, Alltoallw and Reduce_scatter across an
# intercommunicator (tests/progs/intercoll.c, which checks the data it
# receives), recorded: simulated as Open MPI runs them, counted once each.
prog=$(cd "$WORK" && build_prog intercoll.c)
(cd "$WORK" && "$PHANTOM" record -o "$WORK/ic.trace" -- timeout 300 mpirun --oversubscribe -np 4 "$prog" \
  > "$WORK/out" 2>&1) || { cat "$WORK/out"; fail "intercoll under phantom record"; }
$PREDICT "$WORK/ic.trace" --platform "$P" --ppn 4 --json > "$WORK/ic.json" || fail "predict intercoll"
python3 - "$WORK/ic.json" "$P" <<'PY' || fail "intercommunicator collectives not simulated as Open MPI runs them"
import json, re, sys
d = json.load(open(sys.argv[1]))
o = dict(re.findall(r'^(o_[sr]) = (\d+)ns$', open(sys.argv[2]).read(), re.M))
assert len(o) == 2, f"no o_s and o_r in ns in {sys.argv[2]}"
s, c, ops = d['simulator'], d['collectives'], d['ops']
# (Comm_split's agreement adds an allgather on MPI_COMM_WORLD)
assert c['gather'] == c['scatter'] == c['alltoall'] == c['reduce_scatter_block'] == {'inter': 1}, c
assert c['alltoallv'] == {'inter': 2} and c['reduce_scatter'] == {'inter': 1}, c  # Alltoallw as Alltoallv
assert c['gatherv'] == c['scatterv'] == c['allgatherv'] == {'inter': 1}, c
assert c['allgather']['inter'] == 1, c
assert s['unsimulated_collective_calls'] == 0 and s['unmatched_messages'] == 0, s
assert all(r['complete'] for r in d['ranks'])
# a Gather or Scatter is two messages (o_s and o_r twice), the Alltoall
# eight (every rank sends to both of the other group), the Allgather six
# (a gather in each group, the swap, a broadcast in each), the
# Reduce_scatter_block and the Reduce_scatter six (every rank to a rank 0,
# a scatter(v) in each), the Alltoallv and the Alltoallw five each (the
# pairs that send ints: none of 0 is posted), the Gatherv three (B's rank 1 sends its count and ints
# to its rank 0, which sends both ranks' to the root) and the Scatterv
# three (the root sends B's rank 0 the counts and the ints, and it sends
# rank 1 its own), the Allgatherv eight (the Gatherv's two in each group,
# the swap, a broadcast in each)
one = (int(o['o_s']) + int(o['o_r'])) * 1000
assert ops['MPI_Gather']['overhead_ps'] == ops['MPI_Iscatter']['overhead_ps'] == 2 * one, (one, ops)
assert ops['MPI_Alltoall']['overhead_ps'] == 8 * one, (one, ops)
for op in 'MPI_Allgather', 'MPI_Reduce_scatter_block', 'MPI_Reduce_scatter':
    assert ops[op]['overhead_ps'] == 6 * one, (op, one, ops)
assert ops['MPI_Alltoallv']['overhead_ps'] == ops['MPI_Alltoallw']['overhead_ps'] == 5 * one, (one, ops)
assert ops['MPI_Gatherv']['overhead_ps'] == ops['MPI_Scatterv']['overhead_ps'] == 3 * one, (one, ops)
assert ops['MPI_Allgatherv']['overhead_ps'] == 8 * one, (one, ops)
PY

# The same program at 5 ranks: groups of 3 and 2.  A Reduce_scatter's
# receive counts are the local group's (3 at the even ranks, 2 at the odd
# ones); the recorder took the remote group's, and read past the array of
# the smaller group.  An Alltoallv's are the remote group's.
(cd "$WORK" && "$PHANTOM" record -o "$WORK/ic5.trace" -- timeout 300 mpirun --oversubscribe -np 5 "$prog" \
  > "$WORK/out" 2>&1) || { cat "$WORK/out"; fail "intercoll at 5 ranks under phantom record"; }
"$PHANTOM" dump "$WORK/ic5.trace" --json > "$WORK/ic5.jsonl" || fail "phantom dump of intercoll at 5 ranks"
python3 - "$WORK/ic5.jsonl" <<'PY' || fail "intercommunicator per-rank sizes recorded wrongly"
import json, sys
seen = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get('op') in ('MPI_Reduce_scatter', 'MPI_Alltoallv', 'MPI_Alltoallw', 'MPI_Gatherv', 'MPI_Scatterv',
                       'MPI_Allgatherv'):
        seen[e['rank'], e['op']] = e.get('sbytes'), e.get('rbytes_v')
        seen[e['rank'], e['op'], 'own'] = e.get('bytes'), e.get('rbytes')
# Reduce_scatter: 32 ints over the local group, 11 + 11 + 10 or 16 + 16
for r in range(5):
    assert seen[r, 'MPI_Reduce_scatter'] == (None, [44, 44, 40] if r % 2 == 0 else [64, 64]), (r, seen)
# Alltoallv and Alltoallw: (i + 2j) % 3 * 4 ints from rank i of A to rank j of B, and
# (2i + j + 1) % 3 * 4 from rank j of B to rank i of A
a_to_b = lambda i, j: (i + 2 * j) % 3 * 16
b_to_a = lambda j, i: (2 * i + j + 1) % 3 * 16
for r in range(5):
    lr = r // 2
    want = ([a_to_b(lr, j) for j in range(2)], [b_to_a(j, lr) for j in range(2)]) if r % 2 == 0 else \
           ([b_to_a(lr, i) for i in range(3)], [a_to_b(i, lr) for i in range(3)])
    assert seen[r, 'MPI_Alltoallv'] == seen[r, 'MPI_Alltoallw'] == want, (r, seen[r, 'MPI_Alltoallv'], want)
# Allgatherv, Gatherv and Scatterv: group rank i sends or receives 4(i + 1)
# ints; the remote group's sizes at the root (world rank 0) and, for the
# Allgatherv, at every rank, and each rank's own
vb = lambda n: [16 * (i + 1) for i in range(n)]
for r in range(5):
    lr, nr = r // 2, 2 if r % 2 == 0 else 3
    assert seen[r, 'MPI_Allgatherv'] == (None, vb(nr)), (r, seen)
    assert seen[r, 'MPI_Allgatherv', 'own'] == (16 * (lr + 1), None), (r, seen)
    root = r == 0
    assert seen[r, 'MPI_Gatherv'] == (None, vb(2) if root else []), (r, seen)
    assert seen[r, 'MPI_Scatterv'] == (vb(2) if root else [], None), (r, seen)
    if r % 2:
        assert seen[r, 'MPI_Gatherv', 'own'][0] == seen[r, 'MPI_Scatterv', 'own'][1] == 16 * (lr + 1), (r, seen)
PY
# ... and predicted: the Alltoallv's and the Alltoallw's 8 messages that carry ints, the
# Reduce_scatter's 8 (3 and 2 ranks to a rank 0, a Scatterv of 2 and 1),
# the Gatherv's and Scatterv's 3 in B, and the Allgatherv's 11 (A's 2
# counts, 2 blocks and 2 broadcasts, B's 1 of each, and the swap)
$PREDICT "$WORK/ic5.trace" --platform "$P" --ppn 5 --json > "$WORK/ic5.json" || fail "predict intercoll at 5 ranks"
python3 - "$WORK/ic5.json" "$P" <<'PY' || fail "intercommunicator Alltoallv or Reduce_scatter simulated wrongly"
import json, re, sys
d = json.load(open(sys.argv[1]))
o = dict(re.findall(r'^(o_[sr]) = (\d+)ns$', open(sys.argv[2]).read(), re.M))
one = (int(o['o_s']) + int(o['o_r'])) * 1000
s, ops = d['simulator'], d['ops']
assert s['unsimulated_collective_calls'] == 0 and s['unmatched_messages'] == 0, s
assert all(r['complete'] for r in d['ranks'])
assert ops['MPI_Alltoallv']['overhead_ps'] == ops['MPI_Reduce_scatter']['overhead_ps'] == 8 * one, (one, ops)
assert ops['MPI_Alltoallw']['overhead_ps'] == 8 * one, (one, ops)
assert ops['MPI_Gatherv']['overhead_ps'] == ops['MPI_Scatterv']['overhead_ps'] == 3 * one, (one, ops)
assert ops['MPI_Allgatherv']['overhead_ps'] == 11 * one, (one, ops)
PY

# Persistent requests against plain ones on a duplicated communicator
# (tests/progs/persistent.c): a Start is posted on the request's
# communicator.  Before, it was posted on none and rank 1 deadlocked.
prog=$(cd "$WORK" && build_prog persistent.c)
"$PHANTOM" record -o "$WORK/pr.trace" -- timeout 300 mpirun -np 2 "$prog" 5 > "$WORK/out" 2>&1 ||
  { cat "$WORK/out"; fail "persistent under phantom record"; }
$PREDICT "$WORK/pr.trace" --platform "$P" --json > "$WORK/pr.json" ||
  fail "predict on persistent requests matched with plain ones"
python3 - "$WORK/pr.json" <<'PY' || fail "persistent requests simulated wrongly"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(r["complete"] for r in d["ranks"]), d["ranks"]
# 5 persistent sends to plain receives and 5 plain ones beside them, 5 plain
# sends to a persistent receive, and Comm_dup's allreduce of the context id
# (2 messages at 2 ranks)
assert d["simulator"]["messages"] == 17 and d["simulator"]["unmatched_messages"] == 0, d["simulator"]
assert d["ops"]["MPI_Start"]["calls"] == 10, d["ops"]["MPI_Start"]
PY
echo "recorded traces predicted"
