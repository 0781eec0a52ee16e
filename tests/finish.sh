#!/bin/sh
# finish.sh - a trace recorded by hand, as a batch script does (mpirun with
# LD_PRELOAD, no `phantom record`), then `phantom finish`: the meta.json it
# leaves has the communicator and call-site tables, counts and rank_events
# that `phantom record` writes for the same run; finishing twice changes
# nothing; and a wrong argument is one line naming it.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
prog=$(build_prog comms.c)

OMPI_MCA_mca_base_env_list="LD_PRELOAD=$PRELOAD_LIST;PHANTOM_TRACE_DIR=$WORK/hand.trace" \
  mpirun_n 4 "$prog" > "$WORK/hand.out" 2>&1 || fail "recording by hand: $(tail -3 "$WORK/hand.out")"
python3 - "$WORK/hand.trace/meta.json" <<'PY' || fail "a trace recorded by hand is already finished"
import json, sys
m = json.load(open(sys.argv[1]))
if m['finished'] is not False or 'comms' in m or 'sites' in m: sys.exit(f"finished {m['finished']}, keys {list(m)}")
PY
"$PHANTOM" finish "$WORK/hand.trace" > "$WORK/fin.out" 2> "$WORK/fin.err" || fail "phantom finish: $(cat "$WORK/fin.err")"
[ ! -s "$WORK/fin.out" ] || fail "phantom finish wrote to stdout: $(cat "$WORK/fin.out")"
events=$("$PHANTOM" stats "$WORK/hand.trace" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["totals"]["events"])')
[ "$(cat "$WORK/fin.err")" = "phantom finish: $WORK/hand.trace: 4 ranks, $events events" ] ||
  fail "phantom finish said: $(cat "$WORK/fin.err"), want 4 ranks and $events events"

# The same program under phantom record: the same tables (comms.c's
# communicators and call sites do not depend on timing).
"$PHANTOM" record -o "$WORK/rec.trace" -- mpirun --oversubscribe -np 4 "$prog" > "$WORK/rec.out" 2>&1 ||
  fail "phantom record: $(tail -3 "$WORK/rec.out")"
python3 - "$WORK/hand.trace/meta.json" "$WORK/rec.trace/meta.json" <<'PY' || fail "finish and record disagree"
import json, sys
hand, rec = (json.load(open(p)) for p in sys.argv[1:])
for key in ('finished', 'comms', 'sites', 'ranks_complete', 'events', 'rank_events'):
    if hand.get(key) != rec.get(key):
        sys.exit(f'{key}: finish wrote {hand.get(key)!r:.200}, record {rec.get(key)!r:.200}')
if len(hand['comms']) < 4 or len(hand['sites']) < 10:
    sys.exit(f"only {len(hand['comms'])} communicators and {len(hand['sites'])} call sites")
PY
cp "$WORK/hand.trace/meta.json" "$WORK/once.json"
"$PHANTOM" finish "$WORK/hand.trace" 2> "$WORK/fin.err" || fail "finishing a second time: $(cat "$WORK/fin.err")"
cmp -s "$WORK/once.json" "$WORK/hand.trace/meta.json" || fail "finishing a second time changed meta.json"

# Wrong arguments: one line naming what is wrong (exit 1); for a wrong
# command line, then "see phantom finish --help" (exit 2).
bad() { # WANT-STATUS REGEX ARGS...
  want=$1 re=$2; shift 2
  rc=0
  "$PHANTOM" finish "$@" > /dev/null 2> "$WORK/bad.err" || rc=$?
  [ $rc -eq "$want" ] && head -1 "$WORK/bad.err" | grep -q "$re" || fail "phantom finish $*: exit $rc, said: $(cat "$WORK/bad.err")"
  if [ "$want" = 2 ]; then
    [ "$(sed 1d "$WORK/bad.err")" = "see phantom finish --help" ]
  else
    [ "$(wc -l < "$WORK/bad.err")" = 1 ]
  fi || fail "phantom finish $*: said: $(cat "$WORK/bad.err")"
}
bad 1 "^phantom finish: $WORK/none: " "$WORK/none"
mkdir "$WORK/empty"
bad 1 "^phantom finish: $WORK/empty/meta.json: missing" "$WORK/empty"
head -c 100 "$WORK/once.json" > "$WORK/empty/meta.json"
bad 1 "^phantom finish: $WORK/empty/meta.json: offset [0-9]*: bad JSON" "$WORK/empty"
bad 2 "^phantom finish: " --bogus "$WORK/hand.trace"
bad 2 "^phantom finish: " "$WORK/hand.trace" "$WORK/rec.trace"
bad 2 "^phantom finish: "
echo "finish: a trace recorded by hand gets record's tables ($events events), twice the same"
