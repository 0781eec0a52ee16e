# tests/replay-lib.sh - shared by the replay tests; sourced after tests/lib.sh.

# record NAME PROG NP [record options...]: record PROG at NP ranks into
# $WORK/NAME.trace, its output in $WORK/NAME.rec.
record() {
  name=$1 prog=$2 np=$3; shift 3
  timeout "${PHANTOM_TEST_TIMEOUT:-300}" "$PHANTOM" record "$@" -o "$WORK/$name.trace" --force -- \
    mpirun --oversubscribe -np "$np" "$prog" > "$WORK/$name.rec" 2>&1 || { tail -20 "$WORK/$name.rec"; fail "recording $name at $np ranks"; }
  grep -q FAIL "$WORK/$name.rec" && fail "$name: the program's own check failed while recording"
  return 0
}

# The "rank R checksum" lines of output file $1 for the ranks listed in $2 (0,2-3), sorted.
checksums() {
  python3 - "$1" "$2" <<'PY'
import re, sys
want = set()
for part in sys.argv[2].split(','):
    lo, _, hi = part.partition('-')
    want.update(range(int(lo), int(hi or lo) + 1))
lines = [l.strip() for l in open(sys.argv[1], errors='replace') if re.match(r'rank \d+ checksum 0x', l)]
print('\n'.join(sorted(l for l in lines if int(l.split()[1]) in want)))
PY
}

# replay_same NAME PROG SPEC [replay options...]: replay ranks SPEC of
# $WORK/NAME.trace and check that they print the recorded checksum lines.
replay_same() {
  name=$1 prog=$2 spec=$3; shift 3
  out="$WORK/$name.rep"
  timeout "${PHANTOM_TEST_TIMEOUT:-300}" "$PHANTOM" replay "$WORK/$name.trace" --ranks "$spec" \
    --force "$@" -- "$prog" > "$out" 2>&1 || { tail -20 "$out"; fail "$name: replay of ranks $spec $* failed"; }
  grep -q FAIL "$out" && { cat "$out"; fail "$name: ranks $spec: the program's check failed under replay"; }
  checksums "$WORK/$name.rec" "$spec" > "$WORK/want"
  checksums "$out" "$spec" > "$WORK/got"
  [ -s "$WORK/want" ] || fail "$name: no checksum lines recorded"
  cmp -s "$WORK/want" "$WORK/got" ||
    { diff "$WORK/want" "$WORK/got"; fail "$name: ranks $spec $*: checksums differ from the recorded run"; }
}

# replay_app TRACE DIR WANT FILTER MODE PROGRAM [ARGS...]: in DIR, replay
# ranks MODE (replay options, split at blanks) of TRACE running PROGRAM.
# FILTER, a shell function of one output file, must give from the replay's
# standard output exactly the file WANT (what it gave from the recorded
# run's), and every replayed rank must reach MPI_Finalize.
replay_app() {
  trace=$1 dir=$2 want=$3 filter=$4 mode=$5; shift 5
  # shellcheck disable=SC2086 # the options are words
  (cd "$dir" && timeout "${PHANTOM_TEST_TIMEOUT:-300}" "$PHANTOM" replay "$trace" $mode --name r --force \
     -- "$@" > rep.out 2> rep.err) || fail "replay $mode: $(tail -5 "$dir/rep.err")"
  "$filter" "$dir/rep.out" > "$dir/rep.filtered"
  diff "$want" "$dir/rep.filtered" > "$dir/rep.diff" ||
    fail "replay $mode: output differs from the recorded run's: $(head -5 "$dir/rep.diff")"
  grep -Eq '^ +[0-9]+ .*(partial|end of recording|killed)$' "$dir/rep.err" &&
    fail "replay $mode: did not reach MPI_Finalize: $(cat "$dir/rep.err")"
  echo "ok: replay $mode: $(grep -c . "$want") lines of output identical;" \
    "$(grep -E '^ +[0-9]+ ' "$dir/rep.err" | awk '{print "rank " $1 ": " $2 " events"}' | tr '\n' ' ')"
}
