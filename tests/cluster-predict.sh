#!/bin/sh
# PHANTOM's representative replay, end to end on LAMMPS at 4 ranks: a plan
# of one group, its representative replayed alone, and phantom predict on
# that one vector gives every rank exactly the representative's replayed
# computation (how close that comes to every rank's own vector is timing,
# measured in bench/representatives and doc/cluster.md); so does a replay
# of one iteration of our stencil's loop, extrapolated.  With host
# vectors, the imbalance program cut into 2 groups ({0} and {1-3}) predicts
# what a copy of its trace predicts in which ranks 1-3 take the
# representative's gaps between calls (tests/trace_copy's gaps-of edit):
# the same simulation, to the cluster stage's float precision of a gap.
. "$top_srcdir/tests/lib.sh"
need_lammps 100 50
plat="$top_srcdir/platforms/ib-qdr.conf"

# predict_json TRACE OUT [OPTION...]: phantom predict's JSON for TRACE in OUT
predict_json() {
  t=$1 out=$2; shift 2
  "$PHANTOM" predict "$t" --platform "$plat" --ppn 2 --json "$@" > "$out" || fail "phantom predict $t $*"
}

# same OWN GROUPED SUBSTITUTED (predict --json files): GROUPED and SUBSTITUTED
# agree, in every rank's computation and finish time and in the total, to
# one part in 10^7 (the cluster stage holds a gap as a float: 24 bits, 1 ns
# in 16 ms); OWN differs from them in some rank's computation, or the check
# could not tell the representative's gaps from a rank's own.
same() {
  python3 - "$@" <<'PY' || fail "imbalance: predict --groups differs from the trace with the representative's gaps"
import json, sys
own, grp, sub = (json.load(open(f)) for f in sys.argv[1:])
def close(a, b): return abs(a - b) <= b * 1e-7
if not close(grp['predicted_ps'], sub['predicted_ps']):
    sys.exit(f"predicted {grp['predicted_ps']} ps against {sub['predicted_ps']} ps")
for g, s in zip(grp['ranks'], sub['ranks'], strict=True):
    for key in ('comp_ps', 'finish_ps'):
        if not close(g[key], s[key]):
            sys.exit(f"rank {g['rank']}: {key} {g[key]} against {s[key]}")
moved = [o['rank'] for o, s in zip(own['ranks'], sub['ranks']) if o['comp_ps'] != s['comp_ps']]
if not moved:
    sys.exit('no rank computes differently from its own gaps: the check cannot fail')
print(f"imbalance: {grp['predicted_ps']} ps with representatives, {sub['predicted_ps']} ps with the "
      f"representative's gaps in the trace; ranks {moved} compute differently from their own gaps")
PY
}

(cd "$WORK" && "$PHANTOM" record --log -o "$WORK/lmp.trace" -- mpirun --oversubscribe -np 4 "$LMP" -in in.melt \
   -log none > "$WORK/lmp.out" 2>&1) || { tail "$WORK/lmp.out"; fail "LAMMPS under phantom record"; }
"$PHANTOM" cluster "$WORK/lmp.trace" -k 1 --ppn 2 -o "$WORK/k1.json" > "$WORK/c.txt" || fail "phantom cluster -k 1 on LAMMPS"
rep=$(python3 -c 'import json,sys; r=set(json.load(open(sys.argv[1]))["rank_representative"]); print(*r)' "$WORK/k1.json")
[ "$(echo $rep | wc -w)" = 1 ] || fail "-k 1 gave representatives $rep"
(cd "$WORK" && "$PHANTOM" replay "$WORK/lmp.trace" --ranks "$rep" --isolated --name rep -- "$LMP" -in in.melt \
   -log none > "$WORK/rep.out" 2>&1) || { tail "$WORK/rep.out"; fail "replaying representative $rep"; }
# Without the plan, the other ranks have no vector: one line says which.
"$PHANTOM" predict "$WORK/lmp.trace" --platform "$plat" --comp rep > /dev/null 2> "$WORK/err" &&
  fail "predict --comp rep without --groups took ranks that were not replayed"
grep -q "have no replayed vector" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"
# A mistyped name: one line naming the trace and the replays it has (not
# a file left beside them).
echo "notes" > "$WORK/lmp.trace/replay/README"
"$PHANTOM" predict "$WORK/lmp.trace" --platform "$plat" --comp rpe > /dev/null 2> "$WORK/err" &&
  fail "predict --comp of a replay that does not exist succeeded"
[ "$(cat "$WORK/err")" = "phantom predict: --comp rpe: $WORK/lmp.trace has no replay named 'rpe' (it has: rep)" ] ||
  fail "unclear error for a mistyped --comp: $(cat "$WORK/err")"
"$PHANTOM" predict "$WORK/lmp.trace" --platform "$plat" --ppn 2 --comp rep --groups "$WORK/k1.json" --json \
  > "$WORK/p.json" || fail "phantom predict --comp rep --groups"
python3 - "$WORK/p.json" "$WORK/lmp.trace/replay/rep/meta.json" "$rep" <<'PY' || fail "ranks do not compute as their representative"
import json, sys
p, m, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
comp = {r['rank']: r['computation_ns'] for one in m['replay']['replays'] for r in one['per_rank']}
want = comp[rep] * 1000
got = [r['comp_ps'] - r['startup_ps'] for r in p['ranks']]  # each rank's own start-up stays its host's
if len(got) != 4 or any(g != want for g in got):
    sys.exit(f'comp_ps per rank {got}, representative {rep} replayed {want} ps')
print(f'lammps: every rank computes {want / 1e9:.1f} ms, as representative {rep} replayed alone')
PY

# A partial replay: our stencil's representative replays one of its loop's
# iterations; past that, the other ranks still compute as it (its host
# units, scaled), not from their own host units, which on this
# oversubscribed host differ.
prog=$(cd "$WORK" && build_prog stencil.c)
"$PHANTOM" record --log -o "$WORK/st.trace" -- mpirun --oversubscribe -np 4 "$prog" 256 40 > "$WORK/st.out" 2>&1 ||
  fail "stencil under phantom record --log"
"$PHANTOM" cluster "$WORK/st.trace" -k 1 --ppn 2 -o "$WORK/st-k1.json" > "$WORK/c.txt" || fail "phantom cluster -k 1 on the stencil"
rep=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["groups"][0]["representative"])' "$WORK/st-k1.json")
(cd "$WORK" && "$PHANTOM" replay "$WORK/st.trace" --ranks "$rep" --isolated --plan "$WORK/st-k1.json" \
   --iterations 1 --name part -- "$prog" 256 40 > "$WORK/part.out" 2>&1) ||
  { tail "$WORK/part.out"; fail "replaying one iteration of representative $rep"; }
predict_json "$WORK/st.trace" "$WORK/part.json" --comp part --groups "$WORK/st-k1.json"
python3 - "$WORK/part.json" "$WORK/st.trace/replay/part/meta.json" "$rep" <<'PY' || fail "a partial replay: ranks do not compute as their representative"
import json, sys
p, m, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
one = m['replay']['replays'][0]['per_rank'][0]
loop = one['loop']
assert one['rank'] == rep and loop['iterations_replayed'] == 1 < loop['iterations'], one
got = [r['comp_ps'] - r['startup_ps'] for r in p['ranks']]
if len(got) != 4 or len(set(got)) != 1 or got[0] <= one['computation_ns'] * 1000:
    sys.exit(f'comp_ps per rank {got}, representative {rep} replayed 1 of {loop["iterations"]} iterations '
             f'({one["computation_ns"]} ns)')
print(f'stencil: every rank computes {got[0] / 1e9:.2f} ms, as representative {rep} replayed 1 of '
      f'{loop["iterations"]} iterations ({one["computation_ns"] / 1e6:.2f} ms) and extrapolated')
PY

prog=$(cd "$WORK" && build_prog imbalance.c)
"$PHANTOM" record -o "$WORK/imb.trace" -- mpirun --oversubscribe -np 4 "$prog" > "$WORK/imb.out" 2>&1 ||
  fail "imbalance under phantom record"
"$PHANTOM" cluster "$WORK/imb.trace" -k 2 --ppn 2 > "$WORK/c2.txt" || fail "phantom cluster -k 2"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["rank_representative"]; sys.exit(0 if r[0]==0 and len(set(r[1:]))==1 and r[1]!=0 else 1)' \
  "$WORK/imb.trace/groups.json" || fail "imbalance: expected groups {0} and {1-3}: $(cat "$WORK/c2.txt")"
rep=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rank_representative"][1])' \
  "$WORK/imb.trace/groups.json")
edits=""
for r in 1 2 3; do [ "$r" = "$rep" ] || edits="$edits $r:gaps-of:$rep"; done
"$top_builddir/tests/trace_copy" "$WORK/imb.trace" "$WORK/imb-rep.trace" $edits || fail "trace_copy$edits"
# the copy's gaps hold the recorder's part as the original's do (clock.probe_gap_ns)
python3 - "$WORK/imb.trace/meta.json" "$WORK/imb-rep.trace/meta.json" <<'PY' || fail "copying meta.json's clock"
import json, sys
clock = json.load(open(sys.argv[1]))["clock"]
assert clock["probe_gap_ns"] > 0, clock
d = json.load(open(sys.argv[2]))
d["clock"] = clock
json.dump(d, open(sys.argv[2], "w"))
PY
predict_json "$WORK/imb.trace" "$WORK/own.json"
predict_json "$WORK/imb.trace" "$WORK/grouped.json" --groups "$WORK/imb.trace/groups.json"
predict_json "$WORK/imb-rep.trace" "$WORK/substituted.json"
same "$WORK/own.json" "$WORK/grouped.json" "$WORK/substituted.json"

# A plan from another trace is refused with one line naming the file.
"$PHANTOM" predict "$WORK/imb.trace" --platform "$plat" --groups "$WORK/lmp.trace/groups.json" \
  > /dev/null 2> "$WORK/err" && fail "predict took a groups file of another trace"
[ "$(wc -l < "$WORK/err")" = 1 ] && grep -q "groups.json" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"
"$PHANTOM" predict "$WORK/imb.trace" --platform "$plat" --groups "$WORK/none.json" > /dev/null 2> "$WORK/err" &&
  fail "predict took a groups file that is not there"
[ "$(cat "$WORK/err")" = "phantom predict: $WORK/none.json: cannot open: No such file or directory" ] ||
  fail "unclear error for a missing groups file: $(cat "$WORK/err")"
echo "cluster-predict: ok"
