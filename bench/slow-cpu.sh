#!/bin/sh
# slow-cpu.sh - run a program on a slower CPU: a cgroup v1 CPU quota.
#
#   sh bench/slow-cpu.sh PROGRAM [ARGS...]
#   mpirun -np 2 sh bench/slow-cpu.sh ./app ...      (every rank its own CPU)
#
# Moves itself into its own cgroup, /sys/fs/cgroup/cpu/phantom-slow/rank-R
# (R = $OMPI_COMM_WORLD_RANK under Open MPI's mpirun, else pid-PID), whose CFS
# bandwidth quota is $PHANTOM_SLOW_QUOTA of one CPU (default 0.5) per short
# period, then execs PROGRAM, which with every thread it starts stays in
# that cgroup.  Each rank has its own cgroup, so each rank is its own slower
# CPU: a rank spinning in MPI while it waits for its partner uses up its own
# quota, not its partner's.
#
# The period: short, so that each throttling pause stays well below an
# application's iteration time, but not shorter than the kernel enforces.
# The kernel refuses a quota below 1 ms, and it charges a running task's time
# at its timer tick (4 ms here, CONFIG_HZ=250): at a 2 ms period with a 1 ms
# quota a spinning rank ran about 3 ms and was paused about 5 ms, 40% of the
# time, not 50%; at a 4 ms period with a 2 ms quota it ran 2 ms and was paused
# 2 ms, 49% of the time (two ranks at once: about 3 ms each way, 49%).  So
# the period is max(4 ms, 2 ms / QUOTA): 4 ms at the default 0.5
# (doc/accuracy.md, "The stand-in target's pauses").  $PHANTOM_SLOW_PERIOD_US
# sets the period by hand; `phantom calibrate` under this wrapper reports the
# share of the time each rank ran.
#
# PHANTOM_SLOW_SCOPE=job instead puts all of a node's ranks into one cgroup,
# phantom-slow/job, with QUOTA of a CPU for each of them: they are paused
# together rather than each on its own clock.  At the default period it
# fared no better (doc/accuracy.md, run G: the two CPUs took turns); with
# PHANTOM_SLOW_PERIOD_US=100000 both run and stop together in 50 ms
# stretches (runs J, O and P: 4.4% to 12.2% mean error, against 9.0% to 9.8%
# per rank).
#
# Needs root and cgroup v1's cpu controller at /sys/fs/cgroup/cpu (or
# $PHANTOM_SLOW_CGROOT).  Environment, LD_PRELOAD included, passes through
# to PROGRAM unchanged (so phantom record and phantom replay can preload
# their libraries into the ranks through this wrapper).
set -eu
[ $# -ge 1 ] || { echo "usage: slow-cpu.sh PROGRAM [ARGS...]" >&2; exit 2; }
q=${PHANTOM_SLOW_QUOTA:-0.5}
root=${PHANTOM_SLOW_CGROOT:-/sys/fs/cgroup/cpu}/phantom-slow
if [ "${PHANTOM_SLOW_SCOPE:-rank}" = job ] && [ -n "${OMPI_COMM_WORLD_LOCAL_SIZE:-}" ]; then
  # one cgroup for the node's ranks, with QUOTA of a CPU for each of them:
  # they are throttled together (doc/accuracy.md, run G)
  cg=$root/job
  q=$(awk -v q="$q" -v n="$OMPI_COMM_WORLD_LOCAL_SIZE" 'BEGIN { print q * n }')
elif [ -n "${OMPI_COMM_WORLD_RANK:-}" ]; then
  cg=$root/rank-$OMPI_COMM_WORLD_RANK
else
  cg=$root/pid-$$
fi
# period and quota in microseconds, integers
set -- "$(awk -v q="$q" -v p="${PHANTOM_SLOW_PERIOD_US:-}" 'BEGIN {
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
