#!/bin/sh
# simmpi-accuracy.sh - predicted against measured, on this machine.
#
#   sh bench/simmpi-accuracy.sh BUILDDIR [WORKDIR]
#
# For each transport (shared memory; TCP loopback): calibrate a platform file
# with phantom calibrate, record LAMMPS (melt, 1000 steps) and HPCC
# (N=1000) at 2 ranks with `phantom record`, predict each trace on the
# calibrated platform, and print the prediction against two measurements:
# the bare run (no recorder: the wall time of the same mpirun command, less
# the launch) and the recorded span (the start-up's CPU time, then
# MPI_Init's return to MPI_Finalize's entry, from the trace; it holds the
# recorder's time inside each call, which the simulation does not have).
#
# The launch is what a prediction leaves out: the wall time of an MPI
# program that only calls MPI_Init and MPI_Finalize, less its own start-up
# (its process's CPU time before MPI_Init), which a prediction holds since
# the trace format's STARTUP record (1.2): that program recorded and
# predicted, each run.  Its start-up, like the application's, includes
# loading the recorder's libraries.
#
# Single runs of these programs scatter by 5-10% here, and HPCC's timing
# loops make a different number of calls every run, so one recording
# against one bare run measures the noise as much as the model.  Each row is
# RUNS recordings (default 3), each predicted, against RUNS bare runs and
# RUNS launches, interleaved so that a drift of the machine meets both
# sides; it prints the medians, each with its spread (min-max), the error
# of the median prediction against the median bare run, and the median (and
# range) of the errors of each recording against the bare run next to it,
# which a slow drift of the machine spares.  CALIBRATE=each calibrates
# before every recording, and predicts it on that platform file: this VM's
# TCP loopback moves between states within minutes (T(1) 4.0 or 5.7 us,
# o_poll 0.49 to 0.62 us), and HPCC's 2 million failed polls a rank make its
# prediction over TCP follow o_poll nearly one for one; the default, once,
# calibrates each transport once (TCP's takes about 40 s).  The goal of
# issue 4 is |error| <= 10%.  Not a test: it times real runs.
set -eu
B=${1:?usage: simmpi-accuracy.sh BUILDDIR [WORKDIR]}
W=${2:-$(mktemp -d /tmp/simmpi-accuracy.XXXXXX)}
S=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_hwloc_base_binding_policy=none
PHANTOM="$B/cli/phantom"
PREDICT="$PHANTOM predict"
melt=$W/melt.orig
sh "$S/tests/melt-input.sh" "$melt" || { echo "simmpi-accuracy.sh: needs lammps-examples (the melt example)" >&2; exit 2; }
sed -e 's/^run[[:space:]].*/run 1000/' -e 's/^thermo[[:space:]].*/thermo 100/' "$melt" > "$W/in.melt"
sed -n '/^HPLinpack benchmark input file/,/^EOF/p' "$S/tests/app-hpcc.sh" | grep -v '^EOF' > "$W/hpccinf.txt"
printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' > "$W/empty.c"
mpicc -o "$W/empty" "$W/empty.c"

RUNS=${RUNS:-3}
CALIBRATE=${CALIBRATE:-once}
case $CALIBRATE in once|each) ;; *) echo "simmpi-accuracy.sh: CALIBRATE is once or each, not $CALIBRATE" >&2; exit 2 ;; esac

# wall time (s) of a command run in $W
wall() {
  s=$(date +%s.%N); (cd "$W" && "$@") > /dev/null 2>&1; e=$(date +%s.%N)
  python3 -c "print($e - $s)"
}

# calibrate TRANSPORT FILE
calibrate() {
  mpirun $mca -np 2 "$PHANTOM" calibrate --name "calibrated-$1" -o "$2"
  echo "cores_per_node = 2" >> "$2"
}

for tr in shm tcp; do
  mca=""; [ $tr = tcp ] && mca="--mca btl tcp,self"
  [ "$CALIBRATE" = each ] || calibrate $tr "$W/$tr.conf"
  for app in lammps hpcc; do
    if [ $app = lammps ]; then
      set -- lmp -in in.melt -log none -screen none
    else
      set -- hpcc
    fi
    : > "$W/$app-$tr.runs"
    i=1
    while [ $i -le "$RUNS" ]; do
      t="$app-$tr-$i.trace"
      conf="$W/$tr.conf"
      if [ "$CALIBRATE" = each ]; then
        conf="$W/$app-$tr-$i.conf"
        calibrate $tr "$conf"
      fi
      rm -rf "$W/$t"
      (cd "$W" && "$PHANTOM" record -o "$t" -- mpirun $mca -np 2 "$@") > /dev/null 2>&1
      $PREDICT "$W/$t" --platform "$conf" --json > "$W/$t.json"
      rm -rf "$W/empty.trace"
      (cd "$W" && "$PHANTOM" record -o empty.trace -- mpirun $mca -np 2 ./empty) > /dev/null 2>&1
      $PREDICT "$W/empty.trace" --platform "$conf" --json > "$W/$t.empty.json"
      echo "$W/$t.json $(wall mpirun $mca -np 2 "$@") $(wall mpirun $mca -np 2 ./empty) $conf $W/$t.empty.json" \
        >> "$W/$app-$tr.runs"
      i=$((i + 1))
    done
    python3 - "$W/$app-$tr.runs" "$app" "$tr" <<'PY'
import json, statistics as st, sys
runs = [l.split() for l in open(sys.argv[1])]
pred = [json.load(open(r[0]))["predicted_ps"] / 1e12 for r in runs]
span = [json.load(open(r[0]))["measured_ns"] / 1e9 for r in runs]
# the empty program's wall time less the start-up its prediction holds
launch = st.median(float(r[2]) - json.load(open(r[4]))["predicted_ps"] / 1e12 for r in runs)
bare = [float(r[1]) - launch for r in runs]
def show(v):
    return f"{st.median(v):6.3f} s ({min(v):.3f}-{max(v):.3f})"
p, b, m = st.median(pred), st.median(bare), st.median(span)
pair = [100 * (x - y) / y for x, y in zip(pred, bare)]
print(f"{sys.argv[2]:7} {sys.argv[3]:4} predicted {show(pred)}  bare run {show(bare)}  error {100 * (p - b) / b:+6.1f}%"
      f"  paired {st.median(pair):+6.1f}% ({min(pair):+.0f}..{max(pair):+.0f})"
      f"  recorded span {show(span)}  error {100 * (p - m) / m:+6.1f}%")
def param(path, key):  # in ns (per byte for G)
    for line in open(path):
        k, _, v = line.split('#')[0].partition('=')
        if k.strip() == key:
            v = v.strip()
            return float(v.rstrip('nsu')) * (1000 if v.endswith('us') else 1)
def spread(key):
    v = [param(c, key) for c in confs]
    return f"{st.median(v):.4g} ({min(v):.4g}-{max(v):.4g})"
confs = sorted(set(r[3] for r in runs))
print(f"{'':12} {len(confs)} calibration{'s' if len(confs) > 1 else ''}: G {spread('G')} ns/B, "
      f"o_poll {spread('o_poll')} ns")
ms = lambda path: json.load(open(path))["startup_ps"] / 1e9
print(f"{'':12} start-up {st.median(ms(r[0]) for r in runs):.1f} ms, the empty program's "
      f"{st.median(ms(r[4]) for r in runs):.1f} ms; launch {1000 * launch:.1f} ms")
PY
  done
done
echo "(work files in $W)"
