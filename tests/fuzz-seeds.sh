#!/bin/sh
# fuzz-seeds.sh - the fuzz targets (tests/fuzz), built without libFuzzer by
# make check with this build's compiler and sanitizers, run over the checked-in
# seed corpus: every seed must decode or simulate to what it did when it was
# made (the table below: events or records read, and how the stream ended;
# for fuzz_predict the predicted time), and every bundled platform file must
# load with the invariants fuzz_platform checks.  A sanitizer report or a
# target's own check (an error message without the file name, a breakdown
# that does not add up) aborts.  Fuzzing itself: tests/fuzz/README.md.
# A change to the reader's output or to the model moves rows of the table on
# purpose: remake them with PH_FUZZ_VERBOSE=1 and the commands below, and
# say why in the commit.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
F=$top_builddir/tests/fuzz
C=$top_srcdir/tests/fuzz/corpus
[ -x "$F/fuzz_reader" ] && [ -x "$F/fuzz_predict" ] && [ -x "$F/fuzz_platform" ] ||
  fail "the fuzz targets are not built (make check builds them)"
n=0
while read -r mode seed want; do
  case $mode in
    predict) got=$(PH_FUZZ_PARTNERS=$C/predict-partners/$seed PH_FUZZ_VERBOSE=1 "$F/fuzz_predict" "$C/predict/$seed" 2>&1) ;;
    *) got=$(PH_FUZZ_MODE=$mode PH_FUZZ_VERBOSE=1 "$F/fuzz_reader" "$C/$mode/$seed" 2>&1) ;;
  esac || fail "$mode seed $seed: the target failed: $got"
  [ "$got" = "$want" ] || fail "$mode seed $seed: got '$got', want '$want'"
  n=$((n + 1))
done <<'TABLE'
evt collectives fuzz_reader: read 40 events, complete
evt comms fuzz_reader: read 43 events, complete
evt fault-loop fuzz_reader: read 603 events, complete
evt intercoll fuzz_reader: read 18 events, complete
evt nonblocking fuzz_reader: read 101 events, complete
evt p2p fuzz_reader: read 42 events, complete
evt stencil fuzz_reader: read 1022 events, complete
evt timed fuzz_reader: read 5327 events, incomplete
evt unknown fuzz_reader: read 3 events, complete, 6 counters, 4 timed, 4932611 ns
evt-raw collectives fuzz_reader: read 40 events, complete
evt-raw comms fuzz_reader: read 43 events, complete
evt-raw extension fuzz_reader: read 42 events, complete
evt-raw fault-loop fuzz_reader: read 603 events, complete
evt-raw intercoll fuzz_reader: read 18 events, complete
evt-raw nonblocking fuzz_reader: read 101 events, complete
evt-raw p2p fuzz_reader: read 42 events, complete
evt-raw stencil fuzz_reader: read 1022 events, complete
evt-raw timed fuzz_reader: read 1766 events, incomplete
evt-raw unknown fuzz_reader: read 3 events, complete, 6 counters, 4 timed, 4932611 ns
log collectives fuzz_reader: read 26 log records
log comms fuzz_reader: read 15 log records
log fault-loop fuzz_reader: read 301 log records
log intercoll fuzz_reader: read 9 log records
log nonblocking fuzz_reader: read 29 log records
log p2p fuzz_reader: read 2 log records
log stencil fuzz_reader: read 33 log records
log timed fuzz_reader: read 8198 log records
log-raw collectives fuzz_reader: read 26 log records
log-raw comms fuzz_reader: read 15 log records
log-raw fault-loop fuzz_reader: read 301 log records
log-raw intercoll fuzz_reader: read 9 log records
log-raw nonblocking fuzz_reader: read 29 log records
log-raw p2p fuzz_reader: read 1 log records
log-raw stencil fuzz_reader: read 16 log records
log-raw timed fuzz_reader: read 4103 log records
meta collectives fuzz_reader: meta: 4 ranks, 1 communicators, 41 call sites
meta comms fuzz_reader: meta: 4 ranks, 14 communicators, 43 call sites
meta fault-loop fuzz_reader: meta: 4 ranks, 1 communicators, 7 call sites
meta intercoll fuzz_reader: meta: 4 ranks, 5 communicators, 20 call sites
meta nonblocking fuzz_reader: meta: 4 ranks, 1 communicators, 46 call sites
meta p2p fuzz_reader: meta: 4 ranks, 1 communicators, 47 call sites
meta stencil fuzz_reader: meta: 4 ranks, 1 communicators, 8 call sites
meta timed fuzz_reader: meta: 4 ranks, 1 communicators, 7 call sites
meta unknown fuzz_reader: meta: 4 ranks, 1 communicators, 3 call sites
predict collectives fuzz_predict: predicted 386745492 ps, 160 events, 0 stuck
predict comms fuzz_predict: predicted 242982037 ps, 189 events, 0 stuck
predict fault-loop fuzz_predict: predicted 436389504 ps, 2412 events, 0 stuck
predict intercoll fuzz_predict: predicted 163890468 ps, 72 events, 0 stuck
predict nonblocking fuzz_predict: predicted 389788200 ps, 455 events, 0 stuck
predict p2p fuzz_predict: predicted 1481907300 ps, 156 events, 0 stuck
predict stencil fuzz_predict: predicted 15280922780 ps, 4088 events, 0 stuck
predict unknown fuzz_predict: predicted 14605243000 ps, 12 events, 0 stuck
TABLE
[ "$n" -eq "$(ls "$C"/evt "$C"/evt-raw "$C"/log "$C"/log-raw "$C"/meta "$C"/predict | grep -cv -e '^$' -e ':$')" ] ||
  fail "the table covers $n seeds, the corpus has more: add them"
# Every bundled platform file loads, and meets what the simulator relies on.
"$F/fuzz_platform" "$top_srcdir"/platforms/*.conf || fail "fuzz_platform on platforms/*.conf"
echo "fuzz-seeds: $n seeds decode and simulate as they did; $(ls "$top_srcdir"/platforms/*.conf | wc -l) platform files load"
