#!/bin/sh
# phantom calibrate: two ranks measure the LogGP parameters of this machine's
# shared memory and write a platform file that phantom predict accepts.  The
# values must be physically sensible (positive overheads, a bandwidth between
# 100 MB/s and 1 TB/s, an eager limit in Open MPI's range), and predict must
# take the file as it is.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
"$PHANTOM" calibrate -o "$WORK/x.conf" 2> "$WORK/err" && fail "calibrate outside mpirun must fail"
grep -q "not started by an MPI launcher" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"
mpirun_n 2 "$PHANTOM" calibrate --reps 3 -o "$WORK/here.conf" > "$WORK/out" 2>&1 ||
  { cat "$WORK/out"; fail "phantom calibrate failed"; }
grep -q "^name = here$" "$WORK/here.conf" || fail "platform name: $(head -8 "$WORK/here.conf")"
grep -q "^# Measured by phantom calibrate on .* at 20" "$WORK/here.conf" || fail "no provenance line"
echo "cores_per_node = 2" >> "$WORK/here.conf"
python3 - "$WORK/here.conf" <<'PY'
import re, sys
kv = {}
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if "=" in line:
        k, v = (x.strip() for x in line.split("=", 1))
        kv[k] = v
def ns(v): return float(re.match(r"[0-9.]+", v).group()) * (1000 if v.endswith("us") else 1)
def die(m): print("FAIL:", m); sys.exit(1)
for k in ("o_s", "o_r", "o_poll", "o_iprobe"):
    if not 0 < ns(kv[k]) < 100000: die(f"{k} = {kv[k]}")
# o' comes from the jump at the eager limit less 2L, which noise can hide
# on a loaded machine: 0 is then what calibrate writes (and says why)
for k in ("L", "o_prime"):
    if not 0 <= ns(kv[k]) < 100000: die(f"{k} = {kv[k]}")
g = float(kv["G"])
if not 0.001 <= g <= 10: die(f"G = {g} ns/byte")
if not 256 <= int(kv["eager_limit"]) <= (1 << 20): die(f"eager_limit = {kv['eager_limit']}")
print("calibrated:", {k: kv[k] for k in ("o_s", "o_r", "L", "G", "eager_limit")})
PY
[ $? -eq 0 ] || fail "implausible calibration"
# The calibrated file drives the simulator as it is.
"$SYNTH" p2p "$WORK/p2p.trace" --bytes 64 > /dev/null || fail "simmpi/synth p2p"
$PREDICT "$WORK/p2p.trace" --platform "$WORK/here.conf" > "$WORK/p.txt" ||
  fail "phantom predict rejected the calibrated platform"
grep -q "predicted run time" "$WORK/p.txt" || fail "no prediction: $(cat "$WORK/p.txt")"
echo "simmpi-calibrate: ok"
