#!/bin/sh
# phantom export --format simgrid: synthetic traces (simmpi/synth, exact
# computation gaps) written as SimGrid time-independent traces, checked action
# by action against what each kind does: peers, tags (renumbered per
# channel), sizes, flops for the known gaps (1 Gflop/s: flops = ns), waits,
# collectives (native on MPI_COMM_WORLD, decomposed on sub-communicators and
# for Scan), the approximations reported on stderr, the platform XML and the
# hostfile; bad input.  Then, where smpirun is installed (libsimgrid-dev),
# SimGrid replays exports and its simulated times are checked: the p2p trace
# to 1% of the LogGP end-to-end time, a stencil at least its computation.
# Platform of tests/simmpi-lib.sh: o_s=1000 o_r=2000 L=5000 ns, G=1 ns/B,
# eager 1024, o_poll 100 ns, 1 core per node.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
plat
W=$(cd "$WORK" && pwd -P)
T2=134217728 # 1 << 27: the second message on a channel

# ex NAME [options]: export $W/NAME to $W/NAME.tit; stdout and stderr kept.
ex() {
  n=$1; shift
  $PHANTOM export "$W/$n" --format simgrid -o "$W/$n.tit" "$@" > "$W/$n.out" 2> "$W/$n.err" ||
    fail "export $n: $(cat "$W/$n.err")"
}
# acts NAME RANK <<EOF: the rank's actions (comments left out) are exactly these lines.
acts() {
  grep -v '^#' "$W/$1.tit.d/rank-$2.txt" > "$W/got" || true
  cat > "$W/want"
  diff -u "$W/want" "$W/got" > "$W/diff" || { cat "$W/diff" >&2; fail "$1 rank $2: actions differ (above)"; }
}
# quiet NAME: nothing was approximated.  approx NAME N WHAT: this line on stderr.
quiet() { [ ! -s "$W/$1.err" ] || fail "$1: unexpected stderr: $(cat "$W/$1.err")"; }
approx() {
  grep -q "^phantom export: approximated: $2 calls\{0,1\}: $3" "$W/$1.err" ||
    fail "$1: no '$2 calls: $3' on stderr: $(cat "$W/$1.err")"
}

# ---- point to point ----------------------------------------------------------------------------
"$SYNTH" p2p "$W/p2p" --bytes 1000 --comp0 5000 --comp1 100
ex p2p --platform "$W/plat.conf"
acts p2p 0 <<EOF
0 init
0 compute 5000
0 send 1 7 1000
0 finalize
EOF
acts p2p 1 <<EOF
1 init
1 compute 100
1 recv 0 7 1000
1 finalize
EOF
quiet p2p
printf '%s\n' "$W/p2p.tit.d/rank-0.txt" "$W/p2p.tit.d/rank-1.txt" | cmp -s - "$W/p2p.tit" ||
  fail "index file: $(cat "$W/p2p.tit")"
grep -qx "replay it with: smpirun -np 2 -platform $W/p2p.tit.xml -hostfile $W/p2p.tit.hosts -replay $W/p2p.tit" \
  "$W/p2p.out" || fail "no smpirun command: $(cat "$W/p2p.out")"
grep -q "^wrote $W/p2p.tit: 2 ranks, 8 actions" "$W/p2p.out" || fail "summary: $(cat "$W/p2p.out")"

# A ring twice around: the second message on each channel gets 1 << 27 added.
"$SYNTH" ring "$W/ring" --ranks 4 --bytes 100 --iters 2 --comp 1000
ex ring
acts ring 0 <<EOF
0 init
0 compute 1000
0 send 1 3 100
0 recv 3 3 100
0 compute 1000
0 send 1 $((T2 + 3)) 100
0 recv 3 $((T2 + 3)) 100
0 finalize
EOF
acts ring 2 <<EOF
2 init
2 recv 1 3 100
2 compute 1000
2 send 3 3 100
2 recv 1 $((T2 + 3)) 100
2 compute 1000
2 send 3 $((T2 + 3)) 100
2 finalize
EOF
quiet ring

# 3-D stencil on 2x2x2 ranks: both neighbours in a dimension are one rank,
# told apart by the tags; one waitall for the 12 requests (all pending).
"$SYNTH" stencil "$W/st" --dims 2,2,2 --bytes 4096 --iters 2 --comp 10000
ex st
iter() { # SEQ: rank 0's iteration
  s=$(($1 * T2))
  echo "0 compute 10000"
  # shellcheck disable=SC2086 # "peer tag" pairs
  for p in "1 1" "1 0" "2 3" "2 2" "4 5" "4 4"; do set -- $p; echo "0 irecv $1 $((s + $2)) 4096"; done
  # shellcheck disable=SC2086
  for p in "1 0" "1 1" "2 2" "2 3" "4 4" "4 5"; do set -- $p; echo "0 isend $1 $((s + $2)) 4096"; done
  echo "0 waitall"
  echo "0 allreduce 8 0"
}
{ echo "0 init"; iter 0; iter 1; echo "0 finalize"; } | acts st 0
quiet st

# Nonblocking p2p with overlap: waits name the request by (source, destination, tag).
"$SYNTH" p2p "$W/nb" --nonblocking --bytes 20000 --comp0 100 --comp1 200 --overlap 3000
ex nb
acts nb 0 <<EOF
0 init
0 compute 100
0 isend 1 7 20000
0 compute 3000
0 wait 0 1 7
0 finalize
EOF
acts nb 1 <<EOF
1 init
1 compute 200
1 irecv 0 7 20000
1 compute 3000
1 wait 0 1 7
1 finalize
EOF

# ANY_SOURCE: the Irecvs take the sources their Waitany completions recorded.
"$SYNTH" wildcard "$W/wc" --ranks 4 --bytes 10 --comp 10000
ex wc
acts wc 0 <<EOF
0 init
0 irecv 3 5 10
0 irecv 2 5 10
0 irecv 1 5 10
0 wait 3 0 5
0 wait 2 0 5
0 wait 1 0 5
0 finalize
EOF
acts wc 2 <<EOF
2 init
2 compute 20000
2 send 0 5 10
2 finalize
EOF
quiet wc

# Tests that find nothing cost o_poll (100 ns) of computation; the one that
# completes the receive is its wait.  The two Iprobes after it are dropped
# but for their o_iprobe (o_poll here) and the computation before them.
"$SYNTH" poll "$W/poll" --bytes 10 --comp 100 --comp0 5000
ex poll --platform "$W/plat.conf"
acts poll 1 <<EOF
1 init
1 irecv 0 9 10
1 compute 700
1 wait 0 1 9
1 compute 400
1 finalize
EOF

# Persistent requests: each Start posts a message of its own.
"$SYNTH" persistent "$W/ps" --bytes 10 --iters 3 --comp 1000
ex ps
acts ps 0 <<EOF
0 init
0 compute 1000
0 isend 1 4 10
0 wait 0 1 4
0 compute 1000
0 isend 1 $((T2 + 4)) 10
0 wait 0 1 $((T2 + 4))
0 compute 1000
0 isend 1 $((2 * T2 + 4)) 10
0 wait 0 1 $((2 * T2 + 4))
0 finalize
EOF
quiet ps

"$SYNTH" sendrecv "$W/sr" --bytes 101 --comp 300
ex sr
acts sr 1 <<EOF
1 init
1 compute 300
1 irecv 0 8 101
1 isend 0 8 101
1 waitall
1 finalize
EOF

"$SYNTH" procnull "$W/pn" --comp 777
ex pn
acts pn 0 <<EOF
0 init
0 compute 777
0 finalize
EOF

# Approximated, and said so: a probe (its o_poll kept), a synchronous send.
"$SYNTH" probe "$W/pr" --bytes 10 --comp0 3000
ex pr --platform "$W/plat.conf"
acts pr 1 <<EOF
1 init
1 compute 100
1 recv 0 6 10
1 finalize
EOF
approx pr 1 "probes (Probe, Iprobe, Improbe) dropped"
"$SYNTH" p2p "$W/ss" --bytes 10 --sendop ssend
ex ss
acts ss 0 <<EOF
0 init
0 send 1 7 10
0 finalize
EOF
approx ss 1 "synchronous sends"

# ---- collectives ------------------------------------------------------------------------------
for c in "barrier:barrier" "bcast:bcast 64 1" "reduce:reduce 64 0 1" "allreduce:allreduce 64 0" \
         "allgather:allgather 64 64" "alltoall:alltoall 64 64" "gather:gather 64 64 1" \
         "scatter:scatter 64 64 1"; do
  op=${c%%:*} line=${c#*:}
  "$SYNTH" coll "$W/c-$op" --ranks 4 --op "$op" --bytes 64 --esize 8 --root 1 --comp 2000
  ex "c-$op"
  for r in 0 1 3; do printf '%s init\n%s compute 2000\n%s %s\n%s finalize\n' $r $r $r "$line" $r | acts "c-$op" $r; done
  quiet "c-$op"
done

# Calls with nothing to move: Open MPI's MPI layer returns before any
# collective runs, phantom predict sends nothing, and the export writes
# nothing (their computation joins the next action's); on MPI_COMM_WORLD
# SimGrid would run its algorithm on 0 bytes, and on a sub-communicator
# the decomposition would send 0-byte messages.
"$SYNTH" coll "$W/zero" --ranks 4 --op allreduce,bcast,barrier --bytes 0 --root 1 --comp 2000
ex zero
printf '2 init\n2 compute 6000\n2 barrier\n2 finalize\n' | acts zero 2
quiet zero
"$SYNTH" subcomm "$W/zsub" --ranks 4 --bytes 0 --esize 8 --comp 300
ex zsub
printf '0 init\n0 allgather 8 8\n0 allreduce 8 0\n0 compute 300\n0 barrier\n0 finalize\n' | acts zsub 0
quiet zsub

# Scan has no action: the chain 0 -> 1 -> 2 -> 3, messages in the collective
# tag slot of MPI_COMM_WORLD (1024 << 16).
"$SYNTH" coll "$W/scan" --ranks 4 --op scan --bytes 64 --esize 8 --comp 2000
ex scan
S=$((1024 << 16))
acts scan 1 <<EOF
1 init
1 compute 2000
1 irecv 0 $S 64
1 wait 0 1 $S
1 isend 2 $S 64
1 wait 1 2 $S
1 finalize
EOF
approx scan 4 "collectives on sub-communicators, Scan and Exscan"

# A nonblocking collective runs where its Wait completed it.
"$SYNTH" icoll "$W/ic" --ranks 2 --bytes 8 --esize 8 --overlap 50000
ex ic
acts ic 0 <<EOF
0 init
0 compute 50000
0 allreduce 8 0
0 finalize
EOF
approx ic 2 "nonblocking collectives"

# Comm_split: its agreement on MPI_COMM_WORLD (allgather, allreduce of 8 B);
# the Allreduce on each half becomes its recursive-doubling exchange, in the
# tag slot of the half (1024 + communicator id).
"$SYNTH" subcomm "$W/sub" --ranks 4 --bytes 64 --esize 8 --comp 300
ex sub
for r in 0 1; do
  p=$((r + 2)) t=$(((1025 + r) << 16))
  acts sub $r <<EOF
$r init
$r allgather 8 8
$r allreduce 8 0
$r compute 300
$r irecv $p $t 64
$r isend $p $t 64
$r waitall
$r barrier
$r finalize
EOF
done
approx sub 4 "collectives on sub-communicators"

# A forced algorithm reaches the parts of a composed collective, as in
# phantom predict: on halves of 4 ranks, nonoverlapping allreduce with
# coll.reduce and coll.bcast linear exports what basic_linear (both parts
# linear) does, and not nonoverlapping's own (binomial parts).
"$SYNTH" subcomm "$W/sub8" --ranks 8 --bytes 64 --esize 8 --comp 300
for f in "lin:basic_linear" "non:nonoverlapping" "forced:nonoverlapping:linear"; do
  n=${f%%:*} rest=${f#*:}
  { cat "$W/plat.conf"; echo "coll.allreduce = ${rest%%:*}"
    [ "${rest#*:}" = linear ] && printf 'coll.reduce = linear\ncoll.bcast = basic_linear\n'; } > "$W/$n.conf"
  $PHANTOM export "$W/sub8" --format simgrid -o "$W/$n.tit" --platform "$W/$n.conf" > /dev/null 2>&1 ||
    fail "export sub8 with $n.conf"
  for r in 0 1 2 3 4 5 6 7; do grep -v '^#' "$W/$n.tit.d/rank-$r.txt"; done > "$W/$n.acts"
done
cmp -s "$W/lin.acts" "$W/forced.acts" || fail "forced reduce and bcast: not basic_linear's actions"
cmp -s "$W/non.acts" "$W/forced.acts" && fail "forced reduce and bcast: nonoverlapping's own actions"

# An Allreduce on an intercommunicator between the even and the odd ranks,
# as phantom predict runs it (Open MPI's coll/inter): rank 2 sends its
# block to rank 0 (the even group's rank 0) and rank 3 to rank 1; ranks 0
# and 1 swap; each sends the result back.  Both sides' messages share the
# tag slot of the lower communicator id (1025).
"$SYNTH" intercomm "$W/inter" --ranks 4 --op allreduce --bytes 64 --esize 8 --comp 300
ex inter
t=$((1025 << 16))
# swap_acts NAME SWAP: ranks 2 and 3 send 64 B to ranks 0 and 1, which
# swap SWAP bytes and send SWAP bytes back to them.
swap_acts() {
  for r in 0 1; do
    p=$((r + 2)) o=$((1 - r))
    acts $1 $r <<EOF
$r init
$r compute 300
$r irecv $p $t 64
$r wait $p $r $t
$r irecv $o $t $2
$r isend $o $t $2
$r waitall
$r isend $p $t $2
$r wait $r $p $t
$r finalize
EOF
    acts $1 $p <<EOF
$p init
$p compute 300
$p isend $r $t 64
$p wait $p $r $t
$p irecv $r $t $2
$p wait $r $p $t
$p finalize
EOF
  done
}
swap_acts inter 64
approx inter 4 "collectives on sub-communicators"
# A Gather and a Scatter there, rooted at rank 0: the odd group gathers its
# blocks to rank 1 (binomial at 2 ranks), which sends both to the root in
# one message; the root sends both blocks to rank 1, which scatters them
# (linear).  Rank 2 passes MPI_PROC_NULL: nothing to do.
"$SYNTH" intercomm "$W/igather" --ranks 4 --op gather --bytes 64 --esize 8 --comp 300
"$SYNTH" intercomm "$W/iscatter" --ranks 4 --op scatter --bytes 64 --esize 8 --comp 300
ex igather
ex iscatter
acts igather 0 <<EOF
0 init
0 compute 300
0 irecv 1 $t 128
0 wait 1 0 $t
0 finalize
EOF
acts igather 1 <<EOF
1 init
1 compute 300
1 irecv 3 $t 64
1 wait 3 1 $t
1 isend 0 $t 128
1 wait 1 0 $t
1 finalize
EOF
acts igather 3 <<EOF
3 init
3 compute 300
3 isend 1 $t 64
3 wait 3 1 $t
3 finalize
EOF
acts iscatter 0 <<EOF
0 init
0 compute 300
0 isend 1 $t 128
0 wait 0 1 $t
0 finalize
EOF
acts iscatter 1 <<EOF
1 init
1 compute 300
1 irecv 0 $t 128
1 wait 0 1 $t
1 isend 3 $t 64
1 wait 1 3 $t
1 finalize
EOF
acts iscatter 3 <<EOF
3 init
3 compute 300
3 irecv 1 $t 64
3 wait 1 3 $t
3 finalize
EOF
for x in igather iscatter; do
  acts $x 2 <<EOF
2 init
2 compute 300
2 finalize
EOF
done
# An Alltoall there: each rank posts its receives from the other group, then
# its sends, and waits for all four.
"$SYNTH" intercomm "$W/ialltoall" --ranks 4 --op alltoall --bytes 64 --esize 8 --comp 300
ex ialltoall
for r in 0 1 2 3; do
  p=$((1 - r % 2)) q=$((3 - r % 2))
  acts ialltoall $r <<EOF
$r init
$r compute 300
$r irecv $p $t 64
$r irecv $q $t 64
$r isend $p $t 64
$r isend $q $t 64
$r waitall
$r finalize
EOF
done
# An Allgather there: rank 2 sends its block to rank 0 and rank 3 to rank
# 1; ranks 0 and 1 swap both blocks of their group and send the other
# group's on.
"$SYNTH" intercomm "$W/iallgather" --ranks 4 --op allgather --bytes 64 --esize 8 --comp 300
ex iallgather
swap_acts iallgather 128
# A Reduce_scatter_block there: every rank sends both blocks to the other
# group's rank 0; ranks 0 and 1 swap theirs, take the other rank's, and
# send ranks 2 and 3 their blocks.
"$SYNTH" intercomm "$W/irsb" --ranks 4 --op reduce_scatter_block --bytes 64 --esize 8 --comp 300
ex irsb
for r in 0 1; do
  p=$((r + 2)) o=$((1 - r)) q=$((3 - r))
  acts irsb $r <<EOF
$r init
$r compute 300
$r irecv $o $t 128
$r isend $o $t 128
$r waitall
$r irecv $q $t 128
$r wait $q $r $t
$r isend $p $t 64
$r wait $r $p $t
$r finalize
EOF
  acts irsb $p <<EOF
$p init
$p compute 300
$p isend $o $t 128
$p wait $p $o $t
$p irecv $r $t 64
$p wait $r $p $t
$p finalize
EOF
done
# An Alltoallv of 64 B to and from every remote rank, and a Reduce_scatter
# of 64 B to every local rank, there: the Alltoall's and the
# Reduce_scatter_block's actions, line for line.
"$SYNTH" intercomm "$W/ialltoallv" --ranks 4 --op alltoallv --bytes 64 --comp 300
"$SYNTH" intercomm "$W/irs" --ranks 4 --op reduce_scatter --bytes 64 --comp 300
ex ialltoallv
ex irs
for x in ialltoallv:ialltoall irs:irsb; do
  for r in 0 1 2 3; do
    grep -v '^#' "$W/${x#*:}.tit.d/rank-$r.txt" | acts ${x%:*} $r
  done
done
# An Allgatherv there (rank 0 of each group sends 64 B, rank 1 128 B):
# ranks 2 and 3 send their rank 0s their count (4 B), then their bytes, on
# the channel's next tag; ranks 0 and 1 swap their groups' 192 B and send
# the other group's on.  Each group's sizes come from the other's events.
"$SYNTH" intercomm "$W/iagv" --ranks 4 --op allgatherv --bytes 64 --comp 300
ex iagv
t2=$(((1 << 27) | t))
for r in 0 1; do
  p=$((r + 2)) o=$((1 - r))
  acts iagv $r <<EOF
$r init
$r compute 300
$r irecv $p $t 4
$r wait $p $r $t
$r irecv $p $t2 128
$r wait $p $r $t2
$r irecv $o $t 192
$r isend $o $t 192
$r waitall
$r isend $p $t 192
$r wait $r $p $t
$r finalize
EOF
  acts iagv $p <<EOF
$p init
$p compute 300
$p isend $r $t 4
$p wait $p $r $t
$p isend $r $t2 128
$p wait $p $r $t2
$p irecv $r $t 192
$p wait $r $p $t
$p finalize
EOF
done
# An Iallreduce there, as libnbc runs it: every rank swaps with remote rank
# 0; ranks 0 and 1 take remote rank 1's data, swap the sums and send remote
# rank 1 its group's.
"$SYNTH" intercomm "$W/iiar" --ranks 4 --op allreduce --bytes 64 --comp 300 --nonblocking --overlap 500
ex iiar
for r in 0 1; do
  p=$((r + 2)) o=$((1 - r)) q=$((3 - r))
  acts iiar $r <<EOF
$r init
$r compute 800
$r irecv $o $t 64
$r isend $o $t 64
$r waitall
$r irecv $q $t 64
$r wait $q $r $t
$r irecv $o $t2 64
$r isend $o $t2 64
$r waitall
$r isend $q $t 64
$r wait $r $q $t
$r finalize
EOF
  acts iiar $p <<EOF
$p init
$p compute 800
$p irecv $o $t 64
$p isend $o $t 64
$p waitall
$p finalize
EOF
done
"$SYNTH" intercomm "$W/iscan" --ranks 4 --op scan --bytes 64 --comp 300
ex iscan
approx iscan 4 "intercommunicator collectives not simulated dropped"

# ---- the platform ------------------------------------------------------------------------------
python3 - "$W/p2p.tit.xml" <<'PY' || fail "p2p.tit.xml (above)"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cfg = {p.get("id"): p.get("value") for p in root.find("config")}
want = {"smpi/os": "0:1e-06:0", "smpi/ois": "0:1e-06:0", "smpi/or": "0:2e-06:0",
        "smpi/send-is-detached-thresh": "1025", "smpi/test": "1e-07", "smpi/bw-factor": "0:1",
        "smpi/lat-factor": "0:1", "network/crosstraffic": "0"}
for k, v in want.items():
    assert cfg.get(k) == v, (k, cfg.get(k), v)
c = root.find("cluster").attrib
got = {k: c[k] for k in ("radical", "core", "speed", "bw", "lat", "loopback_bw", "loopback_lat")}
assert got == {"radical": "0-1", "core": "1", "speed": "1Gf", "bw": "1e+09Bps", "lat": "2.5e-06s",
               "loopback_bw": "1e+09Bps", "loopback_lat": "5e-06s"}, got
PY
printf 'node-0\nnode-1\n' | cmp -s - "$W/p2p.tit.hosts" || fail "hostfile: $(cat "$W/p2p.tit.hosts")"
ex st --platform "$W/plat.conf" --ppn 4
printf 'node-0\nnode-0\nnode-0\nnode-0\nnode-1\nnode-1\nnode-1\nnode-1\n' | cmp -s - "$W/st.tit.hosts" ||
  fail "hostfile with --ppn 4: $(cat "$W/st.tit.hosts")"
grep -q 'radical="0-1" speed="1Gf" core="4"' "$W/st.tit.xml" || fail "--ppn 4: $(grep cluster "$W/st.tit.xml")"

# ---- bad input: one line, exit 1 for data, 2 for usage ------------------------------------------
# bad CODE PATTERN ARGS...
bad() {
  code=$1 pat=$2; shift 2
  rc=0
  $PHANTOM export "$@" > "$W/bad.out" 2> "$W/bad.err" || rc=$?
  [ $rc = "$code" ] || fail "export $*: exit $rc, expected $code: $(cat "$W/bad.err")"
  head -1 "$W/bad.err" | grep -q "^phantom export: .*$pat" || fail "export $*: no '$pat': $(cat "$W/bad.err")"
  [ "$code" = 2 ] || [ "$(wc -l < "$W/bad.err")" = 1 ] || fail "export $*: more than one line: $(cat "$W/bad.err")"
}
bad 1 "$W/none: not a trace directory" "$W/none" --format simgrid -o "$W/none.tit"
cp -r "$W/st" "$W/corrupt"
size=$(wc -c < "$W/corrupt/rank-000001.evt")
printf '\377\377\377\377' | dd of="$W/corrupt/rank-000001.evt" bs=1 seek=$((size / 2 + 16)) conv=notrunc 2>/dev/null
bad 1 "rank-000001.evt: offset" "$W/corrupt" --format simgrid -o "$W/corrupt.tit"
bad 2 "--format: 'otf2' is not a format" "$W/p2p" --format otf2 -o "$W/x.tit"
bad 2 "no format given" "$W/p2p" -o "$W/x.tit"
bad 2 "no output given" "$W/p2p" --format simgrid
bad 1 "$W/no/such/dir/x.tit.d: cannot create the directory" "$W/p2p" --format simgrid -o "$W/no/such/dir/x.tit"
bad 1 "$W/none.conf" "$W/p2p" --format simgrid -o "$W/x.tit" --platform "$W/none.conf"
bad 1 "--platform nosuch: no such file, nor a bundled platform" "$W/p2p" --format simgrid -o "$W/x.tit" --platform nosuch
# a bundled platform by its name: its numbers, as from its file
"$PHANTOM" export "$W/p2p" --format simgrid -o "$W/named.tit" --platform ib-qdr > /dev/null || fail "--platform ib-qdr"
"$PHANTOM" export "$W/p2p" --format simgrid -o "$W/file.tit" --platform "$top_srcdir/platforms/ib-qdr.conf" > /dev/null ||
  fail "--platform platforms/ib-qdr.conf"
cmp -s "$W/named.tit.xml" "$W/file.tit.xml" || fail "--platform ib-qdr: another platform than platforms/ib-qdr.conf"

# ---- SimGrid replays them ----------------------------------------------------------------------
if ! command -v smpirun > /dev/null 2>&1; then
  echo "smpirun is not installed (libsimgrid-dev): the exports were not replayed"
  exit 0
fi
# sg NAME NRANKS: replays NAME.tit on its platform, prints the simulated seconds.
sg() {
  (cd "$W" && timeout 300 smpirun -no-privatize -np "$2" -platform "$W/$1.tit.xml" -hostfile "$W/$1.tit.hosts" \
     -replay "$W/$1.tit" --log=root.thres:warning --log=smpi_utils.thres:info) > "$W/$1.sg" 2>&1 ||
    fail "smpirun -replay $1: $(tail -5 "$W/$1.sg")"
  t=$(sed -n 's/.*Simulated time: \([0-9.e+-]*\) seconds.*/\1/p' "$W/$1.sg")
  [ -n "$t" ] || fail "smpirun -replay $1 printed no simulated time: $(tail -5 "$W/$1.sg")"
  echo "$t"
}
# p2p: 5 us of computation, then K = 1000 B eager: SimGrid's o_s + L + K/B + o_r
# is LogGP's o_s + L + G(K-1) + o_r, to 1%.
t=$(sg p2p 2)
python3 -c "import sys; t = float(sys.argv[1]); sys.exit(not (t >= 5e-6 and abs(t - 13.999e-6) <= 0.01 * 13.999e-6))" "$t" ||
  fail "p2p: SimGrid simulated $t s, expected 14.0 us (5 us computation + 9 us message)"
echo "SimGrid replayed p2p in $t s"
# O (the sender's CPU a byte of an eager message) is SimGrid's piecewise
# smpi/os: O a byte up to the eager limit, none above; the 1000 B message
# then costs O * 1000 = 2 us more in both simulators, to 1%.
sed '/^O *=/d' "$W/plat.conf" > "$W/o.conf"
echo "O = 2" >> "$W/o.conf"
cp -r "$W/p2p" "$W/p2po"
ex p2po --platform "$W/o.conf"
grep -q '<prop id="smpi/os" value="0:1e-06:2e-09;1025:1e-06:0"/>' "$W/p2po.tit.xml" ||
  fail "O = 2: smpi/os $(grep smpi/os "$W/p2po.tit.xml")"
t=$(sg p2po 2)
$PREDICT "$W/p2p" --platform "$W/o.conf" --json > "$W/p.json"
p=$(q "d['predicted_s']")
python3 -c "import sys; t, p = map(float, sys.argv[1:]); sys.exit(not (abs(p - 15.999e-6) < 1e-12 and abs(t - p) <= 0.01 * p))" "$t" "$p" ||
  fail "p2p with O = 2: SimGrid simulated $t s, phantom predict $p s, expected 16.0 us"
echo "SimGrid replayed p2p with O in $t s (phantom predict: $p s)"
# The stencil (2 x 10 us computation a rank), with its Waitall and Allreduce,
# agrees with phantom predict to 25%.
t=$(sg st 8)
$PREDICT "$W/st" --platform "$W/plat.conf" --ppn 4 --json > "$W/p.json"
p=$(q "d['predicted_s']")
python3 -c "import sys; t, p = map(float, sys.argv[1:]); sys.exit(not (t >= 20e-6 and abs(t - p) <= 0.25 * p))" "$t" "$p" ||
  fail "stencil: SimGrid simulated $t s, phantom predict $p s"
echo "SimGrid replayed the stencil in $t s (phantom predict: $p s)"
for n in wc sub scan ps sr inter igather iscatter ialltoall iallgather irsb ialltoallv irs iagv iiar; do
  ex $n --platform "$W/plat.conf"
  sg "$n" "$(wc -l < "$W/$n.tit.hosts")" > /dev/null
done
echo "SimGrid replayed the wildcard, sub-communicator, scan, persistent, sendrecv and intercommunicator exports"
# half_duplex: 1 makes the links shared by both directions (SimGrid's
# SHARED policy), so a swap of K = 1000 B takes one G(K-1) more than split
# duplex: SimGrid and phantom predict agree to 1% either way.
"$SYNTH" sendrecv "$W/swap" --bytes 1000
for h in 0 1; do
  sed '/half_duplex/d' "$W/plat.conf" > "$W/hd$h.conf"
  echo "half_duplex = $h" >> "$W/hd$h.conf"
  cp -r "$W/swap" "$W/swap$h"
  ex swap$h --platform "$W/hd$h.conf"
  expect "half_duplex $h: shared links" "$(grep -c 'sharing_policy="SHARED"' "$W/swap$h.tit.xml")" $h
  t=$(sg swap$h 2)
  $PREDICT "$W/swap" --platform "$W/hd$h.conf" --json > "$W/p.json"
  p=$(q "d['predicted_s']")
  python3 -c "import sys; t, p = map(float, sys.argv[1:]); sys.exit(not abs(t - p) <= 0.01 * p)" "$t" "$p" ||
    fail "swap, half_duplex $h: SimGrid simulated $t s, phantom predict $p s"
  echo "swap, half_duplex $h: SimGrid $t s, phantom predict $p s"
done
