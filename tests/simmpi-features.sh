#!/bin/sh
# MPI semantics the simulator follows, each on a synthetic trace with an
# exact prediction: ANY_SOURCE resolved to the recorded source, probes,
# persistent requests, Sendrecv, MPI_PROC_NULL, synchronous and buffered
# sends, nonblocking collectives, sub-communicators.  Platform as in
# tests/simmpi-lib.sh: o_s=1000 o_r=2000 L=5000 o'=300 ns, G=1 ns/B, eager 1024.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat
ps() { echo $(( $1 * 1000 )); }

# ANY_SOURCE: rank r sends at 10 us * r; rank 0's receives matched, as recorded,
# rank 3 first, then 2, then 1 (not the order of arrival).
"$SYNTH" wildcard "$WORK/wc" --ranks 4 --bytes 10 --comp 10000
predict "$WORK/wc"
expect "wildcard: recorded matching order" "$(q "d['ranks'][0]['finish_ps']")" \
  "$(ps $((30000 + 1000 + 9 + 5000 + 3 * 2000)))"
expect "wildcard: syn until the matched sender came" "$(q "d['ranks'][0]['syn_ps']")" "$(ps 30000)"

# Probe (ANY_SOURCE, ANY_TAG): waits for the envelope, costs o_poll; the
# Recv after it finds the message there (o_r).
"$SYNTH" probe "$WORK/pr" --bytes 10 --comp0 3000
predict "$WORK/pr"
expect "probe" "$(q "d['ranks'][1]['finish_ps']")" "$(ps $((3000 + 1000 + 9 + 5000 + 100 + 2000)))"
expect "probe: syn" "$(q "d['ranks'][1]['syn_ps']")" "$(ps 3000)"
expect "probe: calls" "$(q "d['ops']['MPI_Probe']['calls']")" 1

# Persistent requests: three Start/Wait rounds of Send_init and Recv_init.
"$SYNTH" persistent "$WORK/ps" --bytes 10 --iters 3 --comp 1000
predict "$WORK/ps"
expect "persistent: sender" "$(q "d['ranks'][0]['finish_ps']")" "$(ps 6000)"
expect "persistent: receiver" "$(q "d['ranks'][1]['finish_ps']")" "$(ps 15009)"
expect "persistent: messages" "$(q "d['simulator']['messages']")" 3

# Sendrecv: both halves at once.
"$SYNTH" sendrecv "$WORK/sr" --bytes 101
predict "$WORK/sr"
expect "sendrecv" "$(q "[r['finish_ps'] for r in d['ranks']]")" "[$(ps 8100), $(ps 8100)]"

# MPI_PROC_NULL: nothing to send or wait for.
"$SYNTH" procnull "$WORK/pn" --comp 777
predict "$WORK/pn"
expect "proc_null" "$(q "d['predicted_ps']")" "$(ps 777)"
expect "proc_null: no messages" "$(q "d['simulator']['messages']")" 0

# Ssend is synchronous: a rendezvous even below the eager limit; Bsend is
# buffered: eager even above it.
"$SYNTH" p2p "$WORK/ss" --bytes 101 --sendop ssend
predict "$WORK/ss"
expect "ssend" "$(q "d['ranks'][1]['finish_ps']")" "$(ps $((2 * (300 + 5000 + 300) + 1000 + 100 + 5000 + 2000)))"
"$SYNTH" p2p "$WORK/bs" --bytes 5000 --sendop bsend
predict "$WORK/bs"
expect "bsend" "$(q "d['ranks'][1]['finish_ps']")" "$(ps $((1000 + 4999 + 5000 + 2000)))"

# A nonblocking collective runs as Open MPI's libnbc schedules it: an
# Iallreduce of 8 B on 2 ranks is its binomial reduce to rank 0, then the
# broadcast back.  libnbc posts the first round in the I-call, so rank 1's
# message travels during the 50 us of computation; the second round runs in
# the Wait: rank 0 takes the first message (o_r), sends (o_s), rank 1
# receives it (L, G, o_r).
"$SYNTH" icoll "$WORK/ic" --ranks 2 --bytes 8 --esize 8 --overlap 50000
predict "$WORK/ic"
expect "iallreduce: first round overlaps" "$(q "d['predicted_ps']")" "$(ps $((50000 + 2000 + 1000 + 7 + 5000 + 2000)))"
expect "iallreduce: libnbc's" "$(q "d['collectives']")" "{'allreduce': {'nbc_binomial': 1}}"
expect "iallreduce: rank 1's send in the I-call" "$(q "d['ranks'][1]['overhead_ps']")" "$(ps $((1000 + 2000)))"
# A Barrier between the I-call and the Wait: rank 0 enters it after its
# Wait, rank 1 before (both legal).  Rank 1's receive of the result was
# posted in the I-call (libnbc's first round has it).  The result comes
# while rank 1 waits in its Barrier, and libnbc's progress runs there:
# rank 1 collects it (o_r) as it comes, at 58,007 ns, then the Barrier's
# message (sent after the result: o_s twice), there since 59 us.
"$SYNTH" icoll "$WORK/icb" --ranks 2 --bytes 8 --esize 8 --overlap 50000 --barrier
predict "$WORK/icb"
expect "iallreduce around a barrier" "$(q "d['predicted_ps']")" \
  "$(ps $((50000 + 2000 + 1000 + 7 + 5000 + 2000 + 2000)))"
# At 4 ranks rank 0's Wait needs rank 2's second round (its part of the
# reduce), which rank 2 posts inside its Barrier, as libnbc's progress
# does once the Barrier waits; run only in rank 2's Wait, after the
# Barrier that waits for rank 0, it deadlocked.  Rank 2 at 50 us sends its
# Barrier message (o_s), then, waiting, takes rank 3's part (o_r) and sends
# its own (o_s): there at 59,007 ns.  Rank 0: takes rank 1's part (52 us)
# and rank 2's (61,007), sends both results (63,007), then its linear
# Barrier takes three messages and releases three (72,007).  Ranks 1 and 2
# get their results at 67,014 and 68,014 inside the Barrier (o_r; rank 1
# sends rank 3's, o_s) and the release at 75,007 and 76,007 (o_r).  Rank
# 3's release (77,007) takes its NIC before rank 1's message (77,014:
# rank 0's Barrier posts its rounds at once, before that message is
# sent), o_r each.
"$SYNTH" icoll "$WORK/icb4" --ranks 4 --bytes 8 --esize 8 --overlap 50000 --barrier
predict "$WORK/icb4" || fail "iallreduce around a barrier, 4 ranks: predict"
expect "iallreduce around a barrier, 4 ranks" "$(q "[r['finish_ps'] for r in d['ranks']]")" \
  "[$(ps 72007), $(ps 77007), $(ps 78007), $(ps 81007)]"
# libnbc's progress runs where Open MPI polls, not in every call.  Rank 0
# calls a Test of the Iallreduce halfway (25 us) that fails: its
# opal_progress takes rank 1's part (o_r) and sends the result (o_s), and
# the Test costs o_poll; rank 1 has it at 33,007 ns, long before its Wait
# (51 us; o_r).  An eager Send there instead (to rank 1, which receives it
# after its Wait) completes at once and progresses nothing: the result
# leaves in rank 0's Wait (51 us: o_r, o_s), rank 1 takes it (61,007) and
# then the Send's message (o_r).
"$SYNTH" icoll "$WORK/ict" --ranks 2 --bytes 8 --esize 8 --overlap 50000 --op test
predict "$WORK/ict"
expect "iallreduce: a failed Test progresses it" "$(q "[r['finish_ps'] for r in d['ranks']]")" \
  "[$(ps $((50000 + 2000 + 1000 + 100))), $(ps $((50000 + 1000 + 2000)))]"
"$SYNTH" icoll "$WORK/ice" --ranks 2 --bytes 8 --esize 8 --overlap 50000 --op send
predict "$WORK/ice"
expect "iallreduce: an eager Send does not progress it" "$(q "[r['finish_ps'] for r in d['ranks']]")" \
  "[$(ps $((50000 + 1000 + 2000 + 1000))), $(ps $((50000 + 1000 + 2000 + 1000 + 7 + 5000 + 2000 + 2000)))]"
# A failed Test runs one step of libnbc's progress, as one opal_progress
# call does: the first on rank 0 takes rank 1's part and posts the result's
# send, and the schedule is not done, so it fails as recorded (o_poll).
# The second, at 37.5 us, finds that send out (since 28 us) and completes
# the schedule; Open MPI's Test, checking again after its progress, would
# succeed, so it folds and costs nothing.  Rank 1's failed Test at 38.5 us
# takes the result (o_r), which completes its schedule's only round: it
# folds too.
"$SYNTH" icoll "$WORK/ict2" --ranks 2 --bytes 8 --esize 8 --overlap 50000 --op tests
predict "$WORK/ict2"
expect "iallreduce: Tests that would succeed fold" \
  "$(q "[[r['finish_ps'] for r in d['ranks']], d['simulator']['failed_polls'], d['simulator']['folded_polls'], d['ops']['MPI_Test']['overhead_ps']]")" \
  "[[$(ps $((50000 + 2000 + 1000 + 100))), $(ps $((50000 + 1000 + 2000)))], 1, 2, $(ps $((2000 + 1000 + 100 + 2000)))]"
# One step a poll, at 4 ranks: ranks 1-3 fail a Test at a quarter (rank
# 2's takes rank 3's part, o_r, and sends its own to rank 0, o_s, there at
# 20,507 ns), rank 0 at three quarters (37.5 us).  Rank 0's one step takes
# rank 1's part (o_r) and posts the receive of rank 2's, which is in; the
# next step is its Wait's (52.1 us): o_r, then the results to ranks 1 and
# 2 (o_s each: 56.1 us).  Rank 1 takes its result at 60,107 (o_r) and
# sends rank 3's (o_s: 63,107); rank 2 takes its at 61,107 (o_r); rank 3
# its at 68,114 (o_r).  Stepping on as far as completed rounds go in rank
# 0's Test would send the results 12.6 us earlier.
"$SYNTH" icoll "$WORK/icx" --ranks 4 --bytes 8 --esize 8 --overlap 50000 --op early
predict "$WORK/icx"
expect "iallreduce: one step of progress a failed Test" \
  "$(q "[[r['finish_ps'] for r in d['ranks']], d['simulator']['failed_polls']]")" \
  "[[$(ps 56100), $(ps 63107), $(ps 63107), $(ps 70114)], 4]"
# Two Iallreduces: rank 1 sends both its messages in the I-calls (o_s
# each) and waits for the first; rank 0 waits for the second first.
# libnbc progresses every schedule in whatever call the rank waits in,
# oldest first: rank 0's Wait takes the first's message (o_r) and sends its
# result (o_s), then the second's.  Rank 1 gets the second result last (its
# o_s at 55 us, G, L, o_r).  Running the second alone first would send its
# result first, and rank 1 would end at 65,007 ns.
"$SYNTH" icolls "$WORK/ics" --ranks 2 --bytes 8 --esize 8 --overlap 50000
predict "$WORK/ics"
expect "two iallreduces, waited in turn" "$(q "[r['finish_ps'] for r in d['ranks']]")" \
  "[$(ps $((50000 + 2 * (2000 + 1000)))), $(ps $((50000 + 2 * (2000 + 1000) + 7 + 5000 + 2000)))]"

# Sub-communicators: ranks translated through the membership tables.  Comm_split
# (allgather + allreduce on world), Allreduce on each half, Barrier on world:
# exactly the messages of those decompositions.
"$SYNTH" subcomm "$WORK/sc" --ranks 6 --bytes 64 --esize 8
predict "$WORK/sc"
L="$top_builddir/simmpi/coll-list"
n=$(( $("$L" allgather auto 6 0 1 8 | grep -c ^S) + $("$L" allreduce auto 6 0 1 8 | grep -c ^S) \
    + 2 * $("$L" allreduce auto 3 0 8 8 | grep -c ^S) + $("$L" barrier auto 6 0 0 1 | grep -c ^S) ))
expect "subcomm: messages" "$(q "d['simulator']['messages']")" "$n"
expect "subcomm: collectives" "$(q "sorted((c, sorted(a.items())) for c, a in d['collectives'].items())")" \
  "[('allgather', [('recursive_doubling', 1)]), ('allreduce', [('recursive_doubling', 2), ('ring', 1)]), ('barrier', [('linear', 1)])]"
# Halves of one rank each: coll/self runs their Allreduce (tuned declines a
# communicator of one), no algorithm of tuned's and no message; the
# Comm_split's Allreduce on world is the one left.
"$SYNTH" subcomm "$WORK/sc2" --ranks 2 --bytes 64 --esize 8
predict "$WORK/sc2"
expect "subcomm of one rank: collectives" "$(q "sorted((c, sorted(a.items())) for c, a in d['collectives'].items())")" \
  "[('allgather', [('two_proc', 1)]), ('allreduce', [('recursive_doubling', 1)]), ('barrier', [('recursive_doubling', 1)])]"
predict "$WORK/sc"
python3 - "$WORK/p.json" <<'PY' || fail "subcomm: breakdown"
import json, sys
d = json.load(open(sys.argv[1]))
ops = d["ops"]
assert ops["MPI_Comm_split"]["calls"] == 6 and ops["MPI_Allreduce"]["calls"] == 6, ops
for r in d["ranks"]:
    assert r["comp_ps"] + r["overhead_ps"] + r["transfer_ps"] + r["syn_ps"] == r["finish_ps"], r
PY

# Per call site and per MPI function, the communication time adds up to the ranks'.
"$SYNTH" stencil "$WORK/st" --dims 3,2,2 --iters 5 --bytes 2000 --comp 3000
predict "$WORK/st"
python3 - "$WORK/p.json" <<'PY' || fail "stencil: breakdowns disagree"
import json, sys
d = json.load(open(sys.argv[1]))
comm = lambda b: b["overhead_ps"] + b["transfer_ps"] + b["syn_ps"]
ranks = sum(comm(r) for r in d["ranks"])
assert sum(comm(b) for b in d["ops"].values()) == ranks
assert sum(comm(s) for s in d["sites"]) == ranks
assert d["ops"]["MPI_Waitall"]["calls"] == 12 * 5 and d["ops"]["MPI_Irecv"]["calls"] == 12 * 5 * 6
# synth gives every call one site: a site of several MPI calls
assert [(s["id"], s["call"], s["calls"]) for s in d["sites"]] == \
    [(0, "several", sum(b["calls"] for b in d["ops"].values()))], d["sites"]
PY
# Past 64 ranks the table lists the ranks that finish last and first (the
# lowest of equals), not every rank.
"$SYNTH" stencil "$WORK/st75" --dims 5,5,3 --iters 2 --bytes 3000 --comp 3000 > /dev/null ||
  fail "simmpi/synth stencil 5x5x3"
predict "$WORK/st75"
$PREDICT "$WORK/st75" --platform "$WORK/plat.conf" > "$WORK/t75.txt" || fail "predict 75 ranks: table"
python3 - "$WORK/p.json" "$WORK/t75.txt" <<'PY' || fail "75 ranks: the rank table's last and first"
import json, re, sys
f = [r["finish_ps"] for r in json.load(open(sys.argv[1]))["ranks"]]
want = [f"{f.index(max(f))} (finishes last)", f"{f.index(min(f))} (finishes first)", "all ranks (sum)"]
text = open(sys.argv[2]).read()
block = text.split("\nrank ", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
got = [re.split(r"\s{2,}", l.strip())[0] for l in block]
assert len(f) == 75 and max(f) != min(f), f
assert got == want + ["(every rank: --json)"], (got, want)
PY

# --svg: the chart of where each rank's time goes.  A bar per rank up to
# 32, past that the mean of a range of ranks; each part's width is its
# share of the predicted run time (of the 480 pixels at 100%), from the
# same numbers as the JSON; each part's tooltip names its bar and share.
"$SYNTH" stencil "$WORK/st4" --dims 2,2,1 --iters 2 --bytes 3000 --comp 3000 > /dev/null || fail "synth 4 ranks"
for t in st4 st75; do
  $PREDICT "$WORK/$t" --platform "$WORK/plat.conf" --json --svg "$WORK/$t.svg" > "$WORK/$t.json" ||
    fail "predict --svg $t"
  python3 - "$WORK/$t.json" "$WORK/$t.svg" <<'PY' || fail "predict --svg $t: the chart"
import json, re, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
root = ET.parse(sys.argv[2]).getroot()
ns = {"s": "http://www.w3.org/2000/svg"}
n, total = d["nranks"], d["predicted_ps"]
nb = min(n, 32)
bars = {}
for rect in root.iter("{http://www.w3.org/2000/svg}rect"):
    title = rect.find("s:title", ns)
    if title is None:
        continue
    m = re.fullmatch(r"(ranks? [0-9-]+): (computation|MPI overhead|transfer|syn) ([0-9.]+)%", title.text)
    assert m, title.text
    bars.setdefault(m.group(1), {})[m.group(2)] = (float(rect.get("width")), float(m.group(3)))
assert len(bars) == nb, (len(bars), nb)
covered = []
for label, got in bars.items():
    lo, _, hi = label.split(" ")[1].partition("-")
    ranks = range(int(lo), int(hi or lo) + 1)
    assert (len(ranks) == 1) == (label.startswith("rank ")), label
    covered += ranks
    for part, key in (("computation", "comp_ps"), ("MPI overhead", "overhead_ps"), ("transfer", "transfer_ps"),
                      ("syn", "syn_ps")):
        share = sum(d["ranks"][r][key] for r in ranks) / (len(ranks) * total)
        width, pct = got.get(part, (0.0, 0.0))
        assert abs(width - 480 * share) <= 0.051 and abs(pct - 100 * share) <= 0.051, (label, part, got, share)
assert sorted(covered) == list(range(n)), covered
last = max(range(n), key=lambda r: d["ranks"][r]["finish_ps"])
if n <= 32:
    assert abs(sum(w for w, _ in bars[f"rank {last}"].values()) - 480) <= 0.2, bars[f"rank {last}"]
PY
done
# --svg -: the same chart on stdout, and nothing else there; not with --json
$PREDICT "$WORK/st4" --platform "$WORK/plat.conf" --svg - > "$WORK/stdout.svg" || fail "predict --svg -"
cmp -s "$WORK/st4.svg" "$WORK/stdout.svg" || fail "predict --svg -: not the chart --svg FILE writes"
[ ! -e ./- ] || fail "predict --svg - wrote a file named -"
rc=0; $PREDICT "$WORK/st4" --platform "$WORK/plat.conf" --svg - --json > /dev/null 2> "$WORK/err" || rc=$?
[ $rc -eq 2 ] && grep -q "both write to standard output" "$WORK/err" || fail "--svg - --json: status $rc, $(cat "$WORK/err")"
rc=0; $PREDICT "$WORK/st4" --platform "$WORK/plat.conf" --svg "$WORK/no/such/dir/x.svg" > /dev/null 2> "$WORK/err" || rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$WORK/err")" -eq 1 ] && grep -q "svg $WORK/no/such/dir/x.svg: cannot write" "$WORK/err" ||
  fail "--svg to a missing directory: status $rc, $(cat "$WORK/err")"
echo "features checked"
