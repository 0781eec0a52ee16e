#!/bin/sh
# app-hpcc.sh - the HPC Challenge suite (Debian `hpcc`) under `phantom record --log`
# at 2 ranks (N=1000, NB=80, P=1, Q=2):
#   - the recorded run exits 0 like the bare one;
#   - every deterministic correctness result is unchanged: HPL's scaled
#     residual and norms, PTRANS and RandomAccess checks, FFT errors, STREAM
#     validation (timings, rates and the time-seeded DGEMM residual are not
#     compared);
#   - the recorder warns about nothing;
#   - the point-to-point messages and bytes in the trace, per (rank, peer),
#     equal Open MPI's own count (pml monitoring) of the same execution.
#     HPCC sizes some of its loops from measured times, so only the same
#     execution can be compared.
# The message log of this run is about 1.6 GB (HPCC moves 830 MB each way).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
need mpirun
need python3
command -v hpcc >/dev/null 2>&1 || skip "hpcc is not installed (apt-get install hpcc)"
ompi_info --param pml monitoring --level 9 2>/dev/null | grep -q pml_monitoring_enable ||
  skip "Open MPI's pml monitoring component is missing"

mkdir "$WORK/bare" "$WORK/rec"
cat > "$WORK/bare/hpccinf.txt" <<'EOF'
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
1000         Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
EOF
cp "$WORK/bare/hpccinf.txt" "$WORK/rec/"

# The lines that show correctness and do not depend on timing.  PTRANS
# prints one WALL/CPU line per repetition, and how many it repeats depends on
# timing: those lines are left out; its residual is kept.
results() {
  grep -E 'PASSED|passed|Found .* errors|Validates|max\(\|x-x0\|\)|^(Success|CommWorldProcs|HPL_(N|NB|nprow|npcol|RnormI|Anorm1|AnormI|Xnorm1|XnormI|BnormI)|PTRANS_(residual|n)|MPIRandomAccess(_LCG)?_(N|Errors|ErrorsFraction|ExeUpdates)|MPIFFT_(N|maxErr))=' "$1" |
    grep -vE '^(WALL|CPU) '
}

(cd "$WORK/bare" && mpirun_n 2 hpcc > out 2> err) || fail "bare hpcc run failed: $(tail -5 "$WORK/bare/err")"
[ -s "$WORK/bare/hpccoutf.txt" ] || fail "bare hpcc run wrote no hpccoutf.txt"
results "$WORK/bare/hpccoutf.txt" > "$WORK/bare/results"
grep -q '^Success=1$' "$WORK/bare/results" || fail "bare hpcc run did not succeed: $(cat "$WORK/bare/results")"
grep -q 'PASSED$' "$WORK/bare/results" || fail "bare hpcc run: no HPL residual check"
[ "$(wc -l < "$WORK/bare/results")" -ge 30 ] || fail "bare hpcc run: too few result lines: $(cat "$WORK/bare/results")"

record_monitored 600 hpcc
results "$WORK/rec/hpccoutf.txt" > "$WORK/rec/results"
diff "$WORK/bare/results" "$WORK/rec/results" > "$WORK/results.diff" ||
  fail "hpcc results changed under phantom record: $(cat "$WORK/results.diff")"
check_recorded_trace
# The dump has about 5 million events; only the sends matter to the count.
{ "$PHANTOM" dump "$WORK/trace" --json 2> "$WORK/dump.err"; echo $? > "$WORK/dump.rc"; } |
  grep -E '"op": *"MPI_[A-Za-z]*([Ss]end|Start)' > "$WORK/sends.jsonl" || true
[ "$(cat "$WORK/dump.rc")" = 0 ] || fail "phantom dump --json failed: $(cat "$WORK/dump.err")"
python3 "$top_srcdir/tests/count_p2p.py" "$WORK/sends.jsonl" "$WORK/mon" 2 > "$WORK/count" ||
  fail "point-to-point counts differ from Open MPI's: $(cat "$WORK/count")"
cat "$WORK/count"
echo "ok: hpcc, 2 ranks: $(wc -l < "$WORK/rec/results") result lines unchanged"
