#!/bin/sh
# slow-cpu.sh - run a program on a slower CPU: a cgroup v1 CPU quota.
#
#   sh bench/slow-cpu.sh PROGRAM [ARGS...]
#   mpirun -np 2 sh bench/slow-cpu.sh ./app ...      (the node's ranks share the quota)
#
# Moves itself into a cgroup under /sys/fs/cgroup/cpu/phantom-slow whose CFS
# bandwidth quota is $PHANTOM_SLOW_QUOTA of a CPU (default 0.5) for each rank
# it holds, then execs PROGRAM, which with every thread it starts stays in
# that cgroup.
#
# By default all of a node's ranks under Open MPI's mpirun share one cgroup,
# phantom-slow/job, with a 100 ms period: what a container's CPU limit is
# (`docker run --cpus`, a Kubernetes limit: one cgroup, the kernel's default
# 100 ms period), and so what a cloud user whose job runs in one meets.  The
# ranks then run and stop together, in stretches of about 50 ms at quota
# 0.5 (doc/accuracy.md, runs J, O to V).
#
# PHANTOM_SLOW_SCOPE=rank instead gives each rank its own cgroup
# (phantom-slow/rank-R, R = $OMPI_COMM_WORLD_RANK) with a short period, so
# each rank is paused on its own clock, and a rank that waits in MPI spins
# on its own quota; an exchange then waits whenever its partner is paused
# (runs H, K to N).  Its period is short, so that each pause stays well below
# an application's iteration time, but not shorter than the kernel enforces:
# the kernel refuses a quota below 1 ms, and it charges a running task's
# time at its timer tick (4 ms here, CONFIG_HZ=250): at a 2 ms period with a
# 1 ms quota a spinning rank ran about 3 ms and was paused about 5 ms, 40% of
# the time, not 50%; at a 4 ms period with a 2 ms quota it ran 2 ms and was
# paused 2 ms, 49% of the time.  So that period is max(4 ms, 2 ms / QUOTA)
# (doc/accuracy.md, "The stand-in target's pauses").  A process started
# outside mpirun gets a cgroup of its own, phantom-slow/pid-PID, with the
# same period.  $PHANTOM_SLOW_PERIOD_US sets the period by hand; `phantom
# calibrate` under this wrapper reports the share of the time each rank ran.
#
# Needs root and cgroup v1's cpu controller at /sys/fs/cgroup/cpu (or
# $PHANTOM_SLOW_CGROOT).  Environment, LD_PRELOAD included, passes through
# to PROGRAM unchanged (so phantom record and phantom replay can preload
# their libraries into the ranks through this wrapper).
set -eu
[ $# -ge 1 ] || { echo "usage: slow-cpu.sh PROGRAM [ARGS...]" >&2; exit 2; }
q=${PHANTOM_SLOW_QUOTA:-0.5}
root=${PHANTOM_SLOW_CGROOT:-/sys/fs/cgroup/cpu}/phantom-slow
scope=${PHANTOM_SLOW_SCOPE:-job}
case $scope in job|rank) ;; *) echo "slow-cpu.sh: PHANTOM_SLOW_SCOPE=$scope: expected job or rank" >&2; exit 2 ;; esac
period=${PHANTOM_SLOW_PERIOD_US:-}
if [ "$scope" = job ] && [ -n "${OMPI_COMM_WORLD_LOCAL_SIZE:-}" ]; then
  # one cgroup for the node's ranks, with QUOTA of a CPU for each of them
  cg=$root/job
  q=$(awk -v q="$q" -v n="$OMPI_COMM_WORLD_LOCAL_SIZE" 'BEGIN { print q * n }')
  period=${period:-100000}
elif [ -n "${OMPI_COMM_WORLD_RANK:-}" ]; then
  cg=$root/rank-$OMPI_COMM_WORLD_RANK
else
  cg=$root/pid-$$
fi
# period and quota in microseconds, integers
set -- "$(awk -v q="$q" -v p="$period" 'BEGIN {
  if (q + 0 <= 0) { print "bad"; exit }
  if (p == "") { p = 4000; if (q < 0.5) p = int(2000 / q + 0.999999) }
  quota = int(q * p + 0.5); if (quota < 1000) quota = 1000
  print p, quota }')" "$@"
case $1 in bad) echo "slow-cpu.sh: PHANTOM_SLOW_QUOTA=$q: expected a fraction > 0" >&2; exit 2 ;; esac
period=${1% *} quota=${1#* }
shift
mkdir -p "$cg"
# lower the quota first when the period shrinks (the kernel checks each write)
echo -1 > "$cg/cpu.cfs_quota_us"
echo "$period" > "$cg/cpu.cfs_period_us"
echo "$quota" > "$cg/cpu.cfs_quota_us"
echo $$ > "$cg/cgroup.procs"
exec "$@"
