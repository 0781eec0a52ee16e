#!/bin/sh
# fault-corrupt.sh - damaged traces: `phantom stats` and `dump` (and, on the
# first two cases, `cluster`, `predict` and `export`) must print exactly one
# line on stderr naming the file, once, and the offset of the damaged frame,
# exit 1, and never crash (the ASan build runs this too).
#   - a rank file cut short by 7 bytes (truncate -s -7): its last frame;
#   - one byte flipped in the middle of a rank file: the frame holding it;
#   - one byte flipped in the first frame (read with the header);
#   - a FIFO and a directory in a rank file's place (not waited on);
#   - a header cut to 20 bytes, and a bad magic;
#   - an empty zstd frame before the first block;
#   - with --log, a byte flipped in the middle of a .log (`phantom dump --log`);
#   - meta.json: a rank listed twice in a communicator, and a recorder probe
#     time (clock.probe_gap_ns) that is not a time.
# The expected frame offsets come from tests/zstd_frames.py, which parses the
# zstd frame headers on its own.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
need python3
prog=$(build_prog fault-loop.c)
FRAMES="python3 $top_srcdir/tests/zstd_frames.py"

# 2 x 40,000 events in 16 KiB blocks: about 20 frames per rank file.
PHANTOM_BLOCK_KB=16 timeout 300 "$PHANTOM" record --log -o "$WORK/good" -- \
  mpirun --oversubscribe -np 2 "$prog" -n 20000 -b 64 > "$WORK/rec.out" 2> "$WORK/rec.err" ||
  fail "recording failed: $(cat "$WORK/rec.err")"
for verb in stats dump; do
  "$PHANTOM" $verb "$WORK/good" > /dev/null 2> "$WORK/good.err" ||
    fail "phantom $verb fails on the intact trace: $(cat "$WORK/good.err")"
done
"$PHANTOM" dump --log "$WORK/good" > /dev/null 2> "$WORK/good.err" ||
  fail "phantom dump --log fails on the intact trace: $(cat "$WORK/good.err")"
nframes=$($FRAMES "$WORK/good/rank-000000.evt" | wc -l)
[ "$nframes" -ge 5 ] || fail "expected several frames per rank file, got $nframes"

# expect CASE FILE OFFSET VERB...: run each verb on the damaged copy CASE.
expect() {
  case_=$1 file=$2 off=$3
  shift 3
  for verb in "$@"; do
    rc=0
    # shellcheck disable=SC2086
    "$PHANTOM" $verb "$WORK/$case_" > "$WORK/$case_.out" 2> "$WORK/$case_.err" || rc=$?
    [ $rc -eq 1 ] || fail "$case_: phantom $verb exited $rc, expected 1: $(tail -5 "$WORK/$case_.err")"
    [ "$(wc -l < "$WORK/$case_.err")" -eq 1 ] ||
      fail "$case_: phantom $verb: expected one line on stderr, got: $(cat "$WORK/$case_.err")"
    # the file's own path, once, right after the verb
    grep -q "^phantom ${verb%% *}: $WORK/$case_/$file: offset $off\\b" "$WORK/$case_.err" ||
      fail "$case_: phantom $verb: expected '$WORK/$case_/$file: offset $off', got: $(cat "$WORK/$case_.err")"
    echo "$case_: phantom $verb: $(cat "$WORK/$case_.err")"
  done
}
damage() { rm -rf "${WORK:?}/$1"; cp -r "$WORK/good" "$WORK/$1"; }
flip() { # file offset: invert one byte
  python3 -c 'import sys
f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); b = f.read(1); f.seek(o)
f.write(bytes([b[0] ^ 0xFF]))' "$1" "$2"
}

damage truncated
last=$($FRAMES "$WORK/good/rank-000001.evt" | tail -1 | cut -d' ' -f1)
truncate -s -7 "$WORK/truncated/rank-000001.evt"
[ "$($FRAMES "$WORK/truncated/rank-000001.evt" --first-bad)" = "$last" ] || fail "truncate did not cut the last frame"
expect truncated rank-000001.evt "$last" stats dump "dump --json" "cluster" \
  "predict --platform $top_srcdir/platforms/ib-qdr.conf" "predict --threads 2 --platform $top_srcdir/platforms/ib-qdr.conf" \
  "export --format simgrid -o $WORK/x.tit"
# an export that failed removes what it wrote: no index, no rank files
[ ! -e "$WORK/x.tit" ] && [ ! -e "$WORK/x.tit.d" ] || fail "a failed export left $(ls -d "$WORK"/x.tit*)"
# a trace directory given with a trailing slash, as a shell completes it
"$PHANTOM" stats "$WORK/truncated/" > /dev/null 2> "$WORK/slash.err" && fail "stats of truncated/ succeeded"
grep -q "^phantom stats: $WORK/truncated/rank-000001.evt: offset $last\\b" "$WORK/slash.err" ||
  fail "truncated/: expected '$WORK/truncated/rank-000001.evt: offset $last', got: $(cat "$WORK/slash.err")"

# an export with --platform over an earlier one of the good trace, which
# fails: none of y.tit, its rank files, y.tit.xml and y.tit.hosts is left
"$PHANTOM" export "$WORK/good" --format simgrid --platform "$top_srcdir/platforms/ib-qdr.conf" -o "$WORK/y.tit" \
  > /dev/null 2> "$WORK/y.err" || fail "export of the good trace: $(cat "$WORK/y.err")"
[ -s "$WORK/y.tit.xml" ] && [ -s "$WORK/y.tit.hosts" ] || fail "export --platform wrote no y.tit.xml or y.tit.hosts"

damage flipped
f=$WORK/flipped/rank-000000.evt
mid=$(( $(stat -c %s "$f") / 2 ))
frame=$($FRAMES "$f" --containing $mid)
flip "$f" $mid
expect flipped rank-000000.evt "$frame" stats dump "dump --json" "cluster" \
  "predict --platform $top_srcdir/platforms/ib-qdr.conf" "export --format simgrid -o $WORK/x.tit" \
  "export --format simgrid --platform $top_srcdir/platforms/ib-qdr.conf -o $WORK/y.tit"
left=$(ls -d "$WORK"/y.tit* 2> /dev/null || true)
[ -z "$left" ] || fail "a failed export --platform over an earlier one left: $left"

# a byte flipped in the first frame, which the reader takes with the header
# when it opens the file (lib/ph_reader.c: open_rank_file)
damage first-flipped
f=$WORK/first-flipped/rank-000001.evt
end=$($FRAMES "$f" | head -1 | cut -d' ' -f2)
flip "$f" $(( (32 + end) / 2 ))
expect first-flipped rank-000001.evt 32 stats dump "predict --platform $top_srcdir/platforms/ib-qdr.conf"

# a FIFO, or a directory, in a rank file's place: refused at once, never
# waited on (opening a FIFO to read blocks until it has a writer)
for kind in fifo dir; do
  damage $kind
  rm "$WORK/$kind/rank-000001.evt"
  if [ $kind = fifo ]; then mkfifo "$WORK/$kind/rank-000001.evt"; else mkdir "$WORK/$kind/rank-000001.evt"; fi
  for verb in stats dump "predict --platform $top_srcdir/platforms/ib-qdr.conf"; do
    rc=0
    # shellcheck disable=SC2086
    timeout 60 "$PHANTOM" $verb "$WORK/$kind" > /dev/null 2> "$WORK/$kind.err" || rc=$?
    [ $rc -eq 1 ] && [ "$(cat "$WORK/$kind.err")" = "phantom ${verb%% *}: $WORK/$kind/rank-000001.evt: not a regular file" ] ||
      fail "$kind: phantom $verb exited $rc: $(cat "$WORK/$kind.err")"
    echo "$kind: phantom $verb: $(cat "$WORK/$kind.err")"
  done
done

damage short-header
truncate -s 20 "$WORK/short-header/rank-000001.evt"
expect short-header rank-000001.evt 20 stats dump

damage bad-magic
flip "$WORK/bad-magic/rank-000000.evt" 3
expect bad-magic rank-000000.evt 0 stats dump

# an empty frame (content size 0: no block header) before the first block
damage empty-frame
python3 -c 'import sys
p = sys.argv[1]; b = open(p, "rb").read()
empty = bytes.fromhex("28b52ffd2400010000" "99e9d851")  # zstd -c < /dev/null
open(p, "wb").write(b[:32] + empty + b[32:])' "$WORK/empty-frame/rank-000000.evt"
expect empty-frame rank-000000.evt 32 stats dump

damage log-flipped
f=$WORK/log-flipped/rank-000001.log
mid=$(( $(stat -c %s "$f") / 2 ))
frame=$($FRAMES "$f" --containing $mid)
flip "$f" $mid
expect log-flipped rank-000001.log "$frame" "dump --log"

# edit_meta CASE STATEMENT: a damaged copy CASE whose meta.json (as d) gets
# the Python STATEMENT
edit_meta() {
  damage "$1"
  python3 - "$WORK/$1/meta.json" "$2" <<'PY' || fail "editing meta.json: $2"
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PY
}
# refused CASE PATTERN WHAT: phantom stats and predict on CASE exit 1 with one
# line on stderr that matches PATTERN
refused() {
  for verb in stats "predict --platform $top_srcdir/platforms/ib-qdr.conf"; do
    rc=0
    # shellcheck disable=SC2086
    "$PHANTOM" $verb "$WORK/$1" > /dev/null 2> "$WORK/$1.err" || rc=$?
    [ $rc -eq 1 ] && [ "$(wc -l < "$WORK/$1.err")" -eq 1 ] && grep -q "$2" "$WORK/$1.err" ||
      fail "$3: phantom $verb exited $rc: $(cat "$WORK/$1.err")"
  done
}

# A communicator table that lists a rank twice is corrupt, not a group: the
# simulator takes each member's place to be unique.  One line naming meta.json.
edit_meta twice 'd["comms"][0]["members"] = [1, 1]'
refused twice "twice/meta.json: communicator table entry 0 is malformed: a rank is listed twice$" "a rank listed twice"
# and says what is wrong with it
edit_meta member 'd["comms"][0]["members"][1] = 7'
refused member "member/meta.json: communicator table entry 0 is malformed: member 1 is not a rank below 2$" "member 7"
edit_meta many 'd["comms"][0]["members"] = [0, 1, 0]'
refused many "many/meta.json: communicator table entry 0 is malformed: 3 members, the trace has 2 ranks$" "3 members"

# The recorder's part of each gap (clock.probe_gap_ns) is taken off every
# computation unit: a value that is not a time in ns is refused, one line.
edit_meta probe 'assert 0 < d["clock"]["probe_gap_ns"] < 1000, d["clock"]'  # the recorder timed itself
for bad in '-3' '"10"' '1e9'; do
  edit_meta probe "d['clock']['probe_gap_ns'] = $bad"
  refused probe 'probe/meta.json: "clock"."probe_gap_ns" is not a time in ns' "probe_gap_ns $bad"
done
