#!/bin/sh
# bigtype.sh - datatypes of more than 2 GiB (tests/progs/bigtype.c), whose
# size MPI_Type_size answers MPI_UNDEFINED: the recorder must write their
# bytes from MPI_Type_size_x (they were 2^64 - 32,766 bytes), the
# replayer compare the calls it makes with the same sizes, and predict
# take them.  Event by event: the Send, Isend and Sendrecv to
# MPI_PROC_NULL carry 3 GiB, 6 GiB and 3 GiB.  And a received message
# larger than the 64 MiB block a reader otherwise holds (80 MiB): its log
# record is a block of its own, byte for byte (found by
# tests/zstd_frames.py, apart from phantom), which the block after it does
# not share, and a rank replayed alone reads it back (readers called the
# frame corrupt, and the recorder went on filling the grown block).
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/replay-lib.sh"
need python3
prog=$(cd "$WORK" && build_prog bigtype.c)
# No timed flushes (PHANTOM_FLUSH_SECS=0): the blocks hold what the
# writer put together, whatever the machine's speed.
export PHANTOM_FLUSH_SECS=0
record big "$prog" 2 --log
unset PHANTOM_FLUSH_SECS
"$PHANTOM" dump "$WORK/big.trace" --json > "$WORK/d.jsonl" 2> "$WORK/d.err" || fail "dump: $(cat "$WORK/d.err")"
python3 - "$WORK/d.jsonl" <<'PY' || fail "the recorded sizes are wrong"
import json, sys
G = 1 << 30
ev = {0: [], 1: []}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "op" in e:
        ev[e["rank"]].append(e)
for rank, es in ev.items():
    got = [(e["op"], e.get("bytes"), e.get("rbytes")) for e in es]
    want = [("MPI_Init", None, None), ("MPI_Send", 3 * G, None), ("MPI_Isend", 6 * G, None),
            ("MPI_Wait", None, None), ("MPI_Sendrecv", 3 * G, 1), ("MPI_Sendrecv", 80 << 20, 80 << 20),
            ("MPI_Sendrecv", 16, 16), ("MPI_Finalize", None, None)]
    if got != want:
        sys.exit(f"rank {rank}: {got}\n want {want}")
print("bigtype: 3 GiB, 6 GiB and 3 GiB recorded on both ranks")
PY
# Each rank's log: the 80 MiB record (event 5 (1 byte), slot 0 (1), length
# (4), data) alone in a block, then the 16-byte one (length: 1) in the
# next, by tests/zstd_frames.py and zstd(1), apart from phantom.  Under
# the sanitizers the blocks may also hold clock reads (slots from
# 0x40000000): the program's thread reads the clock outside MPI calls
# there, as AddressSanitizer's allocator times its returns of memory to
# the system, and the recorder cannot tell those reads from the
# program's.  In one clean-clone CI run (2026-12-05) rank 1's second
# block held 3,178 bytes: the 19 of the receive and 117 clock reads of
# 27.  Without the sanitizers the program reads no clock, and the blocks
# are exactly those two records.
python3 - "$WORK/big.trace" "$top_srcdir/tests" "${PHANTOM_ASAN_RUNTIME:-}" <<'PY' || fail "the log's blocks are wrong"
import sys
trace, tests, sanitized = sys.argv[1:4]
sys.path.insert(0, tests)
import zstd_frames
CLOCKS = 0x40000000  # time(), clock_gettime and MPI_Wtime slots (doc/trace-format.md, section 6)
for rank in (0, 1):
    path = f"{trace}/rank-{rank:06d}.log"
    sizes = [size for _, _, size, _ in zstd_frames.frames(open(path, "rb").read())]
    recs = list(zstd_frames.log_records(path))
    data = [(f, e, s, n) for f, e, s, n in recs if s < CLOCKS]
    clocks = len(recs) - len(data)
    big = data[0][0] if data else 0
    if data != [(big, 5, 0, 80 << 20), (big + 1, 6, 0, 16)] or sizes[big] != 6 + (80 << 20):
        sys.exit(f"rank {rank}: blocks of {sizes} bytes, data records (block, event, slot, bytes) {data}")
    if clocks and not sanitized:
        sys.exit(f"rank {rank}: {clocks} clock reads logged; the program reads no clock")
    if not clocks and sizes != [6 + (80 << 20), 3 + 16]:
        sys.exit(f"rank {rank}: blocks of {sizes} bytes")
    print(f"bigtype: rank {rank}: 80 MiB alone in block {big}, 16 B in block {big + 1}" +
          (f" (and {clocks} clock reads)" if clocks else ""))
PY
replay_same big "$prog" 0 --isolated --name alone
replay_same big "$prog" 0-1 --name both

# What recording with the message log adds to a rank's memory, when the 80
# MiB it receives does not compress (`bigtype noise`): the log's block of
# it, once.  The frame is compressed a buffer of about 64 KiB at a time; it
# was compressed whole into a second buffer of 80 MiB (the recording added
# 134-149 MiB, against 103 MiB for the `bigtype` that compresses).  Peak
# resident sizes, the bare job's first; then rank 1 replayed alone from
# that log must print the recorded checksum.  Not under the sanitizers,
# whose shadow memory has sizes of its own.
if [ -z "${PHANTOM_ASAN_RUNTIME:-}" ]; then
  python3 - "$PHANTOM" "$WORK" "$prog" "$top_srcdir/tests" <<'PY' || fail "the recorder's memory"
import re, resource, subprocess, sys
phantom, work, prog, tests = sys.argv[1:]
sys.path.insert(0, tests)
import zstd_frames
trace = f"{work}/noise.trace"
def peak_kib(cmd):  # the largest of all children so far: the bare job runs first
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, re.findall(r"rank \d+ checksum 0x\w+", out)
bare, _ = peak_kib(["mpirun", "--oversubscribe", "-np", "2", prog, "noise"])
recorded, sums = peak_kib([phantom, "record", "--log", "-o", trace, "--force", "--",
                           "mpirun", "--oversubscribe", "-np", "2", prog, "noise"])
added = (recorded - bare) / 1024
print(f"bigtype noise: peak resident {bare / 1024:.0f} MiB bare, {recorded / 1024:.0f} MiB recorded: {added:.0f} MiB more")
if added > 1.5 * 80: sys.exit(f"FAIL: recording adds {added:.0f} MiB, more than 1.5 x the 80 MiB a rank receives")
frames = [size for _, _, size, _ in zstd_frames.frames(open(f"{trace}/rank-000001.log", "rb").read())]
if 6 + (80 << 20) not in frames: sys.exit(f"FAIL: rank 1's log has no frame of the 80 MiB record: {frames}")
rep = subprocess.run([phantom, "replay", trace, "--ranks", "1", "--isolated", "--force", "--name", "noise",
                      "--", prog, "noise"], capture_output=True, text=True)
got = re.findall(r"rank 1 checksum 0x\w+", rep.stdout)
if rep.returncode or got != [s for s in sums if s.startswith("rank 1 ")]:
    sys.exit(f"FAIL: rank 1 replayed alone from the noise log: exit {rep.returncode}, {got} against {sums}\n{rep.stderr[-2000:]}")
print("bigtype noise: rank 1 replayed alone from it with the recorded checksum")
PY
  rm -rf "$WORK/noise.trace"
fi

# What the replay adds to the program's memory: rank 0 alone holds the 80
# MiB it receives once, as the log's block (it held it three times: the
# block, a copy of the record, and the 80 MiB it sends packed into a scratch
# buffer of 128 MiB).  Peak resident sizes (ru_maxrss of the largest
# process), the bare job's first: at most 1.5 x 80 MiB more, replayed.  Not
# under the sanitizers, whose shadow memory has sizes of its own.
if [ -z "${PHANTOM_ASAN_RUNTIME:-}" ]; then
  python3 - "$PHANTOM" "$WORK/big.trace" "$prog" <<'PY' || fail "the replay's memory"
import resource, subprocess, sys
phantom, trace, prog = sys.argv[1:]
def peak_kib(cmd):  # the largest of all children so far: the bare job runs first
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
bare = peak_kib(["mpirun", "--oversubscribe", "-np", "2", prog])
replayed = peak_kib([phantom, "replay", trace, "--ranks", "0", "--isolated", "--force", "--name", "rss", "--", prog])
added = (replayed - bare) / 1024
print(f"bigtype: peak resident {bare / 1024:.0f} MiB bare, {replayed / 1024:.0f} MiB replayed: {added:.0f} MiB more")
if added > 1.5 * 80: sys.exit(f"FAIL: the replay of rank 0 adds {added:.0f} MiB, more than 1.5 x the 80 MiB it receives")
PY
fi
"$PHANTOM" predict "$WORK/big.trace" --platform "$top_srcdir/platforms/shm-2core-local.conf" --json \
  > "$WORK/p.json" 2> "$WORK/p.err" || fail "predict: $(cat "$WORK/p.err")"
echo "bigtype: replayed alone and together with the recorded checksums; predicted"
