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
# thread, as SimGrid's simulation is one; best of 3 runs);
# SimGrid's = actions replayed (the export's lines: init, compute, messages,
# waits, collectives, finalize) / wall time of the whole smpirun command (best
# of 3 runs, as ours: one run of it varied by a third from hour to hour;
# -no-privatize, as smpireplaymain has no globals to privatise).  Both
# include start-up, reading the trace and building the platform.  The two
# count different things (a poll that found nothing is an event of ours but
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

# ours TRACE: "events predicted_s wall_s" (best of 3 runs)
ours() {
  best=""
  for _ in 1 2 3; do
    w=$(wall out "$W/p.json" "$PHANTOM" predict "$1" --platform "$PLATFORM" --ppn "$PPN" --threads 1 --json) || return 1
    best=$(awk -v a="$w" -v b="${best:-$w}" 'BEGIN { print (a < b ? a : b) }')
  done
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["simulator"]["events"], d["predicted_s"], sys.argv[2])' \
    "$W/p.json" "$best"
}

# simgrid TRACE: "actions simulated_s wall_s" (best of 3 runs, as ours)
simgrid() {
  "$PHANTOM" export "$1" --format simgrid -o "$W/x.tit" --platform "$PLATFORM" --ppn "$PPN" \
    > "$W/export.out" 2> "$W/export.err" || { cat "$W/export.err" >&2; return 1; }
  actions=$(sed -n 's/^wrote .*: [0-9]* ranks, \([0-9]*\) actions.*/\1/p' "$W/export.out")
  n=$(wc -l < "$W/x.tit.hosts")
  best=""
  for _ in 1 2 3; do
    w=$(wall all "$W/sg.out" smpirun -no-privatize -np "$n" -platform "$W/x.tit.xml" -hostfile "$W/x.tit.hosts" \
      -replay "$W/x.tit" --log=root.thres:warning --log=smpi_utils.thres:info) ||
      { tail -5 "$W/sg.out" >&2; return 1; }
    best=$(awk -v a="$w" -v b="${best:-$w}" 'BEGIN { print (a < b ? a : b) }')
  done
  sim=$(sed -n 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' "$W/sg.out")
  echo "$actions ${sim:-nan} $best"
}

printf '%-12s %5s %8s %7s %10s %8s %7s %9s %7s %7s %12s %12s %7s\n' workload ranks events "ours s" "ours ev/s" \
  actions "SG s" "SG act/s" ratio faster "ours pred" "SG pred" diff
row() { # NAME TRACE
  o=$(ours "$2")
  g=$(simgrid "$2")
  # shellcheck disable=SC2086 # three numbers each
  set -- "$1" "$2" $o $g
  n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nranks"])' "$W/p.json")
  awk -v name="$1" -v n="$n" -v ev="$3" -v op="$4" -v ow="$5" -v ac="$6" -v sp="$7" -v sw="$8" 'BEGIN {
    our = ev / ow; sg = ac / sw
    printf "%-12s %5d %8d %7.3f %10.0f %8d %7.3f %9.0f %6.1fx %6.1fx %9.3f ms %9.3f ms %+6.1f%%\n",
           name, n, ev, ow, our, ac, sw, sg, our / sg, sw / ow, op * 1e3, sp * 1e3, (sp - op) / op * 100 }'
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
