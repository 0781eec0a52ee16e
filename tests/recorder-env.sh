#!/bin/sh
# recorder-env.sh - the recorder's yes/no and number variables, as a
# production job sets them (mpirun with LD_PRELOAD, no `phantom record`).
#   - PHANTOM_DISABLE and PHANTOM_LOG: unset or empty is off; 1/yes/true/on
#     and 0/no/false/off in any case; anything else is one warning per rank
#     and off.  (Before, any value but "0" was on, the empty one too.)
#   - A bad number (PHANTOM_BLOCK_KB=0, PHANTOM_CALLSITE_DEPTH=x) is one
#     warning per rank naming it, and its default.
#   - A bad PHANTOM_CLOCK is one warning per rank, and the default clock.
# In every case the job's stdout and exit code are those of a bare run.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
prog=$(build_prog fault-loop.c)
NP=2

mpirun_n $NP "$prog" -n 2000 -x 3 > "$WORK/bare.out" 2> "$WORK/bare.err" && fail "bare run: exit 0, want 3"
grep -q "^fault-loop: $NP ranks, 2000 iterations" "$WORK/bare.out" || fail "bare run: unexpected output"

# run NAME "VAR=VALUE;..." WANT-TRACE(0|1) WANT-LOG(0|1) [WARNING-REGEX]
run() {
  name=$1 env=$2 want_trace=$3 want_log=$4 warn=${5:-}
  dir=$WORK/$name.trace
  rc=0
  OMPI_MCA_mca_base_env_list="LD_PRELOAD=$PRELOAD_LIST;PHANTOM_TRACE_DIR=$dir;$env" \
    mpirun_n $NP "$prog" -n 2000 -x 3 > "$WORK/$name.out" 2> "$WORK/$name.err" || rc=$?
  [ $rc -eq 3 ] || fail "$name ($env): the job exited $rc, the bare run 3: $(cat "$WORK/$name.err")"
  cmp -s "$WORK/bare.out" "$WORK/$name.out" || fail "$name ($env): stdout differs from the bare run"
  grep 'phantom' "$WORK/$name.err" > "$WORK/$name.warn" || true
  if [ -n "$warn" ]; then
    [ "$(grep -c "^phantom: $warn" "$WORK/$name.warn")" -eq $NP ] && [ "$(wc -l < "$WORK/$name.warn")" -eq $NP ] ||
      fail "$name ($env): want one 'phantom: $warn' line per rank and no other, got: $(cat "$WORK/$name.warn")"
  elif [ -s "$WORK/$name.warn" ]; then
    fail "$name ($env): unexpected warnings: $(cat "$WORK/$name.warn")"
  fi
  ntrace=$(find "$dir" -name 'rank-*.evt' 2> /dev/null | wc -l)
  nlog=$(find "$dir" -name 'rank-*.log' 2> /dev/null | wc -l)
  [ "$ntrace" -eq $((want_trace * NP)) ] || fail "$name ($env): $ntrace event files, want $((want_trace * NP))"
  [ "$nlog" -eq $((want_log * NP)) ] || fail "$name ($env): $nlog log files, want $((want_log * NP))"
  if [ "$want_trace" -eq 1 ]; then
    "$PHANTOM" stats "$dir" --json > "$WORK/$name.stats" 2> "$WORK/$name.serr" ||
      fail "$name ($env): phantom stats: $(cat "$WORK/$name.serr")"
  fi
  echo "$name: ok ($env)"
}

run disable-1 "PHANTOM_DISABLE=1" 0 0
run disable-yes "PHANTOM_DISABLE=yes" 0 0
run disable-TRUE "PHANTOM_DISABLE=TRUE" 0 0
run disable-on "PHANTOM_DISABLE=On" 0 0
run disable-empty "PHANTOM_DISABLE=" 1 0
run disable-0 "PHANTOM_DISABLE=0" 1 0
run disable-off "PHANTOM_DISABLE=off" 1 0
run disable-bad "PHANTOM_DISABLE=maybe" 1 0 "PHANTOM_DISABLE=maybe is not 1/yes/true/on or 0/no/false/off; using 0"
run log-empty "PHANTOM_LOG=" 1 0
run log-no "PHANTOM_LOG=No" 1 0
run log-yes "PHANTOM_LOG=yes" 1 1
run log-bad "PHANTOM_LOG=2" 1 0 "PHANTOM_LOG=2 is not 1/yes/true/on or 0/no/false/off; using 0"
run block-0 "PHANTOM_BLOCK_KB=0" 1 0 "PHANTOM_BLOCK_KB=0 is not a number in \[1, 65536\]; using 64"
run depth-x "PHANTOM_CALLSITE_DEPTH=x" 1 0 "PHANTOM_CALLSITE_DEPTH=x is not a number in \[1, 8\]; using 2"
run clock-bad "PHANTOM_CLOCK=monotnic" 1 0 "PHANTOM_CLOCK=monotnic is not monotonic or tsc; using tsc where invariant"
run clock-mono "PHANTOM_CLOCK=monotonic" 1 0

# Block sizes: a prediction holds every rank's current block decompressed,
# so the default is 64 KiB (was 1 MiB); PHANTOM_BLOCK_KB changes it.  Each
# frame's content size, read from its header by tests/zstd_frames.py (not
# by phantom's reader), is at most the block size, and a rank file of more
# than one block's events has more than one frame.
# frames NAME "VAR=VALUE;..." MAX-RAW-BYTES
frames() {
  name=$1 env=$2 max=$3
  dir=$WORK/$name.trace
  OMPI_MCA_mca_base_env_list="LD_PRELOAD=$PRELOAD_LIST;PHANTOM_TRACE_DIR=$dir;$env" \
    mpirun_n $NP "$prog" -n 20000 -x 3 > "$WORK/$name.out" 2> "$WORK/$name.err" || true
  [ "$(find "$dir" -name 'rank-*.evt' | wc -l)" -eq $NP ] || fail "$name ($env): want $NP event files: $(cat "$WORK/$name.err")"
  for f in "$dir"/rank-*.evt; do
    python3 "$top_srcdir/tests/zstd_frames.py" "$f" > "$WORK/$name.frames" || fail "$name: $f: not zstd frames"
    verdict=$(awk -v max="$max" -v f="$f" -v name="$name" '
      { n++; total += $3; if ($3 > max) { printf "%s: %s: a frame of %d raw bytes, over %d\n", name, f, $3, max; bad = 1 } }
      END { if (total > max && n < 2) { printf "%s: %s: %d raw bytes in %d frame\n", name, f, total, n; bad = 1 }
            if (!bad) printf "%s: %s: %d frames, %d raw bytes, none over %d\n", name, f, n, total, max
            exit bad }' "$WORK/$name.frames") || fail "$verdict"
    echo "$verdict"
  done
}
frames block-default "PHANTOM_DISABLE=0" 65536
frames block-16 "PHANTOM_BLOCK_KB=16" 16384
