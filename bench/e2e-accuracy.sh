#!/bin/sh
# e2e-accuracy.sh - the whole PHANTOM chain against real runs on a stand-in target.
#
#   sh bench/e2e-accuracy.sh BUILDDIR [RUNS]
#
# Issue 6's accuracy table.  The HOST is this machine's shared memory at full
# CPU speed; the TARGET is the same machine with TCP over loopback
# (--mca btl tcp,self) and the job's ranks in one cgroup with a CPU quota
# (bench/slow-cpu.sh: $PHANTOM_SLOW_QUOTA of a CPU per rank, default 0.5, per
# 100 ms period, as a container's CPU limit; PHANTOM_SLOW_SCOPE=rank gives
# each rank its own cgroup and a 4 ms period instead): a slower node with a
# slower network.  For three applications at 2
# ranks, our example tests/progs/stencil.c (mpicc -O2, `stencil 8192 60`:
# iterations of about 100 ms, long against a throttling pause of a few ms),
# LAMMPS (Debian lmp, the melt example in a box of $LMP_BOX (default 40:
# 256,000 atoms), $LMP_STEPS steps, default 30) and HPCC
# (Debian hpcc, N=1000 as in tests/app-hpcc.sh), it does what a user does:
#
#   mpirun -np 2 --mca btl tcp,self sh bench/slow-cpu.sh phantom calibrate -o target.conf
#       (at the start of each repetition; cores_per_node = 2 is added to the file)
#   phantom record --log -o T -- mpirun -np 2 APP            (on the host)
#   phantom cluster T --ppn 2
#   phantom replay T --ranks R --plan T/groups.json --name target --repeat 3 \
#       --launcher "mpirun --mca btl tcp,self" -- sh bench/slow-cpu.sh APP
#       (for every replay run R of the plan: here the one run 0-1)
#   phantom predict T --platform target.conf --ppn 2 --groups T/groups.json \
#       --comp target --json                                  -> predicted_s
#
# and measures, beside it, the bare runs (no phantom library):
#   target:  mpirun -np 2 --mca btl tcp,self sh bench/slow-cpu.sh APP
#   host:    mpirun -np 2 APP
# each as in bench/simmpi-accuracy.sh: the wall time of mpirun less that of
# the same command running an MPI program that only calls MPI_Init and
# MPI_Finalize (the launch, under the same wrapper), and also as the span
# from MPI_Init's return to MPI_Finalize's entry (latest entry less earliest
# return over the ranks), taken by a small preloaded PMPI shim; predicted_s
# is that span.  The measured bare target run is the baseline each
# prediction is compared with; the host run and the slowdown target/host
# show that the quota took effect.
#
# One recording of the message log serves as the trace (record --log): with
# 2 ranks on a 2-core node the plan replays both ranks together (whole, or
# the first iterations when they are regular), and HPCC,
# whose timing loops make a different number of calls every run, could not
# use the replay of one execution for the trace of another.
#
# RUNS repetitions (default 3), each running every step of every
# application again, interleaved so that a drift of the machine meets both
# sides.  Prints per application the medians with their spread (min-max),
# the error of the median prediction against the median bare target run,
# the median and range of the per-run ("paired") errors, and the mean
# absolute error over the applications.  Issue 6's goal: mean absolute
# error <= 5%, no case above 10%.  Not a test: it times real runs, needs
# root (cgroups), takes a few seconds to calibrate plus a minute or two per
# repetition.
#
# Environment: WORKDIR (default a new /tmp/e2e-accuracy.XXXXXX), TARGET_CONF
# (reuse a calibrated platform file instead of calibrating), APPS (default
# "stencil lammps hpcc"), LMP_STEPS, LMP_BOX, STENCIL_ARGS, HPCC_N (1000),
# REPEAT (the replays' --repeat, default 3), BIND (Open MPI's binding
# policy for every mpirun: core, the default and Open MPI's own for two
# ranks, or none, with which the target runs were slower and scattered
# more: doc/accuracy.md, run NB), PHANTOM_SLOW_QUOTA,
# PHANTOM_SLOW_PERIOD_US.  Results and what they mean: doc/accuracy.md.
set -eu
B=$(cd "${1:?usage: e2e-accuracy.sh BUILDDIR [RUNS]}" && pwd)
RUNS=${2:-3}
S=$(cd "$(dirname "$0")/.." && pwd)
W=${WORKDIR:-$(mktemp -d /tmp/e2e-accuracy.XXXXXX)}
mkdir -p "$W"
W=$(cd "$W" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_hwloc_base_binding_policy=${BIND:-core}
PHANTOM="$B/cli/phantom"
SLOW="$S/bench/slow-cpu.sh"
TCP="--mca btl tcp,self"
APPS=${APPS:-"stencil lammps hpcc"}
LMP_STEPS=${LMP_STEPS:-30}
LMP_BOX=${LMP_BOX:-40}
STENCIL_ARGS=${STENCIL_ARGS:-"8192 60"}
HPCC_N=${HPCC_N:-1000}
REPEAT=${REPEAT:-3}
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# ---- programs and inputs
mpicc -O2 -o "$W/stencil.x" "$S/tests/progs/stencil.c" -lm
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' > "$W/empty.c"
mpicc -o "$W/empty" "$W/empty.c"
cat > "$W/span.c" <<'C'
/* MPI_Init's return and MPI_Finalize's entry, CLOCK_REALTIME, into $SPAN_OUT.RANK */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double t0;
static double now(void) { struct timespec t; clock_gettime(CLOCK_REALTIME, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int MPI_Init(int *c, char ***v) { int r = PMPI_Init(c, v); t0 = now(); return r; }
int MPI_Init_thread(int *c, char ***v, int q, int *p) { int r = PMPI_Init_thread(c, v, q, p); t0 = now(); return r; }
int MPI_Finalize(void)
{
    double t1 = now();
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *o = getenv("SPAN_OUT");
    char path[4096];
    if (o && snprintf(path, sizeof path, "%s.%d", o, rank) < (int)sizeof path) {
        FILE *f = fopen(path, "w");
        if (f) { fprintf(f, "%.6f %.6f\n", t0, t1); fclose(f); }
    }
    return PMPI_Finalize();
}
C
mpicc -O2 -shared -fPIC -o "$W/libspan.so" "$W/span.c"
for app in $APPS; do mkdir -p "$W/$app"; done
if [ -d "$W/lammps" ]; then
  sh "$S/tests/melt-input.sh" "$W/lammps/melt.orig" ||
    { echo "e2e-accuracy.sh: no LAMMPS melt example (apt-get install lammps-examples)" >&2; exit 1; }
  sed -e "s/^run[[:space:]].*/run $LMP_STEPS/" -e 's/^thermo[[:space:]].*/thermo 100/' \
        -e "s/^region[[:space:]]*box block .*/region box block 0 $LMP_BOX 0 $LMP_BOX 0 $LMP_BOX/" \
        "$W/lammps/melt.orig" > "$W/lammps/in.melt"
fi
[ -d "$W/hpcc" ] &&
  sed -n '/^HPLinpack benchmark input file/,/^EOF/p' "$S/tests/app-hpcc.sh" | grep -v '^EOF' |
    sed "s/^1000 *Ns/$HPCC_N Ns/" > "$W/hpcc/hpccinf.txt"

# app_cmd APP: the application's command line, in "$@" form, printed one word a line
app_cmd() {
  case $1 in
    stencil) echo "$W/stencil.x"; for a in $STENCIL_ARGS; do echo "$a"; done ;;
    lammps) printf '%s\n' "$(command -v lmp)" -in in.melt -log none -screen none ;;
    hpcc) command -v hpcc ;;
  esac
}

# timed OUTFILE SPANFILE CMD...: run CMD in the current directory with the
# span shim, append "wall" to OUTFILE; SPANFILE gets "span"
timed() {
  out=$1 sp=$2; shift 2
  rm -f "$sp".*
  s=$(date +%s.%N)
  "$@" > /dev/null 2>&1 || { echo "e2e-accuracy.sh: failed: $*" >&2; exit 1; }
  e=$(date +%s.%N)
  python3 - "$s" "$e" "$sp" >> "$out" <<'PY'
import glob, sys
s, e, sp = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
t = [tuple(map(float, open(f).read().split())) for f in glob.glob(sp + ".*")]
span = max(b for a, b in t) - min(a for a, b in t) if len(t) == 2 else float("nan")
print(f"{e - s:.6f} {span:.6f}")
PY
}

# calibrate OUT: the target's platform file, TARGET_CONF's or calibrated
# now.  Each repetition calibrates afresh: one calibration's noise (o_poll
# 0.55 to 0.72 us at full speed in three calibrations within an hour, runs
# S to U) would otherwise set every repetition's HPCC prediction.
calibrate() {
  if [ -n "${TARGET_CONF:-}" ]; then
    cp "$TARGET_CONF" "$1"
  else
    log "calibrating the target (TCP loopback, slowed CPU)"
    (cd "$W" && mpirun -np 2 $TCP sh "$SLOW" "$PHANTOM" calibrate --name target -o "$1")
  fi
  grep -q '^cores_per_node' "$1" || echo "cores_per_node = 2" >> "$1"
}

i=1
while [ "$i" -le "$RUNS" ]; do
  calibrate "$W/target.$i.conf"
  for app in $APPS; do
    D="$W/$app"
    cd "$D"
    set -- $(app_cmd $app)
    export SPAN_OUT="$D/span"
    PRE="-x LD_PRELOAD=$W/libspan.so -x SPAN_OUT"
    log "run $i/$RUNS $app: host bare run"
    timed "$D/host.$i" "$D/span" mpirun $PRE -np 2 "$@"
    timed "$D/host-launch.$i" "$D/span" mpirun $PRE -np 2 "$W/empty"
    log "run $i/$RUNS $app: record, cluster, replay, predict"
    rm -rf "$D/T"
    "$PHANTOM" record --log -o "$D/T" -- mpirun -np 2 "$@" > "$D/record.out" 2>&1
    "$PHANTOM" cluster "$D/T" --ppn 2 > "$D/cluster.out"
    force=--force
    for ranks in $(python3 -c 'import json,sys; print(" ".join(r["ranks"] for r in json.load(open(sys.argv[1]))["runs"]))' "$D/T/groups.json"); do
      "$PHANTOM" replay "$D/T" --ranks "$ranks" --plan "$D/T/groups.json" --name target $force --repeat "$REPEAT" \
        --launcher "mpirun $TCP" -- sh "$SLOW" "$@" > "$D/replay.out.$i" 2>&1
      force=
    done
    "$PHANTOM" predict "$D/T" --platform "$W/target.$i.conf" --ppn 2 --groups "$D/T/groups.json" \
      --comp target --json > "$D/predict.$i.json"
    log "run $i/$RUNS $app: target bare run"
    timed "$D/target.$i" "$D/span" mpirun $TCP $PRE -np 2 sh "$SLOW" "$@"
    timed "$D/target-launch.$i" "$D/span" mpirun $TCP $PRE -np 2 sh "$SLOW" "$W/empty"
    echo "$(cat /proc/loadavg)" > "$D/load.$i"
  done
  i=$((i + 1))
done
cd "$W"
rmdir /sys/fs/cgroup/cpu/phantom-slow/pid-* 2> /dev/null || true

python3 - "$W" "$RUNS" $APPS <<'PY'
import json, statistics as st, sys
W, runs, apps = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def rd(p):
    return [float(x) for x in open(p).read().split()]
def show(v):
    return f"{st.median(v):6.3f} ({min(v):.3f}-{max(v):.3f})"
def pct(a, b):
    return 100 * (a - b) / b
print(f"\nRUNS={runs}; times in seconds, median (min-max); bare = mpirun wall less the launch; span = MPI_Init to MPI_Finalize")
hdr = ("app", "host bare", "target bare (baseline)", "slowdown", "predicted", "error", "paired error",
       "target span", "error vs span", "test waits")
rows, errs, errs_span, worst = [], [], [], []
for app in apps:
    d = f"{W}/{app}"
    R = range(1, runs + 1)
    host = [rd(f"{d}/host.{i}") for i in R]
    hl = [rd(f"{d}/host-launch.{i}")[0] for i in R]
    tgt = [rd(f"{d}/target.{i}") for i in R]
    tl = [rd(f"{d}/target-launch.{i}")[0] for i in R]
    docs = [json.load(open(f"{d}/predict.{i}.json")) for i in R]
    pred = [x["predicted_s"] for x in docs]
    # the share of the ranks' time spent waiting in Tests the recording saw
    # succeed: what the prediction may hold that a polling target would not
    tw = [x["simulator"].get("test_wait_share", 0) * 100 for x in docs]
    hlaunch, tlaunch = st.median(hl), st.median(tl)
    hb = [h[0] - hlaunch for h in host]
    tb = [t[0] - tlaunch for t in tgt]
    ts = [t[1] for t in tgt]
    p, b, s = st.median(pred), st.median(tb), st.median(ts)
    pair = [pct(x, y) for x, y in zip(pred, tb)]
    e, es = pct(p, b), pct(p, s)
    errs.append(abs(e)); errs_span.append(abs(es))
    rows.append((app, show(hb), show(tb), f"{b / st.median(hb):.2f}x", show(pred), f"{e:+.1f}%",
                 f"{st.median(pair):+.1f}% ({min(pair):+.0f}..{max(pair):+.0f})", show(ts), f"{es:+.1f}%",
                 f"{st.median(tw):.1f}%"))
    print(f"{app}: launch host {hlaunch:.3f} s, target {tlaunch:.3f} s; host span {show([h[1] for h in host])}; "
          f"load {' / '.join(open(f'{d}/load.{i}').read().split()[0] for i in R)}")
def conf(i):
    kv = {}
    for l in open(f"{W}/target.{i}.conf"):
        k, _, v = l.split('#')[0].partition('=')
        if v: kv[k.strip()] = v.strip().rstrip('ns%')
    share = float(kv.get('cpu_share', 1))
    share = share / 100 if share > 1 else share
    return f"{share:.3f}/{float(kv.get('o_poll', 0)) * share:.0f}"
print("calibrations, cpu_share/o_poll at full speed (ns):", " ".join(conf(i) for i in range(1, runs + 1)))
print()
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for r in rows:
    print("| " + " | ".join(r) + " |")
print(f"\nmean absolute error: {st.mean(errs):.1f}% against the bare target run "
      f"(worst {max(errs):.1f}%), {st.mean(errs_span):.1f}% against the target span (worst {max(errs_span):.1f}%)")
print("goal (issue 6): mean <= 5%, none above 10%:", "met" if st.mean(errs) <= 5 and max(errs) <= 10 else "MISSED")
PY
echo "(work files in $W)"
