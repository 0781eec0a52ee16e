#!/bin/sh
# A prediction from a trace of 65,536 rank files: more than a process may
# have mappings (vm.max_map_count, 65,530 by default), which the reader ran
# out of when it kept every rank's file mapped ("cannot map: Cannot
# allocate memory").  The dissemination barrier's closed form at p = 65,536:
# 16 rounds of o_s + L + o_r, the same finish time on every rank.  (Not in
# check.sh's ThreadSanitizer pass: writing 65,536 files there takes many
# minutes, and no thread of ours is involved.)
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat "coll.barrier = dissemination"
os=1000 or=2000 L=5000
"$SYNTH" coll "$WORK/bar64k" --ranks 65536 --op barrier > /dev/null || fail "synth a 65,536-rank barrier"
predict "$WORK/bar64k" || fail "predict a 65,536-rank barrier"
expect "dissemination barrier p=65536" "$(q "d['predicted_ps']")" "$(( 16 * (os + L + or) * 1000 ))"
expect "dissemination barrier p=65536: all ranks" \
  "$(q "(len(d['ranks']), len(set(x['finish_ps'] for x in d['ranks'])))")" "(65536, 1)"
