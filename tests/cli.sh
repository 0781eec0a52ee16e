#!/bin/sh
# The front end as a user meets it: every verb `phantom --help` lists has
# its own usage text (`--help` and `phantom help VERB` alike, exit 0, no
# printf escapes left in it) and a man page; unknown verbs and options get
# one line naming them plus a pointer to --help, exit 2.
. "$top_srcdir/tests/lib.sh"
"$PHANTOM" --help > "$WORK/help" || fail "phantom --help failed"
verbs=$(sed -n '/^commands:/,/^$/s/^   \([a-z]*\) .*/\1/p' "$WORK/help")
[ "$(echo "$verbs" | wc -w)" -ge 8 ] || fail "phantom --help lists too few commands: $verbs"
for v in $verbs; do
  "$PHANTOM" "$v" --help > "$WORK/$v.help" || fail "phantom $v --help: exit $?"
  head -1 "$WORK/$v.help" | grep -q "^usage: .*phantom $v" || fail "phantom $v --help: no usage line"
  grep -q '%%' "$WORK/$v.help" && fail "phantom $v --help prints a printf escape: $(grep '%%' "$WORK/$v.help")"
  "$PHANTOM" help "$v" | cmp -s - "$WORK/$v.help" || fail "phantom help $v differs from phantom $v --help"
  man="$top_srcdir/doc/man/phantom-$v.1"
  [ -f "$man" ] || fail "no man page for phantom $v ($man)"
  # roff escapes hyphens: compare without backslashes
  sed 's/\\//g' "$man" | grep -q "^\.TH PHANTOM-$(echo "$v" | tr a-z A-Z) 1" || fail "$man: no .TH line for phantom-$v"
  sed 's/\\//g' "$top_srcdir/doc/man/phantom.1" | grep -q "phantom-$v" ||
    fail "phantom(1) does not mention phantom-$v"
  # a wrong option: one line naming it, then the pointer to --help
  "$PHANTOM" "$v" --no-such-option > /dev/null 2> "$WORK/err" && fail "phantom $v took --no-such-option"
  [ $? -eq 2 ] || fail "phantom $v --no-such-option: exit status is not 2"
  [ "$(wc -l < "$WORK/err")" = 2 ] && head -1 "$WORK/err" | grep -q -- "--no-such-option" &&
    tail -1 "$WORK/err" | grep -q "phantom $v --help" || fail "phantom $v: unclear option error: $(cat "$WORK/err")"
done
"$PHANTOM" frobnicate > /dev/null 2> "$WORK/err" && fail "phantom took an unknown verb"
grep -q "'frobnicate' is not a phantom command" "$WORK/err" || fail "unknown verb: $(cat "$WORK/err")"
"$PHANTOM" --version | grep -q "^phantom [0-9]" || fail "phantom --version"
# dump's text times are microseconds since the rank's start, as its JSON says,
# also for a trace whose clock starts at 0 (synthetic)
"$top_builddir/simmpi/synth" ring "$WORK/ring.trace" --ranks 3 --iters 2 --comp 5000 > /dev/null ||
  fail "synth ring"
"$PHANTOM" dump "$WORK/ring.trace" --rank 1 > "$WORK/dump.txt" &&
  "$PHANTOM" dump "$WORK/ring.trace" --rank 1 --json > "$WORK/dump.jsonl" || fail "phantom dump"
python3 - "$WORK/dump.txt" "$WORK/dump.jsonl" <<'PY' || fail "dump: text times differ from the JSON ones"
import json, sys
text = [l.split() for l in open(sys.argv[1])]
ev = [json.loads(l) for l in open(sys.argv[2]) if '"op"' in l]
t0 = ev[0]['t_entry']
got = [float(t[2]) for t in text]
want = [(e['t_entry'] - t0) / 1e3 for e in ev]
if len(got) != len(want) or any(abs(a - b) > 1e-3 for a, b in zip(got, want)) or want[-1] <= 0:
    sys.exit(f'text {got}, JSON {want}')
PY
echo "cli: ok ($(echo $verbs))"
