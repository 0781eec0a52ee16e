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
# replay without --: options end at TRACE, so an option after it would be
# the program; say so instead of "no ranks given"
"$PHANTOM" replay "$WORK" --ranks 0 > /dev/null 2> "$WORK/err" && fail "replay took --ranks as the program"
[ $? -eq 2 ] && head -1 "$WORK/err" | grep -q "'--ranks' after TRACE is taken as PROGRAM" ||
  fail "replay TRACE --ranks 0: unclear error: $(cat "$WORK/err")"
# a whole-number option out of range: every verb says the range, in the same words
while read -r verb opt bad range; do
  "$PHANTOM" "$verb" "$opt" "$bad" > /dev/null 2> "$WORK/err" && fail "phantom $verb took $opt $bad"
  [ $? -eq 2 ] && [ "$(wc -l < "$WORK/err")" = 2 ] &&
    head -1 "$WORK/err" | grep -qx -- "phantom $verb: $opt: '$bad' is not a whole number${range:+ $range}" ||
    fail "phantom $verb $opt $bad: unclear error: $(cat "$WORK/err")"
done <<'EOF_RANGES'
predict --threads 16777217 from 0 to 16777216
export --ppn 0 from 1 to 16777216
replay --repeat 0 from 1 to 1073741824
replay --iterations x from 0 to 1073741824
run --ppn 0 from 1 to 1048576
run --repeat 1001 from 1 to 1000
cluster --ppn 0 >= 1
cluster --threads 65 from 1 to 64
cluster -k -3
record --depth 9 from 1 to 8
calibrate --reps 65 from 1 to 64
EOF_RANGES
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
# rank lists: each mistake named (3 ranks)
while IFS='|' read -r spec want; do
  "$PHANTOM" stats "$WORK/ring.trace" --ranks "$spec" > /dev/null 2> "$WORK/err" && fail "stats --ranks '$spec' accepted"
  grep -qF -- "$want" "$WORK/err" && [ "$(wc -l < "$WORK/err")" -eq 1 ] ||
    fail "stats --ranks '$spec': want one line with \"$want\", got: $(cat "$WORK/err")"
done <<'EOF_RANKS'
2-1|the range 2-1 runs backwards
1-|expected a number after '1-'
-1|expected a number at '-1'
 1|expected a number at ' 1'
0,,2|expected a number at ',2'
0-3|rank 3 is out of range (the job has 3 ranks)
0;1|unexpected ';'
EOF_RANKS
"$PHANTOM" stats "$WORK/ring.trace" --ranks 0,2 | grep -q "^2 " || fail "stats --ranks 0,2: no line for rank 2"
# stats past 16 ranks: their spread, not a line each.  synth wildcard: rank r
# computes r x 5 us; ranks 1-19 make 3 calls (1 us each) and send 100 B to
# rank 0, which makes 40 (Init, 19 Irecv, 19 Waitany, Finalize).
"$top_builddir/simmpi/synth" wildcard "$WORK/wc.trace" --ranks 20 --bytes 100 --comp 5000 > /dev/null ||
  fail "synth wildcard"
"$PHANTOM" stats "$WORK/wc.trace" > "$WORK/spread" || fail "phantom stats (20 ranks)"
row() { grep "^$1 " "$WORK/spread" | tr -s ' ' | cut -d' ' -f2- ; }
want_row() { [ "$(row "$1")" = "$2" ] || fail "stats spread: $1 is '$(row "$1")', not '$2'"; }
want_row least "3 0 ns 3.000 us 3.1% 0 0 B 0 B 0"
want_row median "3 45.000 us 3.000 us 5.7% 1 100 B 0 B 0"
want_row most "40 95.000 us 40.000 us 100.0% 1 100 B 1.9 KiB 0"
want_row total "97 950.000 us 97.000 us 9.3% 19 1.9 KiB 1.9 KiB 0"
[ "$(row mean | cut -d' ' -f2-3)" = "47.500 us" ] || fail "stats spread: mean computation $(row mean)"
grep -q '^the most computation: rank 19 (95.000 us, 3.1% in MPI), rank 18 (90.000 us,' "$WORK/spread" ||
  fail "stats spread: ranks with the most computation: $(grep 'most comp' "$WORK/spread")"
grep -q '^the most MPI time: rank 0 (40.000 us, 100.0% in MPI), rank 1 ' "$WORK/spread" ||
  fail "stats spread: ranks with the most MPI time: $(grep 'most MPI' "$WORK/spread")"
[ "$(sed -n '/their spread/,/^$/p' "$WORK/spread" | grep -cE '^[0-9]+ +[0-9]')" = 0 ] ||
  fail "stats of 20 ranks lists ranks (above)"
"$PHANTOM" stats "$WORK/wc.trace" --ranks all | sed -n '/^rank /,/^$/p' | grep -cE '^[0-9]+ +[0-9]' | grep -qx 20 || fail "stats --ranks all"
[ "$("$PHANTOM" stats "$WORK/wc.trace" --ranks 0,3-4 | sed -n '/^rank /,/^$/s/^\([0-9a-z]*\) .*/\1/p' | tr '\n' ' ')" = \
  "rank 0 3 4 total " ] || fail "stats --ranks 0,3-4 lists other ranks"
"$PHANTOM" stats "$WORK/wc.trace" --ranks 2-3 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
if [r["rank"] for r in d["ranks"]] != [2, 3] or d["totals"]["comp_ns"] != 25000:
    sys.exit("stats --ranks 2-3 --json: %s" % d["ranks"])' || fail "stats --ranks 2-3 --json"
# ranks whose streams have no end record (a killed job) are named, ten at most
"$top_builddir/tests/trace_copy" "$WORK/wc.trace" "$WORK/wc-killed.trace" $(seq -f '%g:no-end' 1 19) ||
  fail "trace_copy no-end"
"$PHANTOM" stats "$WORK/wc-killed.trace" > "$WORK/killed" 2> /dev/null || fail "stats of incomplete ranks"
grep -qx 'incomplete (no end record): rank 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 9 more' "$WORK/killed" ||
  fail "stats: incomplete ranks: $(grep incomplete "$WORK/killed")"
"$PHANTOM" stats "$WORK/wc.trace" --ranks 0,30 > /dev/null 2> "$WORK/err" && fail "stats took rank 30 of 20"
[ "$(wc -l < "$WORK/err")" = 1 ] && grep -q "wc.trace: --ranks: .*rank 30 is out of range" "$WORK/err" ||
  fail "stats --ranks 0,30: $(cat "$WORK/err")"
echo "cli: ok ($(echo $verbs))"
