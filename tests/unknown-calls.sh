#!/bin/sh
# Calls phantom does not sequence pass through untouched: one-sided
# communication still works, local queries are counted, the rest is counted
# as unknown, and none of them is an event.
. "$top_srcdir/tests/lib.sh"
prog=$(cd "$WORK" && build_prog unknown.c)
"$PHANTOM" record -o "$WORK/u.trace" -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "unknown.c under phantom record"; }
grep -q "rank 0 got 2 from rank 1" "$WORK/out" || fail "MPI_Put did not work under the recorder"
"$PHANTOM" stats "$WORK/u.trace" --json > "$WORK/s.json"
"$PHANTOM" dump "$WORK/u.trace" --json > "$WORK/d.jsonl"
python3 - "$WORK/s.json" "$WORK/d.jsonl" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
def die(m): print("FAIL:", m); sys.exit(1)
for rk in s["ranks"]:
    c = rk["counted"]
    want = {"MPI_Comm_rank": (3, False), "MPI_Comm_size": (1, False), "MPI_Win_create": (1, True),
            "MPI_Win_fence": (2, True), "MPI_Put": (1, True), "MPI_Win_free": (1, True)}
    for name, (calls, unknown) in want.items():
        if name not in c or c[name]["calls"] != calls or c[name]["unknown"] != unknown:
            die(f"rank {rk['rank']}: {name}: {c.get(name)} != calls {calls}, unknown {unknown}")
ops = [json.loads(l)["op"] for l in open(sys.argv[2]) if '"rank":0' in l and '"op"' in l]
if ops != ["MPI_Init", "MPI_Barrier", "MPI_Finalize"]: die(f"events: {ops}")
print("unknown-calls: ok")
PY

# Replay: one-sided communication is not in the message log, so a rank that
# made a window cannot be replayed without the others: one line naming the
# trace, the rank and the call, before anything is launched.  With every
# rank replayed the Put runs for real, after a warning.
"$PHANTOM" record --log -o "$WORK/ul.trace" -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "unknown.c under phantom record --log"; }
for mode in "--ranks 1" "--ranks 0 --isolated" "--ranks 0-1 --isolated"; do
  # shellcheck disable=SC2086 # the options are words
  "$PHANTOM" replay "$WORK/ul.trace" $mode --name r -- "$prog" > "$WORK/rep.out" 2> "$WORK/rep.err" &&
    fail "replay $mode of a trace with a window succeeded"
  want="phantom replay: $WORK/ul.trace: rank [01] used one-sided communication (MPI_Win_create, 1 calls), which phantom does not log: it cannot be replayed apart from the other ranks (doc/replay.md, section 5)"
  [ "$(wc -l < "$WORK/rep.err")" -eq 1 ] && grep -qx "$want" "$WORK/rep.err" ||
    fail "replay $mode: not the one-line refusal: $(cat "$WORK/rep.err")"
  [ ! -s "$WORK/rep.out" ] || fail "replay $mode launched the program: $(cat "$WORK/rep.out")"
done
"$PHANTOM" replay "$WORK/ul.trace" --ranks 0-1 --name r -- "$prog" > "$WORK/rep.out" 2> "$WORK/rep.err" ||
  fail "replay of both ranks: $(cat "$WORK/rep.err")"
grep -q "^phantom replay: warning: .*rank 0 used one-sided communication (MPI_Win_create)" "$WORK/rep.err" ||
  fail "replay of both ranks: no warning: $(cat "$WORK/rep.err")"
grep -q "rank 0 got 2 from rank 1" "$WORK/rep.out" || fail "replay of both ranks: the Put did not work"
echo "unknown-calls: replay refuses ranks apart from a window, warns with all of them"
