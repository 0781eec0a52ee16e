#!/bin/sh
# Calls phantom does not sequence pass through untouched: one-sided
# communication still works, local queries are counted, the rest is counted
# as unknown, and none of them is an event.  From C, and from Fortran, whose
# bindings call PMPI_* directly: there the recorder's own Fortran names
# count them, CHARACTER arguments and all.
. "$top_srcdir/tests/lib.sh"
for src in unknown.c unknown.f90 unknown08.f90; do
  name=$(echo "$src" | tr . _) # unknown.c and unknown.f90 would share a name
  mv "$(cd "$WORK" && build_prog "$src")" "$WORK/$name"
  prog="$WORK/$name"
  "$PHANTOM" record -o "$WORK/$name.trace" -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/out" 2>&1 \
    || { cat "$WORK/out"; fail "$src under phantom record"; }
  ! grep FAIL "$WORK/out" || fail "$src: the program's own checks failed under the recorder"
  grep -q "rank 0 got 2 from rank 1" "$WORK/out" || fail "$src: MPI_Put did not work under the recorder"
  "$PHANTOM" stats "$WORK/$name.trace" --json > "$WORK/s.json"
  "$PHANTOM" dump "$WORK/$name.trace" --json > "$WORK/d.jsonl"
  python3 - "$WORK/s.json" "$WORK/d.jsonl" "$src" <<'PY' || fail "$src: not counted as made"
import json, sys
s = json.load(open(sys.argv[1]))
src = sys.argv[3]
def die(m): print(f"FAIL: {src}:", m); sys.exit(1)
# (calls, passed through, timed): what the simulation leaves out is timed,
# local calls are not, whether phantom knows them (Comm_rank) or only passes
# them through (Info_set)
want = {"MPI_Comm_rank": (3, False, False), "MPI_Comm_size": (1, False, False),
        "MPI_Win_create": (1, True, True), "MPI_Win_fence": (2, True, True), "MPI_Put": (1, True, True),
        "MPI_Win_free": (1, True, True)}
if src.endswith(".f90"):
    want.update({"MPI_Get_processor_name": (1, False, False), "MPI_Info_create": (1, True, False),
                 "MPI_Info_set": (1, True, False), "MPI_Info_get": (1, True, False),
                 "MPI_Info_free": (1, True, False), "MPI_Win_set_name": (1, True, False),
                 "MPI_Type_set_name": (1, True, False), "MPI_Type_get_name": (1, True, False)})
for rk in s["ranks"]:
    got = {k: (v["calls"], v["unknown"], v["ns"] is not None) for k, v in rk["counted"].items()}
    if got != want:
        die(f"rank {rk['rank']}: counted {got}, the program made {want}")
    if any(v["ns"] is not None and v["ns"] <= 0 for v in rk["counted"].values()):
        die(f"rank {rk['rank']}: a timed call took no time: {rk['counted']}")
ops = [json.loads(l)["op"] for l in open(sys.argv[2]) if '"rank":0' in l and '"op"' in l]
if ops != ["MPI_Init", "MPI_Barrier", "MPI_Finalize"]: die(f"events: {ops}")
PY
done
echo "unknown-calls: counted as made from C, use mpi and use mpi_f08"

# phantom predict: the one-sided calls are not simulated, so it says which,
# in one warning line with the time they took in the recorded run, and
# lists them by function under "untraced"; what is not communication
# (MPI_Info_set, MPI_Win_set_name, ...) is not listed.
# check_untraced TRACE KIND CALLS FUNCTIONS (name:calls,... most made first)
check_untraced() {
  "$PHANTOM" predict "$1" --platform "$top_srcdir/platforms/ib-qdr.conf" --json > "$WORK/p.json" 2> "$WORK/p.err" ||
    fail "$1: predict: $(cat "$WORK/p.err")"
  python3 - "$WORK/p.json" "$2" "$3" "$4" "$WORK/p.err" "$1" <<'PY' || fail "$1: predict's \"untraced\" or warning"
import json, re, sys
doc = json.load(open(sys.argv[1]))
got = doc["untraced"]
fns = [(n, int(c)) for n, c in (f.split(":") for f in sys.argv[4].split(","))]
def die(m): print(f"FAIL: {m}: untraced {got}"); sys.exit(1)
if len(got) != 1 or got[0]["kind"] != sys.argv[2] or got[0]["calls"] != int(sys.argv[3]): die("kind or calls")
k = got[0]
if [(f["name"], f["calls"]) for f in k["functions"]] != fns: die(f"functions, want {fns}")
# every call timed; the kind's time is its functions', its share that of the
# run's time on every rank (2 ranks x the host's measured run time)
if any(not isinstance(f["ns"], int) or f["ns"] <= 0 for f in k["functions"]): die("a function's ns")
if k["ns"] != sum(f["ns"] for f in k["functions"]): die("the kind's ns")
if abs(k["share"] - k["ns"] / (2 * doc["measured_ns"])) > 1e-9 or not 0 < k["share"] < 1: die("share")
named = ", ".join(f"{n} {c}" for n, c in fns[:3]) + (", ..." if len(fns) > 3 else "")
err = open(sys.argv[5]).read().splitlines()
want = (re.escape(f"phantom predict: warning: {sys.argv[6]}: the simulation leaves out {k['calls']} {k['kind']} calls ({named}), which took ")
        + r"[0-9.]+ (us|ms|s)" + re.escape(f" in the recorded run ({100 * k['share']:.1f}% of its ranks' time): their time is part of the ranks' computation, as measured (doc/simmpi.md, section 4)"))
if len(err) != 1 or not re.fullmatch(want, err[0]): print(f"FAIL: warning {err}, want {want}"); sys.exit(1)
PY
}
for src in unknown.c unknown.f90 unknown08.f90; do
  check_untraced "$WORK/$(echo "$src" | tr . _).trace" one-sided 10 \
    MPI_Win_fence:4,MPI_Put:2,MPI_Win_create:2,MPI_Win_free:2
done
echo "unknown-calls: predict names the one-sided calls it leaves out, from C and Fortran"

# The time inside a passed-through call is the call's: under a shim that
# makes PMPI_Win_fence sleep 100 ms first, each rank's two fences took 200 ms
# and less than 300 (the other rank's sleep may end later).
cat > "$WORK/slow_fence.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>
int PMPI_Win_fence(int assert, MPI_Win win)
{
    static int (*real)(int, MPI_Win);
    if (!real)
        real = (int (*)(int, MPI_Win))dlsym(RTLD_NEXT, "PMPI_Win_fence");
    usleep(100000);
    return real(assert, win);
}
C
mpicc -shared -fPIC -o "$WORK/slow_fence.so" "$WORK/slow_fence.c" -ldl || fail "building the slow fence shim"
PHANTOM_PRELOAD_EXTRA="${PHANTOM_PRELOAD_EXTRA:+$PHANTOM_PRELOAD_EXTRA:}$WORK/slow_fence.so" \
  "$PHANTOM" record -o "$WORK/slow.trace" -- mpirun --oversubscribe -np 2 "$WORK/unknown_c" > "$WORK/out" 2>&1 ||
  fail "unknown.c with slow fences: $(cat "$WORK/out")"
"$PHANTOM" stats "$WORK/slow.trace" --json > "$WORK/s.json"
python3 - "$WORK/s.json" <<'PY' || fail "the time inside MPI_Win_fence"
import json, sys
for rk in json.load(open(sys.argv[1]))["ranks"]:
    ns = rk["counted"]["MPI_Win_fence"]["ns"]
    print(f"rank {rk['rank']}: two fences of 100 ms took {ns / 1e6:.1f} ms")
    if not 200e6 <= ns < 300e6: sys.exit(f"FAIL: rank {rk['rank']}: {ns} ns")
    if rk["counted"]["MPI_Comm_rank"]["ns"] is not None: sys.exit("FAIL: a local call timed")
PY
echo "unknown-calls: a passed-through call's time is the time inside it"

# The whole chain: the report says it under the recommendation, as the
# predictions list them.
"$PHANTOM" run -o "$WORK/u.study" --platforms "$top_srcdir/platforms/ib-qdr.conf" --nodes 1 \
  -- mpirun --oversubscribe -np 2 "$WORK/unknown_c" > "$WORK/out" 2>&1 || fail "phantom run: $(cat "$WORK/out")"
python3 - "$WORK/u.study" <<'PY' || fail "the report's warning, or its \"untraced\" is not the predictions'"
import glob, html, json, re, sys
got = json.load(open(sys.argv[1] + "/report.json"))["untraced"]
preds = [json.load(open(f))["untraced"] for f in sorted(glob.glob(sys.argv[1] + "/predict/*.json"))]
if len(preds) != 3 or any(p != got for p in preds) or got[0]["calls"] != 10:
    print(f"FAIL: report {got}, predictions {preds}"); sys.exit(1)
want = (re.escape("Warning: The simulation leaves out calls phantom does not trace: 10 one-sided calls (MPI_Win_fence 4, MPI_Put 2, MPI_Win_create 2, ...), which took ")
        + r"[0-9.]+ (us|ms|s)" + re.escape(f" in the recorded run ({100 * got[0]['share']:.1f}% of its ranks' time). Their time is part of the ranks' computation as replayed, the same on every platform, so the predictions do not see the network's part in it."))
md = [l[2:] for l in open(sys.argv[1] + "/report.md").read().splitlines() if l.startswith("> Warning: The simulation")]
page = [html.unescape(p) for p in re.findall(r'<p class="warn">(Warning: The simulation[^<]*)</p>', open(sys.argv[1] + "/report.html").read())]
for where, lines in (("report.md", md), ("report.html", page)):
    if len(lines) != 1 or not re.fullmatch(want, lines[0]): print(f"FAIL: {where}: {lines}, want {want}"); sys.exit(1)
PY
echo "unknown-calls: the report of phantom run warns of them"

# Replay: one-sided communication is not in the message log, so a rank that
# made a window cannot be replayed without the others: one line naming the
# trace, the rank and the call, before anything is launched.  With every
# rank replayed the Put runs for real, after a warning.
for src in unknown.c unknown08.f90; do
  prog="$WORK/$(echo "$src" | tr . _)"
  "$PHANTOM" record --log -o "$WORK/ul.trace" --force -- mpirun --oversubscribe -np 2 "$prog" > "$WORK/out" 2>&1 \
    || { cat "$WORK/out"; fail "$src under phantom record --log"; }
  for mode in "--ranks 1" "--ranks 0 --isolated" "--ranks 0-1 --isolated"; do
    # shellcheck disable=SC2086 # the options are words
    "$PHANTOM" replay "$WORK/ul.trace" $mode --name r -- "$prog" > "$WORK/rep.out" 2> "$WORK/rep.err" &&
      fail "$src: replay $mode of a trace with a window succeeded"
    want="phantom replay: $WORK/ul.trace: rank [01] used one-sided communication (MPI_Win_create, 1 calls), which phantom does not log: it cannot be replayed apart from the other ranks (doc/replay.md, section 5)"
    [ "$(wc -l < "$WORK/rep.err")" -eq 1 ] && grep -qx "$want" "$WORK/rep.err" ||
      fail "$src: replay $mode: not the one-line refusal: $(cat "$WORK/rep.err")"
    [ ! -s "$WORK/rep.out" ] || fail "$src: replay $mode launched the program: $(cat "$WORK/rep.out")"
  done
  "$PHANTOM" replay "$WORK/ul.trace" --ranks 0-1 --name r -- "$prog" > "$WORK/rep.out" 2> "$WORK/rep.err" ||
    fail "$src: replay of both ranks: $(cat "$WORK/rep.err")"
  grep -q "^phantom replay: warning: .*rank 0 used one-sided communication (MPI_Win_create)" "$WORK/rep.err" ||
    fail "$src: replay of both ranks: no warning: $(cat "$WORK/rep.err")"
  grep -q "rank 0 got 2 from rank 1" "$WORK/rep.out" || fail "$src: replay of both ranks: the Put did not work"
  ! grep FAIL "$WORK/rep.out" || fail "$src: the program's own checks failed in the replay"
done
echo "unknown-calls: replay refuses ranks apart from a window, warns with all of them, from C and Fortran"

# MPI-IO is passed through, counted, and runs for real in a replay.  A rank
# replayed without the others reads back only what this replay wrote, so
# the replay says so, once, naming the rank and the read; with every rank
# replayed it has nothing to say, and the file reads back as recorded.
prog=$(cd "$WORK" && build_prog fileio.c)
"$PHANTOM" record --log -o "$WORK/io.trace" -- mpirun --oversubscribe -np 2 "$prog" "$WORK/io.dat" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "fileio under phantom record --log"; }
for r in 0 1; do
  grep -qx "rank $r read back rank $(((r + 1) % 2))'s block: ok" "$WORK/out" || fail "fileio: rank $r under the recorder: $(cat "$WORK/out")"
done
"$PHANTOM" stats "$WORK/io.trace" --json > "$WORK/s.json"
python3 - "$WORK/s.json" <<'PY' || fail "fileio: MPI-IO not counted as made"
import json, sys
want = {"MPI_Comm_rank": (1, False), "MPI_Comm_size": (1, False), "MPI_File_open": (1, True),
        "MPI_File_write_at_all": (1, True), "MPI_File_sync": (1, True),
        "MPI_File_read_at_all": (1, True), "MPI_File_close": (1, True)}
for rk in json.load(open(sys.argv[1]))["ranks"]:
    got = {k: (v["calls"], v["unknown"]) for k, v in rk["counted"].items()}
    if got != want:
        print(f"FAIL: rank {rk['rank']}: counted {got}, the program made {want}"); sys.exit(1)
PY
check_untraced "$WORK/io.trace" "file I/O" 10 \
  MPI_File_close:2,MPI_File_open:2,MPI_File_read_at_all:2,MPI_File_sync:2,MPI_File_write_at_all:2
rm -f "$WORK/io.dat"
"$PHANTOM" replay "$WORK/io.trace" --ranks 0 --name alone -- "$prog" "$WORK/io.dat" > "$WORK/rep.out" 2> "$WORK/rep.err" ||
  fail "fileio: replay of rank 0: $(cat "$WORK/rep.err")"
want="phantom replay: warning: $WORK/io.trace: rank 0 read files with MPI-IO (MPI_File_read_at_all, 1 calls), which runs for real: what the ranks left out of this replay wrote to files during the run is not in the message log (doc/replay.md, section 5)"
[ "$(grep -c "MPI-IO" "$WORK/rep.err")" -eq 1 ] && grep -qx "$want" "$WORK/rep.err" ||
  fail "fileio: replay of rank 0: not the one warning: $(cat "$WORK/rep.err")"
grep -qx "rank 0 read back rank 1's block: wrong" "$WORK/rep.out" ||
  fail "fileio: replay of rank 0 read back rank 1's block, which nobody wrote: $(cat "$WORK/rep.out")"
"$PHANTOM" replay "$WORK/io.trace" --ranks 0-1 --name both -- "$prog" "$WORK/io.dat" > "$WORK/rep.out" 2> "$WORK/rep.err" ||
  fail "fileio: replay of both ranks: $(cat "$WORK/rep.err")"
! grep -q "MPI-IO" "$WORK/rep.err" || fail "fileio: replay of both ranks warned: $(cat "$WORK/rep.err")"
for r in 0 1; do
  grep -qx "rank $r read back rank $(((r + 1) % 2))'s block: ok" "$WORK/rep.out" || fail "fileio: replay of both ranks, rank $r: $(cat "$WORK/rep.out")"
done
echo "unknown-calls: MPI-IO runs for real in a replay; a rank replayed apart is warned of what it reads"
