#!/bin/sh
# simmpi-run.sh - SIM-MPI's speed and memory at growing scales (not a test).
#
#   sh bench/simmpi-run.sh BUILDDIR [MAXRANKS] [TRACE...]
#
# Synthetic workloads from an in-memory source (bench/simmpi-bench.c): a 3-D
# stencil halo exchange + Allreduce, and all-to-all, at 16 .. MAXRANKS ranks
# (default 1048576), then any recorded traces given.  Rows are about a
# million (all-to-all, small stencils) to 17 million events, so that set-up
# and start-up stay a small part of every row.  Prints simulated MPI
# events per second (one core: the simulation is one deterministic loop),
# the same number of events through a bare event queue of that many ranks in
# the same run (the ceiling), their ratio, the same through the 4-ary heap
# alone and the queue's gain over it, resident memory per simulated
# rank, heap events per MPI event (a property of the workload, not of the
# machine: section 7 of doc/simmpi.md), and for the synthetic rows the
# event generator's own rate (part of events/s's time is the generator's:
# 1/source per event).  Goals of
# issue 4: >= 10 million events/s per core; a 1,048,576-rank stencil in
# under 16 GiB.  SIMMPI_QUEUE=heap|radix|auto (default auto) picks the event
# queue of the simulation and of the bare queue alike (doc/simmpi.md, 6).
set -eu
B=${1:?usage: simmpi-run.sh BUILDDIR [MAXRANKS] [TRACE...]}
MAX=${2:-1048576}
[ $# -ge 2 ] && shift 2 || shift $#
BENCH="$B/bench/simmpi-bench"
printf '%-34s %9s %11s %8s %12s %12s %6s %12s %6s %10s %9s %7s %12s\n' workload ranks events seconds events/s \
  bare-queue/s ratio 4-ary-heap/s gain messages B/rank heap/ev source/s
row() {
  "$BENCH" "$@" | sed -e 's/^simmpi-bench: //' | awk '{
    for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%-34s %9s %11s %8s %12.0f %12.0f %6.3f %12.0f %6.2f %10s %9.0f %7.2f %12s\n", $1, v["ranks"], v["events"],
           v["seconds"], v["events_per_s"], v["bare_per_s"], v["ratio"], v["heap4_per_s"], v["queue_vs_heap4"], v["messages"],
           v["bytes_per_rank"], v["events"] ? v["heap_events"] / v["events"] : 0, v["source_per_s"] == "" ? "-" : sprintf("%.0f", v["source_per_s"]) }'
}
n=16
while [ $n -le "$MAX" ]; do
  it=$(( 16777216 / (n * 14) )); [ $it -lt 1 ] && it=1; [ $it -gt 4000 ] && it=4000
  row stencil $n $it 4096
  n=$(( n * 4 ))
done
n=16
while [ $n -le "$MAX" ]; do
  it=$(( 1048576 / n )); [ $it -lt 1 ] && it=1
  row alltoall $n $it 64
  n=$(( n * 4 ))
done
for t in "$@"; do row "$t"; done
