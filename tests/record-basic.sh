#!/bin/sh
# The bundled example (tests/progs/stencil.c) at 4 ranks, checked against
# closed forms: event counts per rank, peers, bytes, statuses, call sites that
# agree across ranks despite ASLR, and the stats totals.
. "$top_srcdir/tests/lib.sh"
prog=$(cd "$WORK" && build_prog stencil.c)
N=64 IT=25
"$PHANTOM" record -o "$WORK/s.trace" -- mpirun --oversubscribe -np 4 "$prog" $N $IT > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "stencil under phantom record"; }
grep -q "stencil: 64 x 64 grid, 4 ranks, 25 iterations" "$WORK/out" || fail "stencil output changed"
"$PHANTOM" dump "$WORK/s.trace" --json > "$WORK/d.jsonl"
"$PHANTOM" stats "$WORK/s.trace" --json > "$WORK/stats.json"
"$PHANTOM" predict "$WORK/s.trace" --platform "$top_srcdir/platforms/ib-qdr.conf" --top 100 --json \
  > "$WORK/predict.json" 2> "$WORK/predict.err" || fail "phantom predict: $(cat "$WORK/predict.err")"
[ ! -s "$WORK/predict.err" ] || fail "phantom predict warned: $(cat "$WORK/predict.err")"
python3 - "$WORK/d.jsonl" "$WORK/stats.json" "$WORK/s.trace/meta.json" $N $IT "$WORK/predict.json" <<'PY'
import json, sys
dump, stats, meta, N, IT = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
predict = json.load(open(sys.argv[6]))
ev = [json.loads(l) for l in open(dump) if '"op"' in l]
def die(msg): print("FAIL:", msg); sys.exit(1)
nallreduce = len([it for it in range(IT) if it % 10 == 9 or it == IT - 1])
expected_ops = ["MPI_Init"] + (["MPI_Irecv"] * 2 + ["MPI_Isend"] * 2 + ["MPI_Waitall"]) * IT + ["MPI_Finalize"]
sites = {}
for r in range(4):
    mine = [e for e in ev if e["rank"] == r]
    ops = [e["op"] for e in mine if e["op"] != "MPI_Allreduce"]
    if ops != expected_ops: die(f"rank {r}: op sequence differs: {ops[:8]}...")
    if sum(e["op"] == "MPI_Allreduce" for e in mine) != nallreduce: die(f"rank {r}: allreduce count")
    if [e["seq"] for e in mine] != list(range(len(mine))): die(f"rank {r}: seq not 0..n-1")
    up = r - 1 if r > 0 else -2
    down = r + 1 if r < 3 else -2
    for e in mine:
        if e["op"] == "MPI_Isend" and e["peer"] not in (up, down): die(f"rank {r}: isend peer {e['peer']}")
        if e["op"] in ("MPI_Isend", "MPI_Irecv") and (e["bytes"] != 8 * N or e["count"] != N): die(f"rank {r}: bytes {e}")
        if e["op"] == "MPI_Waitall":
            st = e["statuses"]
            if len(st) != 4 or st[2] is not None or st[3] is not None: die(f"rank {r}: send statuses {st}")
            for s, peer in ((st[0], up), (st[1], down)):
                want = (-2, 0) if peer == -2 else (peer, 8 * N)
                if (s["source"], s["bytes"]) != want: die(f"rank {r}: recv status {s}, want {want}")
        sites.setdefault(e["op"], set()).add(e["site"])
    for a, b in zip(mine, mine[1:]):
        if b["t_entry"] < a["t_exit"]: die(f"rank {r}: time goes back at seq {b['seq']}")
# The recorder's set-up (a 2 ms clock calibration, its files, libunwind's
# first walk) is timed as MPI_Init's, not as the first computation unit: the
# stencil does next to nothing between MPI_Init and its first Irecv.
def at(r, seq): return next(e for e in ev if e["rank"] == r and e["seq"] == seq)
units = [at(r, 1)["t_entry"] - at(r, 0)["t_exit"] for r in range(4)]  # ns
if min(units) >= 2000000:
    die(f"first computation units {units} ns: the recorder's set-up is counted in them")
# One call site per source line, the same id on every rank (ASLR-proof).
if len(sites["MPI_Waitall"]) != 1 or len(sites["MPI_Irecv"]) != 2 or len(sites["MPI_Isend"]) != 2:
    die(f"call sites per op: { {k: sorted(v) for k, v in sites.items()} }")
m = json.load(open(meta))
site = m["sites"][next(iter(sites["MPI_Waitall"]))]
if site.get("function") != "main" or not str(site.get("file", "")).endswith("stencil.c"):
    die(f"Waitall call site not resolved to main in stencil.c: {site}")
s = json.load(open(stats))
for rk in s["ranks"]:
    r = rk["rank"]
    nb = (r > 0) + (r < 3)
    sent = rk["ops"]["MPI_Isend"]["bytes_sent"]
    if sent != nb * IT * 8 * N: die(f"rank {r}: stats bytes_sent {sent} != {nb * IT * 8 * N}")
    if not rk["complete"]: die(f"rank {r}: stream not complete")
# Each site's MPI call, in stats and in predict, is the one its events made
# (one source line, one call); stats lists every site, predict those with calls.
op_at = {}
for e in ev:
    op_at.setdefault(e["site"], set()).add(e["op"])
if any(len(v) != 1 for v in op_at.values()): die(f"a site with several calls: {op_at}")
# stencil.c makes only calls phantom traces or counts as local
if predict["untraced"] != []: die(f"predict: untraced {predict['untraced']}")
for tool, listed in (("stats", s["sites"]), ("predict", predict["sites"])):
    got = {x["id"]: x["call"] for x in listed}
    want = {k: next(iter(v)) for k, v in op_at.items() if k in got}
    if got != want or (tool == "stats" and set(got) != set(op_at)):
        die(f"{tool}: MPI call per site {got}, want {want}")
    for x in listed:
        if x["where"] != next(y["where"] for y in s["sites"] if y["id"] == x["id"]):
            die(f"{tool}: site {x['id']} is at {x['where']!r}, stats says otherwise")
print("record-basic: ok")
PY

# A call in a Fortran module procedure: gfortran's symbol is
# __halo_MOD_exchange, the site reads halo::exchange as the source does;
# one in an internal procedure reads its own name (libdw's scope lookup
# misses it: finish walks the host's DIE).
fprog=$(cd "$WORK" && build_prog fmodule.f90)
"$PHANTOM" record -o "$WORK/f.trace" -- mpirun --oversubscribe -np 3 "$fprog" > "$WORK/out" 2>&1 \
  || { cat "$WORK/out"; fail "fmodule under phantom record"; }
"$PHANTOM" stats "$WORK/f.trace" --json > "$WORK/fstats.json" || fail "phantom stats fmodule"
"$PHANTOM" predict "$WORK/f.trace" --platform "$top_srcdir/platforms/ib-qdr.conf" > "$WORK/fpredict.txt" ||
  fail "phantom predict fmodule"
nm "$fprog" | grep -q ' t sync_all\.[0-9]*$' ||
  fail "gfortran did not make sync_all a local symbol of its own: the check below cannot fail"
xline=$(grep -n 'call MPI_Sendrecv_replace' "$top_srcdir/tests/progs/fmodule.f90" | cut -d: -f1)
bline=$(grep -n 'call MPI_Barrier' "$top_srcdir/tests/progs/fmodule.f90" | cut -d: -f1)
clines=$(grep -n 'call sync_all(' "$top_srcdir/tests/progs/fmodule.f90" | cut -d: -f1 | tr '\n' ' ')
python3 - "$WORK/fstats.json" "$xline" "$bline" $clines <<'PY' || fail "the Fortran procedures' call sites"
import json, sys
xline, bline, clines = sys.argv[2], sys.argv[3], sys.argv[4:]
s = [x for x in json.load(open(sys.argv[1]))["sites"] if x["call"] == "MPI_Sendrecv_replace"]
if len(s) != 1 or s[0]["function"] != "__halo_MOD_exchange" or s[0]["where"] != f"halo::exchange fmodule.f90:{xline}":
    sys.exit(f"Sendrecv_replace sites: {s}")
# the internal procedure (two sites: called from two places), whose symbol is
# sync_all.N and whose DWARF name is sync_all; each site's label names the
# line it was called from, the one thing that tells the two apart
b = [x for x in json.load(open(sys.argv[1]))["sites"] if x["call"] == "MPI_Barrier"]
if len(b) != 2 or len(clines) != 2 or any(x["function"] != "sync_all" for x in b):
    sys.exit(f"Barrier sites: {b}")
# MPI_Init and MPI_Finalize of a main program: gfortran gives both calls the
# program statement's line (doc/recorder.md), so their labels add the address
i, f = ([x for x in json.load(open(sys.argv[1]))["sites"] if x["call"] == c] for c in ("MPI_Init", "MPI_Finalize"))
if len(i) != 1 or len(f) != 1 or i[0]["line"] != f[0]["line"] or i[0]["where"] == f[0]["where"] or \
   not all(x["where"].startswith(f"{x['function']} fmodule.f90:{x['line']} (fmodule+0x") for x in i + f):
    sys.exit(f"MPI_Init and MPI_Finalize sites: {i} {f}")
b.sort(key=lambda x: x["caller"]["line"])
for x, cline in zip(b, clines):
    c = x["caller"]
    if not c["file"].endswith("fmodule.f90") or str(c["line"]) != cline or \
       x["where"] != f"sync_all fmodule.f90:{bline} from {c['function']} fmodule.f90:{cline}":
        sys.exit(f"Barrier site called from line {cline}: {x}")
PY
grep -Eq " MPI_Sendrecv_replace +halo::exchange fmodule.f90:$xline$" "$WORK/fpredict.txt" ||
  fail "predict's site table: $(grep Sendrecv_replace "$WORK/fpredict.txt")"

# Recording over a trace: refused in one line without --force; with it the
# old trace goes, and with it what phantom cluster and phantom replay made
# from it (groups.json, replay/), which would pass for the new one's.  A
# file of the user's stays.
"$PHANTOM" cluster "$WORK/s.trace" > /dev/null || fail "phantom cluster"
[ -f "$WORK/s.trace/groups.json" ] || fail "phantom cluster wrote no groups.json"
mkdir -p "$WORK/s.trace/replay/r" && echo old > "$WORK/s.trace/replay/r/meta.json"
echo mine > "$WORK/s.trace/notes.txt"
"$PHANTOM" record -o "$WORK/s.trace" -- mpirun --oversubscribe -np 2 "$prog" 16 2 > "$WORK/out" 2> "$WORK/err" &&
  fail "record over an existing trace without --force succeeded"
[ "$(cat "$WORK/err")" = "phantom record: $WORK/s.trace: already exists (use --force to overwrite)" ] ||
  fail "record over an existing trace: $(cat "$WORK/err")"
"$PHANTOM" record --force -o "$WORK/s.trace" -- mpirun --oversubscribe -np 2 "$prog" 16 2 > "$WORK/out" 2>&1 ||
  fail "record --force: $(cat "$WORK/out")"
[ ! -e "$WORK/s.trace/groups.json" ] && [ ! -e "$WORK/s.trace/replay" ] ||
  fail "record --force kept the old trace's groups or replays: $(ls "$WORK/s.trace")"
[ "$(cat "$WORK/s.trace/notes.txt")" = mine ] || fail "record --force removed a file of the user's"
[ "$(ls "$WORK/s.trace" | grep -c '^rank-.*\.evt$')" -eq 2 ] || fail "record --force: not a 2-rank trace: $(ls "$WORK/s.trace")"
echo "record-basic: --force replaces the trace and what was made from it"

# The summary's command can be pasted into a shell, whatever the path holds.
dir="$WORK/my run's \$HOME.trace"
"$PHANTOM" record -o "$dir" -- mpirun --oversubscribe -np 2 "$prog" 16 2 > "$WORK/out" 2> "$WORK/err" ||
  fail "record into a path with blanks and quotes: $(cat "$WORK/err")"
cmd=$(sed -n 's/^phantom record: trace in .*; run `\(phantom stats .*\)`$/\1/p' "$WORK/err")
[ "$cmd" = "phantom stats '$WORK/my run'\\''s \$HOME.trace'" ] || fail "the summary says to run: $cmd"
(PATH="$(dirname "$PHANTOM"):$PATH" && eval "$cmd") > "$WORK/stats" 2>&1 || fail "$cmd: $(cat "$WORK/stats")"
grep -q "rank" "$WORK/stats" || fail "$cmd printed: $(cat "$WORK/stats")"
echo "record-basic: the summary quotes a path with blanks and quotes for the shell"
