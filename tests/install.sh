#!/bin/sh
# make install: an installed phantom finds its own parts with no build tree
# beside it (the recorder and the replayer it preloads in lib/phantom,
# phantom-calibrate in libexec/phantom, the bundled platforms in
# share/phantom) and runs the whole chain from there.  A second build of
# this source tree, configured with --prefix in $WORK, is installed and the
# build removed; nothing of the tested build's is named to it.
. "$top_srcdir/tests/lib.sh"
[ ! -f "$top_srcdir/config.status" ] ||
  skip "the source tree is configured in place: a second build cannot share it (build in a directory of its own)"
unset PHANTOM_PRELOAD PHANTOM_PRELOAD_EXTRA PHANTOM_REPLAY_PRELOAD PHANTOM_CALIBRATE PHANTOM_PLATFORMS
P="$WORK/inst"
mkdir "$WORK/b"
(cd "$WORK/b" && "$top_srcdir/configure" -q --prefix="$P" && make -s -j"$(nproc)" && make -s install) \
  > "$WORK/build.log" 2>&1 || fail "configure, make, make install: $(tail -5 "$WORK/build.log")"
rm -rf "$WORK/b"
for f in bin/phantom lib/phantom/libpmpi-rec.so lib/phantom/libpmpi-replay.so libexec/phantom/phantom-calibrate \
         share/phantom/platforms/ib-qdr.conf share/man/man1/phantom.1 share/man/man1/phantom-predict.1; do
  [ -e "$P/$f" ] || fail "make install left out $f"
done
I="$P/bin/phantom"
prog=$(build_prog stencil.c)

# the chain: record (preloads lib/phantom/libpmpi-rec.so), cluster, record
# --log, replay (libpmpi-replay.so), predict on the installed platforms, report
(cd "$WORK" && "$I" run -o "$WORK/s" --nodes 1,2 --ppn 2 -- mpirun --oversubscribe -np 4 "$prog" 256 40) \
  > "$WORK/run.out" 2>&1 || fail "the installed phantom run: $(tail -5 "$WORK/run.out")"
python3 - "$WORK/s" "$P/share/phantom/platforms" <<'PY' || fail "the installed phantom's study"
import json, os, sys
s, pdir = sys.argv[1:]
d = json.load(open(os.path.join(s, "study.json")))
files = sorted({p["platform_file"] for p in d["predictions"]})
want = sorted(os.path.join(pdir, f) for f in os.listdir(pdir))
assert files == want, (files, want)
assert json.load(open(os.path.join(s, "report.json")))["recommendation"]["nodes"] in (1, 2)
r = json.load(open(os.path.join(s, "log.trace", "replay", "target", "meta.json")))
assert r["replay"]["replays"], r
PY
"$I" predict "$WORK/s/trace" --platform ib-qdr --json > "$WORK/p.json" || fail "predict --platform ib-qdr"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['platform_file'] == sys.argv[2], d['platform_file']" \
  "$WORK/p.json" "$P/share/phantom/platforms/ib-qdr.conf" || fail "--platform ib-qdr is not the installed file"
# calibrate runs libexec/phantom/phantom-calibrate
timeout 120 mpirun --oversubscribe -np 2 "$I" calibrate --check-cpu > "$WORK/cal.out" 2>&1 ||
  fail "the installed phantom calibrate: $(tail -3 "$WORK/cal.out")"
grep -q "^rank 1: ran [0-9.]*% of the time" "$WORK/cal.out" || fail "calibrate --check-cpu said: $(cat "$WORK/cal.out")"
# the man pages read
MANPATH="$P/share/man" man -P cat phantom-predict 2> /dev/null | grep -q "name  *of  *a  *bundled" ||
  [ -z "$(command -v man)" ] || fail "man phantom-predict: not found in $P/share/man"
echo "installed phantom: ok"
