#!/bin/sh
# simmpi-simgrid.sh - phantom predict against SimGrid's own trace replay, side
# by side on the same workloads (not a test).
#
#   sh bench/simmpi-simgrid.sh BUILDDIR [MAXRANKS] [TRACE...]
#
# Workloads: traces written by simmpi/synth, a 3-D stencil halo exchange
# (4 KiB to 6 neighbours, Waitall, Allreduce of 8 B; at least 50 iterations
# and 150,000 events) and an all-to-all of 64 B per peer (at least 20
# iterations and 40,000 events), 100 us of computation per iteration, at 16,
# 64, 256 and 1024 ranks (up to MAXRANKS), then any recorded traces given.
# The floors on events keep both simulators' start-up (a few milliseconds
# for ours, a tenth of a second for SimGrid's) from deciding small rows.  Each trace is predicted by `phantom predict` and
# exported with `phantom export --format simgrid` for `smpirun -replay`
# (SimGrid 3.32, Debian's libsimgrid-dev), on the same platform: PLATFORM
# (default platforms/ib-qdr.conf) translated by phantom export, PPN ranks per
# node (default 1: every message crosses the network, whose LogGP numbers
# both simulators share).
#
# Rates: ours = MPI events of the trace / wall time of the whole `phantom
# predict --threads 1 --json` command (it reports no timing of its own; one
# thread, as SimGrid's simulation is one); SimGrid's = actions replayed (the
# export's lines: init, compute, messages, waits, collectives, finalize) /
# wall time of the whole smpirun command (-no-privatize, as smpireplaymain
# has no globals to privatise).  Both include start-up, reading the trace
# and building the platform.  The two run in turn, ours then SimGrid's,
# ROUNDS times (default 3), and each rate is its best round's: on a shared
# VM the host's load changes from one second to the next, and runs of the
# two taken minutes apart (all of ours, then all of SimGrid's, as before
# 2026-12-05) gave the same build 13.6x in one run of this script and 20.0x
# in the next.  "spread" is the lowest and highest ratio of a round's two
# runs: how far one round alone could mislead.  The two count different
# things (a poll that found nothing is an event of ours but
# only computation in the export; a collective is one of each), so "faster"
# also gives the plain ratio of the wall times on the same trace: SimGrid's
# rate counted in the same MPI events as ours, the like-for-like ratio of
# events per second.  Also printed: the two predicted run times.
set -eu
B=$(cd "${1:?usage: simmpi-simgrid.sh BUILDDIR [MAXRANKS] [TRACE...]}" && pwd)
shift
MAX=1024
case "${1:-x}" in *[!0-9]*) ;; *) MAX=$1; shift ;; esac
HERE=$(cd "$(dirname "$0")/.." && pwd)
PLATFORM=${PLATFORM:-$HERE/platforms/ib-qdr.conf}
PPN=${PPN:-1}
PHANTOM="$B/cli/phantom"
SYNTH="$B/simmpi/synth"
command -v smpirun > /dev/null || { echo "simmpi-simgrid.sh: smpirun not found (apt-get install libsimgrid-dev)" >&2; exit 1; }
[ -x "$SYNTH" ] || { echo "simmpi-simgrid.sh: $SYNTH not built (make -C $B simmpi/synth)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/phantom-simgrid.XXXXXX")
trap 'rm -rf "$W"' EXIT

. "$HERE/bench/wall.sh" # wall out|all OUT CMD...

ROUNDS=${ROUNDS:-3}
case $ROUNDS in '' | *[!0-9]* | 0) echo "simmpi-simgrid.sh: ROUNDS=$ROUNDS is not a positive count" >&2; exit 2 ;; esac

# ours TRACE: one run; "predicted_s wall_s", the events in $W/events
ours() {
  w=$(wall out "$W/p.json" "$PHANTOM" predict "$1" --platform "$PLATFORM" --ppn "$PPN" --threads 1 --json) || return 1
  p=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
open(sys.argv[2], "w").write("%s %s\n" % (d["simulator"]["events"], d["nranks"])); print(d["predicted_s"])' \
    "$W/p.json" "$W/events")
  echo "$p $w"
}

# export TRACE: the SimGrid files in $W/x.tit*; prints the number of actions
export_simgrid() {
  "$PHANTOM" export "$1" --format simgrid -o "$W/x.tit" --platform "$PLATFORM" --ppn "$PPN" \
    > "$W/export.out" 2> "$W/export.err" || { cat "$W/export.err" >&2; return 1; }
  sed -n 's/^wrote .*: [0-9]* ranks, \([0-9]*\) actions.*/\1/p' "$W/export.out"
}

# simgrid: one run of the export; "simulated_s wall_s"
simgrid() {
  w=$(wall all "$W/sg.out" smpirun -no-privatize -np "$(wc -l < "$W/x.tit.hosts")" -platform "$W/x.tit.xml" \
    -hostfile "$W/x.tit.hosts" -replay "$W/x.tit" --log=root.thres:warning --log=smpi_utils.thres:info) ||
    { tail -5 "$W/sg.out" >&2; return 1; }
  sim=$(sed -n 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' "$W/sg.out")
  echo "${sim:-nan} $w"
}

printf '%-12s %5s %8s %7s %10s %8s %7s %9s %7s %7s %13s %12s %12s %7s\n' workload ranks events "ours s" "ours ev/s" \
  actions "SG s" "SG act/s" ratio faster spread "ours pred" "SG pred" diff
row() { # NAME TRACE
  actions=$(export_simgrid "$2")
  : > "$W/rounds"
  i=0
  while [ $i -lt "$ROUNDS" ]; do # ours then SimGrid's, in turn: "ours_wall sg_wall" a round
    o=$(ours "$2")
    g=$(simgrid)
    echo "${o#* } ${g#* }" >> "$W/rounds"
    i=$((i + 1))
  done
  # shellcheck disable=SC2046 # two numbers each
  set -- "$1" $(cat "$W/events") "${o% *}" "${g% *}"
  awk -v name="$1" -v ev="$2" -v n="$3" -v op="$4" -v sp="$5" -v ac="$actions" '
    { r = (ev / $1) / (ac / $2); lo = NR == 1 || r < lo ? r : lo; hi = NR == 1 || r > hi ? r : hi
      ow = NR == 1 || $1 < ow ? $1 : ow; sw = NR == 1 || $2 < sw ? $2 : sw }
    END { our = ev / ow; sg = ac / sw
      printf "%-12s %5d %8d %7.3f %10.0f %8d %7.3f %9.0f %6.1fx %6.1fx %5.1f-%5.1fx %9.3f ms %9.3f ms %+6.1f%%\n",
             name, n, ev, ow, our, ac, sw, sg, our / sg, sw / ow, lo, hi, op * 1e3, sp * 1e3, (sp - op) / op * 100 }' \
    "$W/rounds"
}

dims() { case $1 in 16) echo 4,2,2 ;; 64) echo 4,4,4 ;; 256) echo 8,8,4 ;; 1024) echo 16,8,8 ;; esac; }
iters() { # MIN_ITERS MIN_EVENTS EVENTS_PER_RANK_AND_ITER RANKS
  awk -v m="$1" -v e="$2" -v k="$3" -v n="$4" 'BEGIN { i = int((e + k * n - 1) / (k * n)); print (i > m ? i : m) }'
}
synth_row() { # KIND SYNTH-OPTIONS...: write the workload, run both, clean up
  kind=$1; shift
  "$SYNTH" "$kind" "$W/synth" "$@" --comp 100000
  row "$kind" "$W/synth"
  rm -rf "$W/synth" "$W"/x.tit*
}
for n in 16 64 256 1024; do
  [ "$n" -le "$MAX" ] || continue
  synth_row stencil --dims "$(dims $n)" --bytes 4096 --iters "$(iters 50 150000 14 $n)"
done
for n in 16 64 256 1024; do
  [ "$n" -le "$MAX" ] || continue
  synth_row alltoall --ranks "$n" --bytes 64 --iters "$(iters 20 40000 1 $n)"
done
for t in "$@"; do
  row "$(basename "$t")" "$t"
  rm -rf "$W"/x.tit*
done
