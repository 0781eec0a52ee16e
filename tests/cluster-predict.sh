#!/bin/sh
# PHANTOM's representative replay, end to end on LAMMPS at 4 ranks: a plan
# of one group, its representative replayed alone, and phantom predict on
# that one vector gives every rank exactly the representative's replayed
# computation (how close that comes to every rank's own vector is timing,
# measured in bench/representatives and doc/cluster.md).  With host
# vectors, the imbalance program cut into 2 groups ({0} and {1-3}: ranks 1-3
# take rank 1's, 2's or 3's computation) predicts within 5% of every rank's
# own vector (4 ranks on 2 cores time-share them: ranks 1-3's recorded
# computation differs by a few percent, and a CI run once saw -3.27%).
. "$top_srcdir/tests/lib.sh"
need_lammps 100 50
plat="$top_srcdir/platforms/ib-qdr.conf"

# predicted total of TRACE with extra predict options, in ps
predicted() {
  t=$1; shift
  "$PHANTOM" predict "$t" --platform "$plat" --ppn 2 --json "$@" > "$WORK/p.json" ||
    fail "phantom predict $t $*"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["predicted_ps"])' "$WORK/p.json"
}

within5() { # name own grouped
  python3 - "$@" <<'PY' || fail "$1: the prediction from representatives is more than 5% off"
import sys
name, own, grp = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
err = (grp - own) / own * 100
print(f"{name}: own vectors {own / 1e9:.3f} ms, representatives {grp / 1e9:.3f} ms: {err:+.2f}%")
sys.exit(0 if abs(err) <= 5 else 1)
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
"$PHANTOM" predict "$WORK/lmp.trace" --platform "$plat" --ppn 2 --comp rep --groups "$WORK/k1.json" --json \
  > "$WORK/p.json" || fail "phantom predict --comp rep --groups"
python3 - "$WORK/p.json" "$WORK/lmp.trace/replay/rep/meta.json" "$rep" <<'PY' || fail "ranks do not compute as their representative"
import json, sys
p, m, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
comp = {r['rank']: r['computation_ns'] for one in m['replay']['replays'] for r in one['per_rank']}
want = comp[rep] * 1000
got = [r['comp_ps'] for r in p['ranks']]
if len(got) != 4 or any(g != want for g in got):
    sys.exit(f'comp_ps per rank {got}, representative {rep} replayed {want} ps')
print(f'lammps: every rank computes {want / 1e9:.1f} ms, as representative {rep} replayed alone')
PY

prog=$(cd "$WORK" && build_prog imbalance.c)
"$PHANTOM" record -o "$WORK/imb.trace" -- mpirun --oversubscribe -np 4 "$prog" > "$WORK/imb.out" 2>&1 ||
  fail "imbalance under phantom record"
"$PHANTOM" cluster "$WORK/imb.trace" -k 2 --ppn 2 > "$WORK/c2.txt" || fail "phantom cluster -k 2"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["rank_representative"]; sys.exit(0 if r[0]==0 and len(set(r[1:]))==1 and r[1]!=0 else 1)' \
  "$WORK/imb.trace/groups.json" || fail "imbalance: expected groups {0} and {1-3}: $(cat "$WORK/c2.txt")"
within5 imbalance "$(predicted "$WORK/imb.trace")" \
  "$(predicted "$WORK/imb.trace" --groups "$WORK/imb.trace/groups.json")"

# A plan from another trace is refused with one line naming the file.
"$PHANTOM" predict "$WORK/imb.trace" --platform "$plat" --groups "$WORK/lmp.trace/groups.json" \
  > /dev/null 2> "$WORK/err" && fail "predict took a groups file of another trace"
[ "$(wc -l < "$WORK/err")" = 1 ] && grep -q "groups.json" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"
echo "cluster-predict: ok"
