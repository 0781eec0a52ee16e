# wall.sh - sourced by the bench scripts that time whole commands.
#
# wall out|all OUT CMD...: run CMD, its stdout (all: and its stderr) to OUT,
# and print its wall time in seconds; fails as CMD fails.  Timed from its
# fork to its exit by a clock in the parent: `date` before and after, which
# bench/simmpi-simgrid.sh used until 2026-11-26, put about 1.3 ms of its own
# two processes into every time (7% of a 17 ms row).
wall() {
  python3 -c 'import subprocess, sys, time
with open(sys.argv[2], "w") as out:
    t = time.perf_counter()
    rc = subprocess.run(sys.argv[3:], stdout=out, stderr=subprocess.STDOUT if sys.argv[1] == "all" else None).returncode
    w = time.perf_counter() - t
print("%.6f" % w)
sys.exit(rc)' "$@"
}
