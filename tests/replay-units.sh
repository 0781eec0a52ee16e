#!/bin/sh
# How the replay times computation units (replay --units, doc/replay.md
# "Throttled nodes").  Without a CPU quota, auto times wall-clock gaps.
# --units cpu times each gap in the rank's CPU time over the share of the CPU
# it had.  Under a real CPU quota (bench/slow-cpu.sh, half a CPU for each
# rank, where cgroup v1's cpu controller is writable), auto finds the quota
# and does the same: the 3 ms gaps of imbalance.c's rank 0 come out at twice
# what they take at full speed (the replay without a quota).  Their
# wall-clock time said 0.96 to 1.7 times, by chance: the kernel puts most of
# the quota's pauses into the MPI calls after such short gaps.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
prog=$(cd "$WORK" && build_prog imbalance.c)
export PH_IMB_UNIT=400000 # a unit of about 1 ms: rank 0 computes 3, the other 1, between calls
record imb "$prog" 2 --log

# units RESULT WANT: every rank of TRACE/replay/RESULT has units WANT; prints
# rank 0's share and its computation (ns)
units() {
  python3 - "$WORK/imb.trace/replay/$1/meta.json" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
ranks = m['replay']['replays'][-1]['per_rank']
for r in ranks:
    if r['units'] != sys.argv[2]: sys.exit(f"rank {r['rank']}: units {r['units']}, want {sys.argv[2]}")
    share = r['cpu_share']
    if (share is None) != (sys.argv[2] == 'wall'): sys.exit(f"rank {r['rank']}: cpu_share {share}")
    if share is not None and not 0 < share <= 1: sys.exit(f"rank {r['rank']}: cpu_share {share}")
r0 = ranks[0]
print(r0['cpu_share'] or 1, r0['computation_ns'])
PY
}

# Whether this test itself runs under a CPU quota (a CI runner's container
# limit): auto then rightly times CPU time everywhere.
quota=$(python3 - <<'PY'
import os
def quota(root, path, name):
    while True:
        try:
            v = open(os.path.join(root + path, name)).read().split()[0]
            if v.lstrip('-').isdigit() and int(v) > 0: return True
        except OSError: pass
        if path in ('', '/'): return False
        path = path.rsplit('/', 1)[0]
found = False
for line in open('/proc/self/cgroup'):
    _, ctrl, path = line.rstrip('\n').split(':', 2)
    if not ctrl: found |= quota('/sys/fs/cgroup', path, 'cpu.max')
    elif 'cpu' in ctrl.split(','):
        found |= any(quota(r, path, 'cpu.cfs_quota_us') for r in ('/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct'))
print('yes' if found else 'no')
PY
)
timeout "${PHANTOM_TEST_TIMEOUT:-300}" "$PHANTOM" replay "$WORK/imb.trace" --ranks 0-1 --name auto \
  -- "$prog" > "$WORK/auto.rep" 2>&1 || { tail -20 "$WORK/auto.rep"; fail "replay (--units auto) failed"; }
if [ "$quota" = no ]; then
  units auto wall > /dev/null || fail "no quota: auto did not time wall-clock gaps"
else
  units auto cpu > /dev/null || fail "this test runs under a CPU quota: auto did not time CPU time"
fi
replay_same imb "$prog" 0-1 --name cpu --units cpu
grep -q "^  units: CPU time over each rank's share of the CPU (--units cpu): rank 0 [0-9.]*%, rank 1 [0-9.]*%$" "$WORK/imb.rep" ||
  fail "--units cpu: no units line in $(cat "$WORK/imb.rep")"
r0=$(units cpu cpu) || fail "--units cpu" # (set -- $(...) would hide its failure)
set -- $r0
# Rank 0's computation at full speed: its CPU time (the units times the
# rank's share).  Not wall-clock time: a test running beside this one (make
# check -j2) stretched that, and the ratios below with it; CPU time stays.
full=$(python3 -c "import sys; print(round(float(sys.argv[1]) * int(sys.argv[2])))" "$1" "$2")

"$PHANTOM" replay "$WORK/imb.trace" --ranks 0-1 --units fast -- "$prog" > "$WORK/out" 2>&1 &&
  fail "--units fast accepted"
grep -q "phantom replay: --units: 'fast' is not auto, wall or cpu" "$WORK/out" ||
  fail "unclear --units error: $(cat "$WORK/out")"

if [ "$(id -u)" = 0 ] && [ -w "${PHANTOM_SLOW_CGROOT:-/sys/fs/cgroup/cpu}" ]; then
  slow="sh $top_srcdir/bench/slow-cpu.sh"
  for u in auto wall; do
    timeout "${PHANTOM_TEST_TIMEOUT:-300}" "$PHANTOM" replay "$WORK/imb.trace" --ranks 0-1 --force \
      --name "quota-$u" --units $u -- $slow "$prog" > "$WORK/quota-$u.rep" 2>&1 ||
      { tail -20 "$WORK/quota-$u.rep"; fail "replay under a CPU quota (--units $u) failed"; }
  done
  grep -q "^  units: CPU time over each rank's share of the CPU (a CPU quota): rank 0" "$WORK/quota-auto.rep" ||
    fail "under a quota: no units line in $(cat "$WORK/quota-auto.rep")"
  wall=$(units quota-wall wall) || fail "under a quota: --units wall"
  r0=$(units quota-auto cpu) || fail "under a quota: auto did not time CPU time"
  set -- $r0
  set -- "$1" "$(python3 -c "import sys; print(int(sys.argv[1]) / int(sys.argv[2]))" "$2" "$full")" \
    "$(python3 -c "import sys; print(int(sys.argv[1]) / int(sys.argv[2]))" "${wall#* }" "$full")"
  echo "under a CPU quota of half a CPU: share $1, rank 0's computation over its full-speed time: CPU units $2, wall units $3"
  python3 -c "import sys; s, r = map(float, sys.argv[1:]); sys.exit(not (0.3 < s < 0.7 and 1.5 < r < 2.6))" "$1" "$2" ||
    fail "under half a CPU: share $1 and rank 0's computation $2 times its full-speed time (want 0.3-0.7, 1.5-2.6)"
else
  echo "replay-units: no writable cgroup v1 cpu controller: the CPU-quota check is not run"
fi
echo "replay-units: wall-clock units without a quota, CPU time over the CPU's share with --units cpu and under a quota"
