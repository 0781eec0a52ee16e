#!/bin/sh
# Iterations: a planted period of 250 events (a pseudo-random body of
# operations and call sites, after a 4-event prologue) is found with its
# start and count; Equation 2 allows replaying 1 of 40 iterations of a steady
# loop, 20 of 40 when the first iteration computes 3x as long (the
# extrapolation from r iterations misses by (80/r - 2) iterations' worth,
# against L = 5% of 42 iterations' worth: r = 20), and all 40 when the
# iterations differ by more than L; no period, no partial replay.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/cluster-lib.sh"

iters() { plan_get "$1" '(d["iterations"]["period"], d["iterations"]["iterations"], d["iterations"]["replay_iterations"], d["iterations"]["partial"], d["groups"][0]["iterations"]["start"])'; }

"$SYNTH" "$WORK/p" --pattern flat --ranks 4 --iters 40 --period 250
$CLUSTER "$WORK/p" > "$WORK/out" || fail "cluster"
check_plan "$WORK/p/groups.json"
[ "$(iters "$WORK/p/groups.json")" = "(250, 40, 1, True, 4)" ] || fail "steady: $(iters "$WORK/p/groups.json")"
grep -q "repeats 250 events 40 times from event 4" "$WORK/out" || fail "summary: the period"
grep -q "replay 1 of 40 iterations" "$WORK/out" || fail "summary: the iterations to replay"

"$SYNTH" "$WORK/w" --pattern flat --ranks 4 --iters 40 --period 250 --warmup 3 --noise 0
$CLUSTER "$WORK/w" > /dev/null || fail "cluster warm-up"
[ "$(iters "$WORK/w/groups.json")" = "(250, 40, 20, True, 4)" ] || fail "warm-up: $(iters "$WORK/w/groups.json")"

"$SYNTH" "$WORK/n" --pattern flat --ranks 4 --iters 40 --period 250 --noise 0.5
$CLUSTER "$WORK/n" -k 1 > /dev/null || fail "cluster noisy"
[ "$(iters "$WORK/n/groups.json")" = "(250, 40, 40, False, 4)" ] || fail "noisy: $(iters "$WORK/n/groups.json")"
# A stricter k% of Equation 2 turns a steady loop's partial replay off too.
$CLUSTER "$WORK/p" --iter-threshold 0.01% -o "$WORK/strict.json" > /dev/null || fail "cluster strict"
[ "$(iters "$WORK/strict.json")" = "(250, 40, 40, False, 4)" ] || fail "strict: $(iters "$WORK/strict.json")"

"$SYNTH" "$WORK/o" --pattern flat --ranks 2 --iters 1 --period 250
$CLUSTER "$WORK/o" > "$WORK/out" || fail "cluster once"
[ "$(plan_get "$WORK/o/groups.json" 'd["iterations"]["iterations"], d["iterations"]["partial"]')" = "(1, False)" ] \
  || fail "one iteration: no loop"
grep -q "has no repeating pattern" "$WORK/out" || fail "summary: no loop"

# The saving: 1 of 4 ranks, its prologue, 1 of 40 iterations and no epilogue.
python3 - "$WORK/p/groups.json" <<'PY' || fail "saving"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["saving"]
assert s["replayed_ranks"] == 1 and s["replay_runs"] == 1, s
frac = s["plan_ns"] / s["full_ns"]
assert 0.2 / 40 < frac < 0.3 / 40 + 0.01, frac   # one rank of four, 1/40 of its loop
assert abs(s["fraction"] - (1 - frac)) < 1e-9
PY
exit 0
