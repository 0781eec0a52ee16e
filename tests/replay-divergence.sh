#!/bin/sh
# A replay that does not follow the recording stops at once with one line
# naming the rank, the event, the expected and the actual call and the call
# sites - other input parameters, another binary, in a subgroup too (no
# hang) - and so does a missing, truncated or foreign message log.
. "$top_srcdir/tests/lib.sh"
prog=$(cd "$WORK" && build_prog stencil.c)
p2p=$(cd "$WORK" && build_prog p2p.c)
T="$WORK/st.trace"
"$PHANTOM" record --log -o "$T" -- mpirun --oversubscribe -np 4 "$prog" 64 25 > "$WORK/rec" 2>&1 ||
  fail "recording the stencil"

# must_stop NAME REGEX REPLAY-ARGS...: the replay fails, saying REGEX on one
# line (a line per rank that stops), the last (after the launcher's banner
# about the abort), and each only once.
must_stop() {
  what=$1 re=$2; shift 2
  rc=0
  timeout 120 "$PHANTOM" replay "$@" > "$WORK/out" 2>&1 || rc=$?
  [ $rc -ne 0 ] || fail "$what: the replay succeeded"
  [ $rc -ne 124 ] || fail "$what: the replay hung"
  grep -Eq "$re" "$WORK/out" || { cat "$WORK/out"; fail "$what: no line matching: $re"; }
  [ -z "$(grep -E "$re" "$WORK/out" | sort | uniq -d)" ] && tail -1 "$WORK/out" | grep -Eq "$re" ||
    { cat "$WORK/out"; fail "$what: the reason is not the last line, or not said once"; }
}

site='at main [^ ]*stencil\.c:[0-9]+'
must_stop "other grid size" \
  "^phantom replay: rank 1: event 1: expected MPI_Irecv\(peer 0, tag 1, 512 bytes, comm 0\) $site, got MPI_Irecv\(peer 0, tag 1, 384 bytes, comm 0\) at stencil\+0x[0-9a-f]+: another amount of data$" \
  "$T" --ranks 1 --isolated -- "$prog" 48 25
must_stop "more iterations" \
  "^phantom replay: rank 2: event 128: expected MPI_Allreduce\(8 bytes, comm 0\) $site, got MPI_Irecv\(peer 1, tag 1, 512 bytes, comm 0\) at stencil\+0x[0-9a-f]+$" \
  "$T" --ranks 2 --isolated -- "$prog" 64 30
must_stop "fewer iterations" \
  "^phantom replay: rank 3: event 103: expected MPI_Irecv\(peer 2, tag 1, 512 bytes, comm 0\) $site, got MPI_Finalize\(\) at stencil\+0x[0-9a-f]+$" \
  "$T" --ranks 3 --isolated -- "$prog" 64 20
must_stop "another binary" \
  "^phantom replay: rank 0: event 1: expected MPI_Irecv\(peer PROC_NULL, tag 1, 512 bytes, comm 0\) $site, got MPI_Send\(peer 1, tag 10, 4000 bytes, comm 0\) at (p2p|oracle)" \
  "$T" --ranks 0 --isolated -- "$p2p"
# In a subgroup the others are blocked in real MPI calls: the job must still end.
must_stop "subgroup with another grid size" "^phantom replay: rank [01]: event 1: expected MPI_Irecv" \
  "$T" --ranks 0-1 -- "$prog" 48 25

# A program that reads a clock the recording did not read: the log answers
# its reads in the recorded order, so the extra CLOCK_REALTIME read takes
# the recorded CLOCK_MONOTONIC one (another clock: the real one answers),
# and the loop timed by CLOCK_MONOTONIC then gets one logged value and real
# readings; its sends stop at once, and the message counts the reads the
# log did not answer: at least that read, the loop's check, and the next
# loop's two gettimeofday reads.
timed=$(cd "$WORK" && build_prog timed.c)
"$PHANTOM" record --log -o "$WORK/timed.trace" -- mpirun --oversubscribe -np 2 "$timed" > "$WORK/rec" 2>&1 ||
  fail "recording timed.c"
PH_TIMED_EXTRA_CLOCK=1 must_stop "an extra clock read" \
  "^phantom replay: rank 0: event [0-9]+: expected MPI_Send\(peer PROC_NULL, tag 3, 4 bytes, comm 0\) at sends_for_3ms [^ ]*timed\\.c:[0-9]+, got .*\(([0-9]+) clock reads before it were not in the log as made, and read the real clock: doc/replay.md, section 5\)$" \
  "$WORK/timed.trace" --ranks 0 --isolated -- "$timed"
n=$(tail -1 "$WORK/out" | sed 's/.*(\([0-9]*\) clock reads before it.*/\1/')
[ "$n" -ge 4 ] || fail "an extra clock read: $n unanswered reads counted, at least 4 were made: $(tail -1 "$WORK/out")"

# A program that ends before the recorded run did.
cat > "$WORK/early.c" <<'EOF2'
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (getenv("EARLY_EXIT"))
        exit(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
EOF2
mpicc -o "$WORK/early" "$WORK/early.c" || fail "cannot build early.c"
"$PHANTOM" record --log -o "$WORK/early.trace" -- mpirun --oversubscribe -np 2 "$WORK/early" > "$WORK/rec" 2>&1 ||
  fail "recording early.c"
EARLY_EXIT=1 must_stop "early exit" "^phantom replay: rank 1: the program exited after 2 events, before the recorded run's end$" \
  "$WORK/early.trace" --ranks 1 --isolated -- "$WORK/early"

# Past 16 different reasons: the first 16 in order (rank 2 before rank 10),
# each once, then how many processes stopped for the others.  A script
# stands for a job whose processes each wrote their own reason.
cat > "$WORK/reasons.sh" <<'EOF2'
#!/bin/sh
for i in $(seq 20 -1 1); do
  echo "phantom replay: rank $i: a reason of its own" > "$PHANTOM_REPLAY_OUT/err-$((1000 + i))"
done
for i in 1 2 3; do echo "phantom replay: rank 5: a reason of its own" > "$PHANTOM_REPLAY_OUT/err-$((2000 + i))"; done
exit 1
EOF2
chmod +x "$WORK/reasons.sh"
"$PHANTOM" replay "$T" --ranks 1 --isolated -- "$WORK/reasons.sh" > "$WORK/out" 2>&1 &&
  fail "a replay whose processes stopped succeeded"
seq 1 16 | sed 's/.*/phantom replay: rank &: a reason of its own/' > "$WORK/want"
echo "phantom replay: 4 more processes stopped, for reasons in $T/replay/.*/err-\\*" >> "$WORK/want"
tail -17 "$WORK/out" > "$WORK/got"
paste -d '\n' "$WORK/want" "$WORK/got" | while read -r want && read -r got; do
  echo "$got" | grep -Eq "^$want\$" || { cat "$WORK/out"; fail "reasons: '$got', expected '$want'"; }
done || exit 1

# The same run replays fine, and a bad log stops it before or when it is read.
"$PHANTOM" replay "$T" --ranks 1 --isolated -- "$prog" 64 25 > "$WORK/out" 2>&1 ||
  { cat "$WORK/out"; fail "the unchanged replay"; }
cp "$T/rank-000001.log" "$WORK/log1"
head -c "$(($(wc -c < "$WORK/log1") / 2))" "$WORK/log1" > "$T/rank-000001.log"
must_stop "truncated log" "^phantom replay: rank 1: event [0-9]+: [^ ]*rank-000001\.log: offset [0-9]+: truncated" \
  "$T" --ranks 1 --isolated --force -- "$prog" 64 25
cp "$T/rank-000002.log" "$T/rank-000001.log"
must_stop "foreign log" "^phantom replay: [^ ]*rank-000001\.log: offset 12: header says rank 2 of 4, expected rank 1 of 4" \
  "$T" --ranks 1 --isolated --force -- "$prog" 64 25
rm "$T/rank-000001.log"
must_stop "missing log" "^phantom replay: [^ ]*rank-000001\.log: cannot open: No such file or directory$" \
  "$T" --ranks 1 --isolated --force -- "$prog" 64 25

# Logs that do not fit the mode.
"$PHANTOM" record --log-ranks 0-1 -o "$WORK/sub.trace" -- mpirun --oversubscribe -np 4 "$prog" 64 25 \
  > "$WORK/rec" 2>&1 || fail "recording with --log-ranks"
must_stop "isolated from a subgroup log" "^phantom replay: [^ ]*sub\.trace: --isolated needs a full message log" \
  "$WORK/sub.trace" --ranks 0 --isolated -- "$prog" 64 25
must_stop "another subgroup" "^phantom replay: [^ ]*sub\.trace: the subgroup log was recorded for ranks 0-1, not 1-2" \
  "$WORK/sub.trace" --ranks 1-2 -- "$prog" 64 25
echo "replay-divergence: every divergence and bad log stops the replay with its message"
