#!/bin/sh
# Bad input gets one clear line and the right exit code (1: bad data, 2: bad
# usage): a trace of another format version (a rank header or meta.json), a
# groups file made from another trace (other ranks, other sequences, another
# recording of the same program) or not a groups file at all, impossible k,
# malformed options, and a groups file that cannot be written whole.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/cluster-lib.sh"

# expect CODE PATTERN ARGS...: the verb exits CODE and says PATTERN first.
expect() {
  code=$1 pat=$2; shift 2
  set +e
  $CLUSTER "$@" > "$WORK/out" 2> "$WORK/err"
  rc=$?
  set -e
  [ $rc = "$code" ] || { cat "$WORK/err"; fail "cluster $*: exit $rc, expected $code"; }
  head -1 "$WORK/err" | grep -q "^phantom cluster: .*$pat" || { cat "$WORK/err"; fail "cluster $*: no '$pat'"; }
  [ "$code" = 2 ] || [ "$(wc -l < "$WORK/err")" = 1 ] || fail "cluster $*: more than one line"
}

"$SYNTH" "$WORK/a" --pattern mg
"$SYNTH" "$WORK/a2" --pattern mg --seed 2
"$SYNTH" "$WORK/lu" --pattern lu --grid 4x4
"$SYNTH" "$WORK/small" --pattern mg --ranks 8

cp -r "$WORK/a" "$WORK/v"
printf '\002\000\000\000' | dd of="$WORK/v/rank-000003.evt" bs=1 seek=8 conv=notrunc 2>/dev/null # major 2, minor 0
expect 1 "rank-000003.evt: offset 8: format version 2.0, this phantom reads 1.x" "$WORK/v"
cp -r "$WORK/a" "$WORK/m"
sed 's/"version": "1\.[0-9]*"/"version": "2.0"/' "$WORK/a/meta.json" > "$WORK/m/meta.json"
expect 1 "meta.json: format version 2.0" "$WORK/m"
expect 1 "not a trace directory" "$WORK/none"

$CLUSTER "$WORK/a" > /dev/null || fail "cluster a"
$CLUSTER "$WORK/a" --check "$WORK/a/groups.json" > "$WORK/out" || fail "the plan of a matches a"
grep -q "a plan for" "$WORK/out" || fail "check says so"
expect 1 "made from a trace of 16 ranks" "$WORK/small" --check "$WORK/a/groups.json"
expect 1 "made from a different trace" "$WORK/lu" --check "$WORK/a/groups.json"
expect 1 "made from a different trace" "$WORK/a2" --check "$WORK/a/groups.json"
expect 1 "not a groups file" "$WORK/a" --check "$WORK/a/meta.json"
sed 's/"version": "1.0"/"version": "7.1"/' "$WORK/a/groups.json" > "$WORK/g7.json"
expect 1 "groups format version 7.1" "$WORK/a" --check "$WORK/g7.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["rank_group"][5]=99; json.dump(d,open(sys.argv[2],"w"))' \
  "$WORK/a/groups.json" "$WORK/bad.json"
expect 1 '"rank_group"\[5\] is not a number below 2' "$WORK/a" --check "$WORK/bad.json"
# the per-group table must agree with the per-rank ones
edit_groups() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[3]); json.dump(d,open(sys.argv[2],"w"))' \
  "$WORK/a/groups.json" "$WORK/bad.json" "$1"; }
edit_groups 'd["groups"][1]["representative"] = 99'
expect 1 "bad.json: rank [0-9]*: \"rank_representative\" says [0-9]*, \"groups\"\[1\] says 99" "$WORK/a" --check "$WORK/bad.json"
edit_groups 'd["groups"].pop()'
expect 1 'bad.json: "groups" is not an array of 2 groups' "$WORK/a" --check "$WORK/bad.json"
edit_groups 'd["ngroups"] = 17'
expect 1 'bad.json: "ngroups" is not a number from 1 to 16' "$WORK/a" --check "$WORK/bad.json"
edit_groups 'r = d["rank_group"].index(1); d["rank_representative"] = [r] * len(d["rank_group"]); d["groups"][0]["representative"] = r'
expect 1 "bad.json: rank [0-9]*: its representative [0-9]* is in group 1, not in its group 0" "$WORK/a" --check "$WORK/bad.json"
printf '{"format": "phantom-groups", ' > "$WORK/trunc.json"
expect 1 "trunc.json: line 1: not JSON: " "$WORK/a" --check "$WORK/trunc.json"
expect 1 "nothere.json: cannot open: No such file or directory" "$WORK/a" --check "$WORK/nothere.json"

expect 2 "cannot make 0 groups" "$WORK/a" -k 0
expect 1 "cannot make 17 groups from 16 ranks" "$WORK/a" -k 17
expect 1 "cannot make 2 groups: the ranks fall into 3 classes" "$WORK/lu" -k 2
expect 1 "cannot make 3 groups: the ranks fall into 9 classes" "$WORK/lu" -k 3 --partition commseq
expect 1 "cannot make 3 groups: the ranks fall into 9 classes" "$WORK/lu" -k 3 --partition commseq --dendrogram "$WORK/d.txt"
expect 1 "cannot make 8 groups: the ranks fall into 9 classes" "$WORK/lu" -m kmeans -k 8 --partition commseq
expect 1 "cannot make 2 groups: the ranks fall into 3 classes" "$WORK/lu" -m kmeans -k 2
expect 2 "needs -k" "$WORK/a" -m kmeans
expect 2 "not both" "$WORK/a" -k 2 -t 5%
expect 2 "do not apply" "$WORK/a" -m commseq -k 2
expect 2 "'abc' is not a percentage" "$WORK/a" -t abc
expect 2 "'quick' is not hierarchical, kmeans or commseq" "$WORK/a" -m quick
expect 2 "'0' is not a whole number >= 1" "$WORK/a" --ppn 0
expect 2 "unknown option '--frobnicate'" "$WORK/a" --frobnicate
expect 2 "no trace directory" 
seq 0 9 > "$WORK/map10"
expect 1 "map10: names the node of 10 ranks, the trace has 16" "$WORK/a" --map "$WORK/map10"
expect 1 "cyclc: cannot open: No such file or directory (nor is it block or cyclic)" "$WORK/a" --map cyclc
expect 1 "cannot write" "$WORK/a" -o "$WORK/no/such/dir/g.json"

# A groups file that cannot be written whole (here: past the file size
# limit, with SIGXFSZ ignored so that write fails instead) leaves the
# earlier one as it was, not cut short.
$CLUSTER "$WORK/a" -o "$WORK/g.json" > /dev/null
cp "$WORK/g.json" "$WORK/g.before"
[ "$(wc -c < "$WORK/g.json")" -gt 1024 ] || fail "g.json is too small to pass the limit"
set +e
(trap '' XFSZ; ulimit -f 1 && exec $CLUSTER "$WORK/a" -t 1% -o "$WORK/g.json") > /dev/null 2> "$WORK/err"
rc=$?
set -e
[ $rc = 1 ] || fail "cluster past the file size limit: exit $rc, expected 1: $(cat "$WORK/err")"
grep -q "^phantom cluster: $WORK/g.json: cannot write: File too large\$" "$WORK/err" ||
  fail "cluster past the file size limit said: $(cat "$WORK/err")"
cmp -s "$WORK/g.json" "$WORK/g.before" || fail "a failed write changed the earlier groups file"
ls "$WORK"/g.json.*.tmp > /dev/null 2>&1 && fail "a failed write left its temporary file"
exit 0
