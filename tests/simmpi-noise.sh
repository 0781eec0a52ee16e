#!/bin/sh
# SIM-MPI's CPU noise (platform noise_pause, noise_rate, noise_sync) against
# the pattern doc/simmpi.md specifies: rank r's CPU stops for noise_pause
# once in every period P = 1/noise_rate, from k*P + floor(h * (P - pause +
# 1) / 2^64) in period k, h = mix(mix(r + 1) ^ k) with splitmix64's
# finaliser (noise_sync = node: r's node instead of r); work keeps
# its mean rate (work * (P - pause) / P of CPU time, rounded).  The oracle
# below walks the pauses one by one; the simulator skips whole periods.
# Every finish time is checked to the picosecond.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"

cat > "$WORK/noise.py" <<'PY'
import json, sys
M = (1 << 64) - 1
P, LEN = 100_000_000, 20_000_000          # 100 us periods, 20 us pauses (ps)
os_, or_, L, G = 1_000_000, 2_000_000, 5_000_000, 1_000_000   # ps, fs per byte

def mix(x):
    x &= M
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M
    return x ^ (x >> 31)

NODE = sys.argv[4] == "node"   # noise_sync = node, both ranks on node 0

def pause(rank, k):
    who = 0 if NODE else rank
    a = k * P + ((mix(mix(who + 1) ^ k) * (P - LEN + 1)) >> 64)
    return a, a + LEN

def until(rank, t, work):
    c = (work * (P - LEN) + P // 2) // P
    while True:
        a, b = pause(rank, t // P)
        if a <= t < b:
            t = b
            continue
        edge = a if t < a else (t // P + 1) * P
        if c <= edge - t:
            return t + c
        c -= edge - t
        t = edge

# p2p: rank 0 computes comp0, sends K eager bytes; rank 1 receives.
comp0, K = int(sys.argv[2]) * 1000, int(sys.argv[3])
t0 = until(0, 0, comp0)                 # rank 0's computation
t0 = until(0, t0, os_)                  # o_s
arrive = t0 + L + G * (K - 1) // 1000   # the message is in
posted = until(1, 0, 0)                 # rank 1 enters its Recv
t1 = until(1, max(arrive, posted), or_) # wakes (after any pause), o_r
t0 = until(0, t0, 0)                    # MPI_Finalize: no computation
t1 = until(1, t1, 0)
d = json.load(open(sys.argv[1]))
got = [r["finish_ps"] for r in d["ranks"]]
if got != [t0, t1]:
    sys.exit(f"finish {got}, want {[t0, t1]}")
if abs(t0 - (comp0 + os_)) > P:
    sys.exit(f"rank 0: {t0} ps is not within a period of its mean-rate time {comp0 + os_}")
for r in d["ranks"]:
    if r["comp_ps"] + r["overhead_ps"] + r["transfer_ps"] + r["syn_ps"] != r["finish_ps"]:
        sys.exit(f"rank {r['rank']}: the breakdown does not add up to {r['finish_ps']}")
PY

plat "$(printf 'noise_pause = 20us\nnoise_rate = 10000/s')"
# A computation of a few periods, and one of 500: exact, and within a period
# of its mean-rate time.
for comp in 350000 50000000; do
  "$SYNTH" p2p "$WORK/p$comp" --bytes 101 --comp0 $comp
  predict "$WORK/p$comp"
  python3 "$WORK/noise.py" "$WORK/p.json" $comp 101 rank || fail "eager p2p, comp0 $comp ns"
done
# noise_sync = node: the two ranks, on one node, stop together.
plat "$(printf 'noise_pause = 20us\nnoise_rate = 10000/s\nnoise_sync = node')"
predict "$WORK/p350000" --ppn 2
python3 "$WORK/noise.py" "$WORK/p.json" 350000 101 node || fail "eager p2p, noise_sync = node"
plat "$(printf 'noise_pause = 20us\nnoise_rate = 10000/s')"

# Without the noise keys the same trace gives the closed form again.
cp "$WORK/plat.conf" "$WORK/noisy.conf"
plat
predict "$WORK/p50000000"
quiet=$(q "d['ranks'][1]['finish_ps']")
[ "$quiet" = $(( (50000000 + 1000 + 5000 + 100 + 2000) * 1000 )) ] || fail "without noise: $quiet"

# Rendezvous and a stencil under noise: the breakdown adds up, and the
# prediction is the same with 1 and 2 threads and from run to run.
cp "$WORK/noisy.conf" "$WORK/plat.conf"
"$SYNTH" p2p "$WORK/rv" --bytes 100000 --comp1 300000
"$SYNTH" stencil "$WORK/st" --dims 2,2,2 --iters 20 --bytes 4096 --comp 70000
for tr in rv st; do
  predict "$WORK/$tr" --threads 1
  cp "$WORK/p.json" "$WORK/a.json"
  predict "$WORK/$tr" --threads 2
  cmp -s "$WORK/a.json" "$WORK/p.json" || fail "$tr: 1 and 2 threads differ under noise"
  predict "$WORK/$tr" --threads 2
  cmp -s "$WORK/a.json" "$WORK/p.json" || fail "$tr: two runs differ under noise"
  python3 - "$WORK/p.json" <<'PY' || fail "$tr: breakdown"
import json, sys
for r in json.load(open(sys.argv[1]))["ranks"]:
    assert r["comp_ps"] + r["overhead_ps"] + r["transfer_ps"] + r["syn_ps"] == r["finish_ps"], r
PY
done

# Bad values: one line naming the file and the key.
for bad in "noise_pause = 20us" "noise_rate = 50" "noise_pause = 20us|noise_rate = 50000" "noise_rate = many" \
           "noise_sync = core"; do
  plat "$(echo "$bad" | tr '|' '\n')"
  if $PREDICT "$WORK/p350000" --platform "$WORK/plat.conf" > "$WORK/out" 2> "$WORK/err"; then
    fail "accepted '$bad'"
  fi
  [ $(wc -l < "$WORK/err") -eq 1 ] && grep -q "plat.conf.*noise_" "$WORK/err" ||
    fail "'$bad': $(cat "$WORK/err")"
done
exit 0
