# tests/report-lib.sh - builds a small study by hand with the real verbs, as
# `phantom run` would (doc/study-format.md), for tests/report.sh.  Sourced
# after tests/lib.sh.
#
# make_study DIR: tests/progs/stencil.c recorded at 4 ranks with its message
# log, clustered with --ppn 2, the plan's runs replayed under the name
# target, predicted with --json on ib-qdr, 10gbe-cloud and cheap-slow (in
# $WORK/platforms, so that a test may touch them) at 1, 2 and 4 nodes, each
# also with computation and with the network twice as fast; then study.json.
# cheap-slow is 10gbe-cloud with a slower network (L = 500 us), 2 cores per
# node (so 1 node is skipped) and a low price ($0.05): the cheapest choice,
# but not within 10% of the fastest.  The stencil's critical path holds
# about 150-200 latencies, so cheap-slow adds some 0.09 s to a computation
# of 0.02 s (a quiet host) to 0.1 s (a busy one): it stays over 1.1 times
# the fastest, and at a thirtieth of 10gbe-cloud's price per node-hour, the
# cheapest.
# The trace doubles as the log (study.json's "log" is "trace").

STENCIL_ARGS="512 200"

make_study() {
  S=$1
  prog=$(build_prog stencil.c)
  mkdir -p "$S/predict" "$WORK/platforms"
  cp "$top_srcdir/platforms/ib-qdr.conf" "$top_srcdir/platforms/10gbe-cloud.conf" "$WORK/platforms/"
  sed -e 's/^name = .*/name = cheap-slow/' -e 's/^cores_per_node = .*/cores_per_node = 2/' \
      -e 's/^price_per_node_hour = .*/price_per_node_hour = 0.05/' -e 's/^L = .*/L = 500us/' \
      -e 's/^calibrated = .*/calibrated = 2026-11-01, a made-up platform for tests/' \
      "$top_srcdir/platforms/10gbe-cloud.conf" > "$WORK/platforms/cheap-slow.conf"
  echo "cpu_share = 50%    # calibrated on a throttled node: the report must say so" >> "$WORK/platforms/cheap-slow.conf"
  # shellcheck disable=SC2086
  (cd "$S" && timeout 120 "$PHANTOM" record --log -o trace -- mpirun --oversubscribe -np 4 "$prog" $STENCIL_ARGS \
     > record.out 2>&1) || fail "record failed: $(tail -3 "$S/record.out")"
  "$PHANTOM" cluster "$S/trace" --ppn 2 > "$S/cluster.out" 2>&1 || fail "cluster failed: $(tail -3 "$S/cluster.out")"
  runs=$(python3 -c 'import json,sys; print(" ".join(r["ranks"] for r in json.load(open(sys.argv[1]))["runs"]))' \
           "$S/trace/groups.json")
  for r in $runs; do
    # shellcheck disable=SC2086
    timeout 120 "$PHANTOM" replay "$S/trace" --ranks "$r" --plan "$S/trace/groups.json" --name target -- \
      "$prog" $STENCIL_ARGS > "$S/replay.out" 2>&1 || fail "replay of ranks $r failed: $(tail -3 "$S/replay.out")"
  done
  for pf in ib-qdr 10gbe-cloud cheap-slow; do
    for n in 1 2 4; do
      [ "$pf/$n" != cheap-slow/1 ] || continue # 4 ranks on a node of 2 cores
      for wi in base comp0.5 net0.5; do
        predict_one "$S" "$pf" "$n" "$wi"
      done
    done
  done
  write_study_json "$S"
}

# predict_one STUDY PLATFORM NODES base|comp0.5|net0.5
predict_one() {
  ppn=$((4 / $3))
  case "$4" in
    base) opt="" suffix="" ;;
    comp0.5) opt="--what-if comp=0.5" suffix="-comp0.5" ;;
    net0.5) opt="--what-if net=0.5" suffix="-net0.5" ;;
  esac
  out="$1/predict/$2-$3n$suffix.json"
  # shellcheck disable=SC2086
  "$PHANTOM" predict "$1/trace" --platform "$WORK/platforms/$2.conf" --ppn "$ppn" --comp target \
    --groups "$1/trace/groups.json" $opt --json --no-progress > "$out" 2> "$out.err" ||
    fail "predict $2 at $3 nodes ($4) failed: $(cat "$out.err")"
  rm -f "$out.err"
}

write_study_json() {
  python3 - "$1" "$WORK/platforms" "$(hostname)" "$prog" "$STENCIL_ARGS" <<'EOF'
import json, os, sys
study, pdir, host, prog, args = sys.argv[1:]
preds = []
for pf in ("ib-qdr", "10gbe-cloud", "cheap-slow"):
    for n in (1, 2, 4):
        if pf == "cheap-slow" and n == 1:
            continue
        for comp, net, suffix in ((1.0, 1.0, ""), (0.5, 1.0, "-comp0.5"), (1.0, 0.5, "-net0.5")):
            preds.append({"platform": pf, "platform_file": os.path.join(pdir, pf + ".conf"),
                          "nodes": n, "ppn": 4 // n, "what_if": {"comp": comp, "net": net},
                          "file": "predict/%s-%dn%s.json" % (pf, n, suffix)})
command = ["mpirun", "--oversubscribe", "-np", "4", prog] + args.split()
doc = {"format": "phantom-study", "version": "1.0", "command": command,
       "launcher": ["mpirun", "--oversubscribe"], "program": [prog] + args.split(), "ranks": 4,
       "host": host, "ppn": 2, "cluster": {"k": None, "threshold": "5%"}, "replay_name": "target",
       "trace": "trace", "plan": "trace/groups.json", "log": "trace", "replay": "trace/replay/target",
       "predictions": preds,
       "skipped": [{"platform": "cheap-slow", "nodes": 1, "reason": "4 ranks need 4 cores per node; cheap-slow has 2"}]}
json.dump(doc, open(os.path.join(study, "study.json"), "w"), indent=2)
EOF
}
