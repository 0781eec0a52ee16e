#!/bin/sh
# fault-semantic.sh - traces that decode fine but make no sense (found by
# tests/fuzz/fuzz_predict.c): `phantom predict` must print one line naming
# the rank and event and exit 1, or predict with a breakdown that adds up,
# and never crash (the ASan build runs this too).  Each case is a valid
# synthetic trace (simmpi/synth) with one event changed or dropped by
# tests/trace_copy; platform as in tests/simmpi-lib.sh.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat
COPY="$top_builddir/tests/trace_copy"

# craft NAME SYNTH-ARGS -- EDITS: $WORK/NAME, a synth trace with trace_copy's edits
craft() {
  name=$1; shift
  args=""
  while [ "$1" != "--" ]; do args="$args $1"; shift; done
  shift
  # shellcheck disable=SC2086
  "$SYNTH" $args "$WORK/$name.orig" || fail "$name: synth$args"
  "$COPY" "$WORK/$name.orig" "$WORK/$name" "$@" || fail "$name: trace_copy $*"
}

# fails NAME TEXT [VERB]: phantom VERB (predict) on $WORK/NAME exits 1 with
# one line on stderr, which contains TEXT.
fails() {
  verb=${3:-predict}
  rc=0
  # shellcheck disable=SC2046
  "$PHANTOM" "$verb" "$WORK/$1" $([ "$verb" = predict ] && echo --platform "$WORK/plat.conf") \
    > "$WORK/$1.out" 2> "$WORK/$1.err" || rc=$?
  [ $rc -eq 1 ] || fail "$1: phantom $verb exited $rc, expected 1: $(tail -5 "$WORK/$1.err")"
  [ "$(wc -l < "$WORK/$1.err")" -eq 1 ] ||
    fail "$1: phantom $verb: expected one line on stderr, got: $(cat "$WORK/$1.err")"
  grep -qF -- "$2" "$WORK/$1.err" || fail "$1: phantom $verb: expected '$2', got: $(cat "$WORK/$1.err")"
  echo "$1: phantom $verb: $(cat "$WORK/$1.err")"
}

# adds_up NAME: phantom predict succeeds and every rank's comp + overhead +
# transfer + syn is its finish time (simmpi.h).
adds_up() {
  predict "$WORK/$1" 2> "$WORK/$1.err" || fail "$1: phantom predict failed: $(cat "$WORK/$1.err")"
  bad=$(q "[r['rank'] for r in d['ranks'] if r['comp_ps'] + r['overhead_ps'] + r['transfer_ps'] + r['syn_ps'] != r['finish_ps']]")
  [ "$bad" = "[]" ] || fail "$1: the breakdown of ranks $bad does not add up to their finish"
  echo "$1: breakdowns add up"
}

# Rank 0 frees its rendezvous Isend instead of waiting (legal MPI) and
# finishes before the CTS comes back: the protocol work that follows is no
# part of its run, its breakdown must not count it.
craft freed-send p2p --nonblocking --bytes 100000 --comp1 50000 -- 0:2:op=MPI_Request_free
adds_up freed-send

# block_edit FILE NEXT_REQ|-- [OLDHEX NEWHEX]: in the one block of rank file
# FILE, the block header's third number (requests before it) becomes
# NEXT_REQ, and the first OLDHEX bytes NEWHEX; recompressed with zstd(1).
block_edit() {
  python3 - "$WORK/block" "$@" <<'PY' || fail "cannot edit $1"
import subprocess, sys
tmp, path, n = sys.argv[1:4]
data = open(path, "rb").read()
raw = subprocess.run(["zstd", "-dcq"], input=data[32:], capture_output=True, check=True).stdout
def uv(i):
    v = s = 0
    while True:
        b = raw[i]; i += 1; v |= (b & 0x7F) << s; s += 7
        if b < 0x80: return i
if n != "--":
    n = int(n)
    i = uv(uv(0))
    end = uv(i)
    enc = b""
    while n >= 0x80: enc += bytes([n & 0x7F | 0x80]); n >>= 7
    raw = raw[:i] + enc + bytes([n]) + raw[end:]
if len(sys.argv) > 4:
    old, new = bytes.fromhex(sys.argv[4]), bytes.fromhex(sys.argv[5])
    assert old in raw, "no %s in the block" % sys.argv[4]
    raw = raw.replace(old, new, 1)
open(tmp, "wb").write(raw)
z = subprocess.run(["zstd", "-qc", "--check", tmp], capture_output=True, check=True).stdout
open(path, "wb").write(data[:32] + z)
PY
}

# A block header whose request count is 2^64 - 1: the next request's id
# wraps to 0, "no request", which an Imrecv of MPI_MESSAGE_NO_PROC then
# could not be found by (a crash in the simulator).
craft wrapped-ids p2p --nonblocking -- 1:1:op=MPI_Imrecv 1:1:reqs=0 1:2:drop
block_edit "$WORK/wrapped-ids/rank-000001.evt" 18446744073709551615
for verb in predict stats; do
  fails wrapped-ids "wrapped-ids/rank-000001.evt: offset 32: corrupt block (request ids run out" $verb
done

# Sizes and gaps no run has: an 18 PB message (1 ns a byte: 213 days) and
# a computation gap of 3 years.  The picosecond clock would wrap around
# 2^64 (to a prediction of microseconds); past 2^62 ps the simulator stops.
craft huge-message p2p --bytes 10 -- 0:1:bytes=18446744073709551 0:1:count=1
fails huge-message "rank 1: MPI_Recv: the simulated time passes 2^62 ps (53 days)"
craft huge-gap p2p --bytes 10 -- 0:2:t_entry=100000000000000000 0:2:t_exit=100000000000001000
fails huge-gap "rank 0: MPI_Finalize: the simulated time passes 2^62 ps (53 days)"

# A count of 2^61 elements of a datatype of 16 bytes: 2^65 bytes, which
# wrapped around to a message of 0 bytes.  (The writer makes a 1-byte
# datatype of the count = bytes edit, defined as F3 01 01 02 01: index 1,
# size 1, extent 1, flags 1; the edit makes its size 16.)
craft huge-count p2p --bytes 10 -- 0:1:count=2305843009213693952 0:1:bytes=2305843009213693952
block_edit "$WORK/huge-count/rank-000000.evt" -- f301010201 f301102001
for verb in predict stats; do
  fails huge-count "huge-count/rank-000000.evt: offset 32: corrupt block (count times datatype size passes 2^64 bytes" $verb
done

# An Allgather of one element of a 4 GiB + 8 byte datatype (a large-count
# idiom, valid MPI) moves what 2^29 + 1 elements of 8 bytes move: the same
# prediction.  The element size was cut to 32 bits (8 bytes).  (--bytes 8:
# a receive count of 0 would make Open MPI return at once.)
big=4294967304
craft big-element coll --ranks 4 --op allgather --bytes 8 -- 0:1:count=1 0:1:bytes=$big \
  1:1:count=1 1:1:bytes=$big 2:1:count=1 2:1:bytes=$big 3:1:count=1 3:1:bytes=$big
craft big-count coll --ranks 4 --op allgather --bytes 8 -- 0:1:count=536870913 0:1:bytes=$big \
  1:1:count=536870913 1:1:bytes=$big 2:1:count=536870913 2:1:bytes=$big 3:1:count=536870913 3:1:bytes=$big
predict "$WORK/big-count"
want=$(q "d['predicted_ps']")
predict "$WORK/big-element"
expect "one 4 GiB element" "$(q "d['predicted_ps']")" "$want"
[ "$want" -gt 0 ] || fail "big-element: nothing simulated"
echo "big-element: $want ps, as 8-byte elements"

# An Allreduce of 1000 elements of a zero-size datatype moves no bytes: the
# prediction of one element of it (it was simulated as 1000 bytes).  Open
# MPI's MPI layer skips only a count of 0, so both still send 0-byte
# messages.
craft zero-type coll --ranks 4 --op allreduce -- 0:1:count=1000 1:1:count=1000 2:1:count=1000 3:1:count=1000
craft zero-one coll --ranks 4 --op allreduce -- 0:1:count=1 1:1:count=1 2:1:count=1 3:1:count=1
predict "$WORK/zero-one"
want=$(q "d['predicted_ps']")
[ "$want" -gt 0 ] || fail "an Allreduce of a zero-size element sent nothing"
predict "$WORK/zero-type"
expect "a zero-size datatype" "$(q "d['predicted_ps']")" "$want"
echo "zero-type: $want ps, as no elements"

# An Allgather of 2^62 bytes per rank on 4 ranks gathers 2^64 bytes: as
# linear (a gather, then a broadcast of everything) that wrapped around
# to a broadcast of 0 bytes.
plat "coll.allgather = linear"
e=4611686018427387904
craft huge-coll coll --ranks 4 --op allgather --bytes 8 -- 0:1:count=1 0:1:bytes=$e \
  1:1:count=1 1:1:bytes=$e 2:1:count=1 2:1:bytes=$e 3:1:count=1 3:1:bytes=$e
fails huge-coll "rank 0: event 1 (MPI_Allgather): its sizes on 4 ranks add up past 2^64 bytes"
plat

# A damaged replay (predict --comp): its units are the gaps of a trace under
# TRACE/replay/NAME.  fake_replay NAME EDITS: the p2p trace $WORK/rp (rank 0
# computes 50 us before its Send, rank 1 20 us before its Recv) replayed as
# itself, with trace_copy's edits.
"$SYNTH" p2p "$WORK/rp" --comp0 50000 --comp1 20000 || fail "synth p2p"
fake_replay() {
  name=$1; shift
  mkdir -p "$WORK/rp/replay"
  "$COPY" "$WORK/rp" "$WORK/rp/replay/$name" "$@" || fail "$name: trace_copy $*"
  python3 - "$WORK/rp/replay/$name/meta.json" <<'PY' || fail "$name: meta.json"
import json, sys
m = json.load(open(sys.argv[1]))
m['replay'] = {'replays': [{'per_rank': [{'rank': r, 'computation_ns': c, 'recorded_computation_ns': c,
                                          'replayer_gap_ns': 0} for r, c in ((0, 50000), (1, 20000))]}]}
json.dump(m, open(sys.argv[1], 'w'))
PY
}
# Rank 0's Send entered 2^61 ns + 50 us after Init's exit: 1,000 times
# that in ps is 2^64 * 125 + 50 us, which wrapped round to exactly the 50 us
# of the original; the unit now saturates and the simulation fails at its
# horizon, naming the rank.
fake_replay huge 0:1:t_entry=2305843009213744952
rc=0
$PREDICT "$WORK/rp" --platform "$WORK/plat.conf" --comp huge > /dev/null 2> "$WORK/huge.err" || rc=$?
expect "a replayed gap of 2^61 ns: exit" $rc 1
[ "$(wc -l < "$WORK/huge.err")" = 1 ] && grep -q "rank 0: MPI_Send: the simulated time passes 2^62 ps" "$WORK/huge.err" ||
  fail "a replayed gap of 2^61 ns: $(cat "$WORK/huge.err")"
echo "replay huge: $(cat "$WORK/huge.err")"
# Rank 1's Recv entered 500 ns before Init's exit (clocks of two threads):
# a gap of 0, as in a host trace, not 2^64 - 500 ns, which failed at the
# horizon.  Rank 1 then computes nothing: its finish is rank 0's 50 us plus
# the message (plat: o_s + L + o_r, 0 bytes) and nothing of its own.
fake_replay backwards 1:1:t_entry=500
predict "$WORK/rp" --comp backwards
expect "a backwards replayed gap: rank 1's computation" "$(q "d['ranks'][1]['comp_ps']")" 0
expect "a backwards replayed gap: predicted" "$(q "d['predicted_ps']")" $(( (50000 + 1000 + 5000 + 2000) * 1000 ))
echo "replay backwards: rank 1 computes 0 ps"

# A persistent request started again before its Wait (erroneous MPI): the
# first instance was overwritten, in flight and never released.  (The copy
# numbers its events anew: the second Start is event 3.)
craft restarted persistent --bytes 10 --iters 3 --comp 1000 -- 0:3:drop
fails restarted "rank 0: event 3 (MPI_Start): starts request 1, whose last start is not yet completed"
