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

# fails NAME TEXT: phantom predict on $WORK/NAME exits 1 with one line on
# stderr, which contains TEXT.
fails() {
  rc=0
  $PREDICT "$WORK/$1" --platform "$WORK/plat.conf" > "$WORK/$1.out" 2> "$WORK/$1.err" || rc=$?
  [ $rc -eq 1 ] || fail "$1: phantom predict exited $rc, expected 1: $(tail -5 "$WORK/$1.err")"
  [ "$(wc -l < "$WORK/$1.err")" -eq 1 ] ||
    fail "$1: expected one line on stderr, got: $(cat "$WORK/$1.err")"
  grep -qF -- "$2" "$WORK/$1.err" || fail "$1: expected '$2', got: $(cat "$WORK/$1.err")"
  echo "$1: $(cat "$WORK/$1.err")"
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
