#!/bin/sh
# fork.sh - a program whose ranks fork children that leave with exit() (which
# runs the exit handlers they inherited from the rank, the recorder's and
# the replayer's too) and start shells with system().  Recorded, it must
# finish as it does bare, with the same output and a complete trace of the
# rank's own calls only; replayed, alone and together, it must print the
# recorded checksums.  (The recorder's exit handler, run in such a child,
# used to wait forever for the rank's writer thread, which a child does not
# have: the job hung.  The replayer's said the rank had ended early.)
# Once MPI_Init has made the process a rank, the recorder and the replayer
# take themselves out of its LD_PRELOAD, so that the shells it starts do
# not load them (and the MPI library with them): what else it names stays.
# And a job that preloads a library of its own with mpirun -x keeps it.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
prog=$(cd "$WORK" && build_prog forks.c)
timeout 120 mpirun --oversubscribe -np 2 "$prog" > "$WORK/bare" 2>&1 || { cat "$WORK/bare"; fail "bare run of forks.c"; }
PHANTOM_TEST_TIMEOUT=120 record forks "$prog" 2 --log
checksums "$WORK/bare" 0-1 > "$WORK/bare.sums"
checksums "$WORK/forks.rec" 0-1 > "$WORK/rec.sums"
[ "$(wc -l < "$WORK/rec.sums")" -eq 2 ] && cmp -s "$WORK/bare.sums" "$WORK/rec.sums" ||
  fail "recorded output differs from the bare run's: $(cat "$WORK/forks.rec")"
"$PHANTOM" stats "$WORK/forks.trace" > /dev/null 2> "$WORK/stats.err" || fail "stats: $(cat "$WORK/stats.err")"
[ ! -s "$WORK/stats.err" ] || fail "stats of the recorded trace warns: $(cat "$WORK/stats.err")"
"$PHANTOM" dump "$WORK/forks.trace" --json > "$WORK/d.jsonl"
python3 - "$WORK/d.jsonl" <<'PY' || fail "the trace does not hold the ranks' calls alone"
import json, sys
ops = {0: [], 1: []}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e:
        ops[e["rank"]].append((e["op"], e.get("tag")))
want = [("MPI_Init", None)] + [("MPI_Sendrecv", i) for i in range(5)] + [("MPI_Finalize", None)]
for r, got in ops.items():
    if got != want:
        print(f"FAIL: rank {r}: events {got}, the rank made {want}"); sys.exit(1)
PY
# preloaded OUTPUT LIB: every rank started with LIB preloaded, and its shells
# with the same LD_PRELOAD less LIB.
preloaded() {
  python3 - "$1" "$2" <<'PY' || fail "$2 stays preloaded in the ranks' shells: $(grep preload "$1")"
import re, sys
lines = [re.match(r"rank (\d+) preload \[(.*)\] child \[(.*)\]$", l) for l in open(sys.argv[1], errors='replace')]
lines = [m for m in lines if m]
if not lines: sys.exit(1)
for m in lines:
    start = re.split(r"[: ]+", m[2].strip())
    if not any(sys.argv[2] in w for w in start):
        print(f"rank {m[1]} started without {sys.argv[2]}: {m[2]}"); sys.exit(1)
    if m[3].split() != [w for w in start if sys.argv[2] not in w]:
        print(f"rank {m[1]}: its shell has LD_PRELOAD [{m[3]}]"); sys.exit(1)
PY
}
preloaded "$WORK/forks.rec" libpmpi-rec.so
echo "fork: recorded as the bare run ran, 7 events a rank; its shells without the recorder"
PHANTOM_TEST_TIMEOUT=120 replay_same forks "$prog" 0 --isolated --name alone
PHANTOM_TEST_TIMEOUT=120 replay_same forks "$prog" 0-1 --name both
preloaded "$WORK/forks.rep" libpmpi-replay.so
echo "fork: replayed alone and together with the recorded checksums"

# A job whose mpirun sets LD_PRELOAD itself (-x LD_PRELOAD=LIB, or
# -x LD_PRELOAD from mpirun's environment): the later -x wins, so the
# recorder joins the user's value instead of being dropped (before, nothing
# was recorded); the rank's shells keep the user's library.
# user_preload_kept OUTPUT OURS N: N ranks started with userpre.so and OURS
# preloaded, and their shells with userpre.so alone (past the ASan runtime
# a sanitized build puts first).
user_preload_kept() {
  python3 - "$1" "$WORK/userpre.so" "$2" "$3" "${PHANTOM_ASAN_RUNTIME:-}" <<'PY'
import re, sys
ranks = 0
for l in open(sys.argv[1], errors="replace"):
    m = re.match(r"rank (\d+) preload \[(.*)\] child \[(.*)\]$", l)
    shell = [p for p in re.split(r"[:\s]+", m[3]) if p and p != sys.argv[5]] if m else []
    if m and (sys.argv[2] not in m[2] or sys.argv[3] not in m[2] or shell != [sys.argv[2]]):
        print(f"rank {m[1]}: started with [{m[2]}], its shell with [{m[3]}]"); sys.exit(1)
    ranks += bool(m)
sys.exit(ranks != int(sys.argv[4]))
PY
}
printf 'int user_preload_marker;\n' > "$WORK/userpre.c"
gcc -shared -fPIC -o "$WORK/userpre.so" "$WORK/userpre.c" || fail "cannot build userpre.so"
# The user's LD_PRELOAD; a sanitized phantom and mpirun need the ASan runtime first.
USERPRE="${PHANTOM_ASAN_RUNTIME:+$PHANTOM_ASAN_RUNTIME:}$WORK/userpre.so"
for form in "-x LD_PRELOAD=$USERPRE" "-x LD_PRELOAD"; do
  # shellcheck disable=SC2086 # the options are words
  LD_PRELOAD=$USERPRE timeout 120 "$PHANTOM" record --log -o "$WORK/x.trace" --force -- \
    mpirun --oversubscribe $form -np 2 "$prog" > "$WORK/x.out" 2>&1 || { cat "$WORK/x.out"; fail "record with $form"; }
  "$PHANTOM" dump "$WORK/x.trace" --json | grep -c '"op"' > "$WORK/x.n"
  [ "$(cat "$WORK/x.n")" -eq 14 ] || fail "record with $form: $(cat "$WORK/x.n") events, 14 made: $(tail -3 "$WORK/x.out")"
  user_preload_kept "$WORK/x.out" libpmpi-rec 2 || fail "record with $form: the user's preload lost"
  # shellcheck disable=SC2086 # the options are words
  LD_PRELOAD=$USERPRE timeout 120 "$PHANTOM" replay "$WORK/x.trace" --ranks 0-1 \
    --launcher "mpirun --oversubscribe $form" -- "$prog" > "$WORK/xr.out" 2>&1 || { cat "$WORK/xr.out"; fail "replay with $form"; }
  user_preload_kept "$WORK/xr.out" libpmpi-replay 2 || fail "replay with $form: the user's preload lost"
done
# Nor does a preload phantom replay finds in its own environment go.
LD_PRELOAD=$USERPRE timeout 120 "$PHANTOM" replay "$WORK/x.trace" --ranks 1 --name one -- "$prog" \
  > "$WORK/xr.out" 2>&1 || { cat "$WORK/xr.out"; fail "replay with LD_PRELOAD set"; }
user_preload_kept "$WORK/xr.out" libpmpi-replay 1 || fail "replay with LD_PRELOAD set: the user's preload lost"
echo "fork: mpirun's own -x LD_PRELOAD keeps the user's library, recorded and replayed"
