#!/bin/sh
# A process's start-up, recorded and predicted: tests/progs/startup.c spins
# (r + 1) x 150 ms of its thread's CPU before MPI_Init on world rank r.  The
# recorder's STARTUP record (doc/trace-format.md) must hold that: the spin
# reads the clock the recorder reads, loading included, so the record is
# the spin's end plus the instructions up to MPI_Init (under 150 ms more,
# under load); the two ranks' records must differ by 150 ms, to 20 ms;
# phantom stats gives them apart from the computation.  phantom predict
# puts each start-up before the rank's MPI_Init, as computation: rank 0
# then waits in the Barrier for rank 1's longer one, and nobody finishes
# before it.
. "$top_srcdir/tests/lib.sh"
need mpirun
prog=$(cd "$WORK" && build_prog startup.c)
"$PHANTOM" record -o "$WORK/s.trace" -- mpirun --oversubscribe -np 2 "$prog" 150 > "$WORK/out" 2>&1 ||
  { cat "$WORK/out"; fail "startup.c under phantom record"; }
"$PHANTOM" dump "$WORK/s.trace" --json > "$WORK/s.jsonl" || fail "phantom dump"
python3 - "$WORK/s.jsonl" <<'PY' || fail "the start-up, recorded"
import json, sys
first = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e and e["rank"] not in first:
        first[e["rank"]] = e
s = [first[r].get("startup_ns", 0) for r in (0, 1)]
print(f"startup: recorded {s[0] / 1e6:.1f} and {s[1] / 1e6:.1f} ms of start-up")
for r in (0, 1):
    assert first[r]["op"] == "MPI_Init", first[r]
    assert (r + 1) * 150e6 <= s[r] < (r + 1) * 150e6 + 150e6, f"rank {r}: {s[r]} ns"
assert abs(s[1] - s[0] - 150e6) < 20e6, f"ranks differ by {(s[1] - s[0]) / 1e6} ms"
PY
"$PHANTOM" dump "$WORK/s.trace" | grep -Eq "^1 0 [0-9.]+ [0-9.]+ MPI_Init startup=[0-9]+\.[0-9]{3} site=" ||
  fail "dump's MPI_Init line has no startup=: $("$PHANTOM" dump "$WORK/s.trace" | head -1)"
"$PHANTOM" stats "$WORK/s.trace" --json > "$WORK/st.json" || fail "phantom stats"
python3 - "$WORK/s.jsonl" "$WORK/st.json" <<'PY' || fail "phantom stats: the start-up"
import json, sys
first = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e and e["rank"] not in first:
        first[e["rank"]] = e.get("startup_ns", 0)
st = json.load(open(sys.argv[2]))
assert [r["startup_ns"] for r in st["ranks"]] == [first[0], first[1]], st["ranks"]
assert st["totals"]["startup_ns"] == first[0] + first[1], st["totals"]
PY
# ... and its table the longest, rank 1's, under the header
"$PHANTOM" stats "$WORK/s.trace" > "$WORK/st.txt" || fail "phantom stats"
python3 - "$WORK/st.json" "$WORK/st.txt" <<'PY' || fail "phantom stats: the start-up line"
import json, re, sys
s = json.load(open(sys.argv[1]))["ranks"][1]["startup_ns"]
m = re.search(r"^start-up: the process's CPU time before MPI_Init, up to ([0-9.]+) ms \(rank 1\), not in comp$",
              open(sys.argv[2]).read(), re.M)
assert m and m.group(1) == f"{s / 1e6:.3f}", (m and m.group(0), s)
PY
"$PHANTOM" predict "$WORK/s.trace" --platform "$top_srcdir/platforms/shm-2core-local.conf" --ppn 2 --json \
  > "$WORK/p.json" || fail "phantom predict"
python3 - "$WORK/st.json" "$WORK/p.json" <<'PY' || fail "phantom predict: the start-up"
import json, sys
s = [r["startup_ns"] for r in json.load(open(sys.argv[1]))["ranks"]]
p = json.load(open(sys.argv[2]))
rk = p["ranks"]
assert [x["startup_ps"] for x in rk] == [1000 * v for v in s], rk
assert p["startup_ps"] == 1000 * max(s), p["startup_ps"]
assert p["predicted_ps"] >= 1000 * s[1] and all(x["comp_ps"] >= x["startup_ps"] for x in rk), p
# rank 0 waits in the Barrier for rank 1, whose start-up is longer
wait = rk[0]["syn_ps"] + rk[0]["transfer_ps"]
assert abs(wait - 1000 * (s[1] - s[0])) < 1000 * 1e6, f"rank 0 waits {wait} ps"
print(f"startup: predicted {p['predicted_s']:.3f} s; rank 0 waits {wait / 1e9:.1f} ms in the Barrier")
PY
