#!/bin/sh
# Platform files: the shipped ones load, mistakes get one line naming the
# file and line; placement (--ppn, --map) picks intra- or inter-node
# parameters; the what-if knobs scale what they say; the price is charged.
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/simmpi-lib.sh"
"$SYNTH" p2p "$WORK/e" --bytes 101 --comp0 4000

# Every shipped platform file is valid and cites where its numbers come from.
for f in "$top_srcdir"/platforms/*.conf; do
  $PREDICT "$WORK/e" --platform "$f" --json > "$WORK/p.json" || fail "$f does not load"
  grep -qi "source" "$f" || fail "$f: no source for its numbers"
  expect "$f: name" "$(q "d['platform']")" "$(basename "$f" .conf)"
  expect "$f: platform_file" "$(q "d['platform_file']")" "$f"
  expect "$f: calibrated" "$(q "d['calibrated']")" "$(sed -n 's/^calibrated = //p' "$f")"
  expect "$f: price" "$(q "d['price_per_node_hour']")" "$(sed -n 's/^price_per_node_hour = \(.*\)/float(\1)/p' "$f" | python3 -c 'print(eval(input()))')"
  cur=$(sed -n 's/^currency = \([^ #]*\).*/\1/p' "$f")
  expect "$f: currency" "$(q "d['currency']")" "${cur:-None}"
done
# A bundled platform by its name, with or without .conf, where no file of
# that name is; a file of that name comes first; an unknown name lists them.
for name in ib-qdr ib-qdr.conf; do
  (cd "$WORK" && $PREDICT "$WORK/e" --platform $name --json) > "$WORK/p.json" || fail "--platform $name"
  q "d['platform_file']" | grep -q "/platforms/ib-qdr.conf\$" || fail "--platform $name: $(q "d['platform_file']")"
  cmp -s "$(q "d['platform_file']")" "$top_srcdir/platforms/ib-qdr.conf" || fail "--platform $name: another ib-qdr"
done
printf 'name = mine\n' > "$WORK/ib-qdr"
(cd "$WORK" && $PREDICT "$WORK/e" --platform ib-qdr --json 2> /dev/null) > "$WORK/p.json" || fail "./ib-qdr"
expect "a file named ib-qdr first" "$(q "d['platform']")" mine
rc=0; (cd "$WORK" && $PREDICT "$WORK/e" --platform ib-qdx) > /dev/null 2> "$WORK/err" || rc=$?
expect "unknown platform name: exit" $rc 1
expect "unknown platform name: one line" "$(wc -l < "$WORK/err")" 1
grep -q "^phantom predict: --platform ib-qdx: no such file, nor a bundled platform (.*/platforms: 10gbe-cloud, ib-qdr, shm-2core-local, tcp-loopback-local)\$" "$WORK/err" ||
  fail "unknown platform name: $(cat "$WORK/err")"
rc=0; $PREDICT "$WORK/e" --platform "$WORK/$(printf '%05000d' 0)" > /dev/null 2> "$WORK/err" || rc=$?
expect "too long a platform path: exit" $rc 1
grep -qx "phantom predict: --platform .*\.\.\.: the path is too long" "$WORK/err" || fail "too long a path: $(cat "$WORK/err")"
rc=0; $PREDICT "$WORK/e" > /dev/null 2> "$WORK/err" || rc=$?
expect "no --platform: exit" $rc 2
grep -qx "phantom predict: no platform given (--platform FILE|NAME)" "$WORK/err" || fail "no --platform: $(cat "$WORK/err")"

# A file that does not say when it was calibrated: null; too long a line: one error.
printf 'o_s = 1us\n' > "$WORK/plain.conf"
$PREDICT "$WORK/e" --platform "$WORK/plain.conf" --json > "$WORK/p.json" || fail "plain.conf"
expect "no calibrated line" "$(q "d['calibrated']")" None
expect "no cpu_share line" "$(q "d['cpu_share']")" None
for v in 0.25 25%; do
  printf 'o_s = 1us\ncpu_share = %s\n' "$v" > "$WORK/share.conf"
  $PREDICT "$WORK/e" --platform "$WORK/share.conf" --json > "$WORK/p.json" || fail "cpu_share = $v"
  expect "cpu_share = $v" "$(q "d['cpu_share']")" 0.25
done
# A file of no network parameter predicts on the defaults, with one warning;
# one such parameter, of either channel, and there is none.
printf 'name = pricey\ncores_per_node = 1\nprice_per_node_hour = 2\neager_limit = 8K\n' > "$WORK/nonet.conf"
$PREDICT "$WORK/e" --platform "$WORK/nonet.conf" --json > "$WORK/p.json" 2> "$WORK/err" || fail "nonet.conf"
expect "no network key: warning" "$(cat "$WORK/err")" \
  "phantom predict: warning: $WORK/nonet.conf gives no network parameter (o_s, o_r, L, o', G): predicting with the defaults of doc/platform-format.md"
nonet=$(q "d['predicted_ps']")
for kv in "o_s = 500ns" "intra.G = 1GB/s" "o' = 3us" "L = 1500ns"; do
  printf '%s\n' "name = pricey" "cores_per_node = 1" "$kv" > "$WORK/onenet.conf"
  $PREDICT "$WORK/e" --platform "$WORK/onenet.conf" --json > "$WORK/p.json" 2> "$WORK/err" || fail "$kv"
  expect "$kv: no warning" "$(cat "$WORK/err")" ""
  case $kv in # the default's value, or another intra-node one: the same prediction
    L*) [ "$(q "d['predicted_ps']")" != "$nonet" ] || fail "L = 1500ns predicts as the defaults" ;;
    *) expect "$kv: the defaults' prediction" "$(q "d['predicted_ps']")" "$nonet" ;;
  esac
done
# Errors: one line, naming the file (and line), exit 1.
bad() { # bad WANT-REGEX [platform lines...]
  want=$1; shift
  printf '%s\n' "$@" > "$WORK/bad.conf"
  rc=0; $PREDICT "$WORK/e" --platform "$WORK/bad.conf" > "$WORK/out" 2> "$WORK/err" || rc=$?
  expect "exit status for: $*" $rc 1
  expect "one error line for: $*" "$(wc -l < "$WORK/err")" 1
  grep -q "$want" "$WORK/err" || { cat "$WORK/err"; fail "error for '$*' does not match '$want'"; }
}
bad "bad.conf:2: unknown key 'latency'" "o_s = 1us" "latency = 2us"
bad "bad.conf:2: intra.O: '-0.1' is not a gap per byte (ns) or a bandwidth" "O = 0.1" "intra.O = -0.1"
bad "bad.conf:1: O: unknown unit 'us'" "O = 1us"
# A file with no key at all (empty, or only comments) is not a platform
# running on the defaults.
bad "bad.conf: no 'key = value' line: not a platform file" "# a comment" ""
: > "$WORK/empty.conf"
rc=0; $PREDICT "$WORK/e" --platform "$WORK/empty.conf" > /dev/null 2> "$WORK/err" || rc=$?
expect "empty file: status" $rc 1
expect "empty file: error" "$(cat "$WORK/err")" \
  "phantom predict: $WORK/empty.conf: no 'key = value' line: not a platform file (doc/platform-format.md)"
# A line is a line however long (a comment of 3,000 characters once read as
# three, the last an error on the wrong line); a NUL byte is not a text file.
python3 -c "print('# ' + 'x = 1 ' * 500); print('name = longline'); print('L = 3us  # ' + 'y' * 3000)" \
  > "$WORK/longline.conf"
$PREDICT "$WORK/e" --platform "$WORK/longline.conf" --json > "$WORK/p.json" || fail "long lines: not loaded"
expect "long lines: name" "$(q "d['platform']")" longline
printf 'o_s = 1us\nL = 2\000us\n' > "$WORK/bad.conf"
rc=0; $PREDICT "$WORK/e" --platform "$WORK/bad.conf" > /dev/null 2> "$WORK/err" || rc=$?
expect "NUL byte: status" $rc 1
expect "NUL byte: error" "$(cat "$WORK/err")" \
  "phantom predict: $WORK/bad.conf:2: a NUL byte: not a platform file (text, 'key = value' lines)"
bad "bad.conf:1: L: '2 lightyears' is not a time\|bad.conf:1: L: unknown time unit" "L = 2 lightyears"
bad "bad.conf:1: G: unknown unit" "G = 3 furlongs"
bad "bad.conf:1: intra.G: unknown unit" "intra.G = 3 furlongs"
bad "bad.conf:3: expected 'key = value'" "# comment" "" "o_s 1us"
bad "bad.conf:1: network_model: 'fattree' is not supported" "network_model = fattree"
bad "bad.conf:1: coll.allreduce: unknown algorithm 'quantum'" "coll.allreduce = quantum"
bad "bad.conf:1: calibrated: '.*' is too long" "calibrated = $(printf '%0200d' 0)"
bad "bad.conf:1: unknown collective 'coll.allpairs'" "coll.allpairs = ring"
bad "bad.conf:1: cores_per_node: '0' is not a positive whole number" "cores_per_node = 0"
bad "bad.conf:1: cpu_share: '1.5' is not a share of the time" "cpu_share = 1.5"
bad "bad.conf:1: cpu_share: '0' is not a share of the time" "cpu_share = 0"
bad "bad.conf:1: cpu_share: '50 cores' is not a share of the time" "cpu_share = 50 cores"
bad "bad.conf:1: half_duplex: '1.5' is not a share from 0 (full duplex) to 1 (half duplex)" "half_duplex = 1.5"
bad "bad.conf:1: intra.half_duplex: 'simplex' is not a share from 0" "intra.half_duplex = simplex"
bad "bad.conf:1: currency: 'US D' is not a currency ('\$', 'EUR', '€': letters and symbols)" "currency = US D"
bad "bad.conf:1: currency: '<b>' is not a currency" "currency = <b>"
bad "bad.conf:1: currency: '.*' is too long" "currency = $(printf '%020d' 0 | tr 0 E)"
rc=0; $PREDICT "$WORK/e" --platform "$WORK/nope.conf" 2> "$WORK/err" || rc=$?
expect "missing platform: status" $rc 1
grep -q "nope.conf: cannot open" "$WORK/err" || fail "missing platform file not named"
rc=0; $PREDICT "$WORK/e" --platform "$WORK" 2> "$WORK/err" || rc=$?
expect "platform is a directory: status" $rc 1
expect "platform is a directory: error" "$(cat "$WORK/err")" "phantom predict: $WORK: cannot read: Is a directory"
rc=0; $PREDICT "$WORK/e" 2> "$WORK/err" || rc=$?
expect "no --platform: usage error" $rc 2
rc=0; $PREDICT "$WORK/e" --platform "$WORK/plat.conf" --ppn 99999999999 2> "$WORK/err" || rc=$?
expect "--ppn too large: usage error" $rc 2
expect "--ppn too large: error" "$(head -1 "$WORK/err")" \
  "phantom predict: --ppn: '99999999999' is not a whole number from 1 to 16777216"

# Units: these three files describe the same platform.
plat
cp "$WORK/plat.conf" "$WORK/a.conf"
sed -e 's/^o_s = .*/o_s = 0.001ms/' -e 's/^L = .*/L = 5us/' -e 's/^G = .*/G = 1 GB\/s/' \
    -e 's/^eager_limit = .*/eager_limit = 1K/' "$WORK/a.conf" > "$WORK/b.conf"
for f in a b; do # (the same but for the file's name)
  $PREDICT "$WORK/e" --platform "$WORK/$f.conf" --json | grep -v '"platform_file"' > "$WORK/$f.json"
done
cmp -s "$WORK/a.json" "$WORK/b.json" || fail "units: the same platform written two ways predicts differently"

# Placement: ranks 0 and 1 on one node use the intra-node parameters.
plat "intra.o_s = 100ns
intra.o_r = 200ns
intra.L = 300ns
intra.G = 0"
predict "$WORK/e"
expect "ppn 1: inter-node" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 1000 + 100 + 5000 + 2000) * 1000 ))
predict "$WORK/e" --ppn 2
expect "ppn 2: intra-node" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 100 + 300 + 200) * 1000 ))
expect "ppn 2: one node" "$(q "d['nnodes']")" 1
printf '# node per rank\n7\n7\n' > "$WORK/map"
predict "$WORK/e" --map "$WORK/map"
expect "map file: same node" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 100 + 300 + 200) * 1000 ))
predict "$WORK/e" --ppn 2 --map cyclic
expect "cyclic over 1 node" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 100 + 300 + 200) * 1000 ))
# The map file is cluster's: a word per rank names its node, host names
# or numbers, any number a line; nodes are counted, not numbered by the file.
printf 'node-a node-a  # one line\n' > "$WORK/map"
predict "$WORK/e" --map "$WORK/map"
expect "map file, names on one line: same node" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 100 + 300 + 200) * 1000 ))
expect "map file: JSON names it" "$(q "d['map'] == '$WORK/map' and d['ppn'] == 0")" True
printf '3\n9\n' > "$WORK/map"
predict "$WORK/e" --map "$WORK/map"
expect "map file, nodes 3 and 9: inter-node" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 1000 + 100 + 5000 + 2000) * 1000 ))
expect "map file, nodes 3 and 9: two nodes" "$(q "d['nnodes']")" 2
printf '0\n' > "$WORK/short"
rc=0; $PREDICT "$WORK/e" --platform "$WORK/plat.conf" --map "$WORK/short" 2> "$WORK/err" || rc=$?
expect "short map: status" $rc 1
grep -q "short: names the node of 1 rank, the trace has 2" "$WORK/err" || fail "short map file not reported"
printf '0 0 1\n' > "$WORK/long"
rc=0; $PREDICT "$WORK/e" --platform "$WORK/plat.conf" --map "$WORK/long" 2> "$WORK/err" || rc=$?
expect "long map: status" $rc 1
grep -q "long:1: more nodes than the 2 ranks of the trace" "$WORK/err" || fail "long map file not reported"

# Intra-node values not given take the inter-node ones: with all seven LogGP
# keys given unprefixed only, eight ranks on one node finish as on eight
# nodes.  And each key counts here (so that the equality can fail): giving
# its intra-node key its default value changes the one-node prediction.
# 1500-byte halos both ways at once: rendezvous above this eager_limit,
# eager below the default 4096, and half duplex holds a rank's other way.
# (2 x 2 x 2: no rank is its own neighbour, as messages to oneself take the
# intra-node channel wherever the rank is.)
"$SYNTH" stencil "$WORK/st" --dims 2,2,2 --iters 3 --bytes 1500 --comp 2000 > /dev/null ||
  fail "simmpi/synth stencil"
finishes() { q "[r['finish_ps'] for r in d['ranks']]"; }
plat "half_duplex = 0.5"
predict "$WORK/st"
expect "inherit: 8 nodes" "$(q "d['nnodes']")" 8
inter=$(finishes)
predict "$WORK/st" --ppn 8
expect "inherit: 1 node" "$(q "d['nnodes']")" 1
expect "intra-node values not given follow the inter-node ones" "$(finishes)" "$inter"
for kv in o_s=200ns o_r=200ns L=200ns o_prime=100ns G=0.1 eager_limit=4096 half_duplex=full; do
  plat "half_duplex = 0.5
intra.${kv%%=*} = ${kv#*=}"
  predict "$WORK/st" --ppn 8
  [ "$(finishes)" != "$inter" ] || fail "inherit: intra.${kv%%=*} makes no difference to this workload"
done

# What-if: comp=0.5 halves every computation unit, net=2 doubles the network.
plat
predict "$WORK/e" --what-if comp=0.5
expect "comp x 0.5" "$(q "d['ranks'][1]['finish_ps']")" $(( (2000 + 1000 + 100 + 5000 + 2000) * 1000 ))
predict "$WORK/e" --what-if net=2
expect "net x 2" "$(q "d['ranks'][1]['finish_ps']")" $(( (4000 + 2 * (1000 + 100 + 5000 + 2000)) * 1000 ))
# ... failed polls included: 3 Tests and 2 Iprobes at o_poll = 100 ns (the
# Iprobes after a Barrier, which ends the credit of the wait in the
# successful Test: doc/simmpi.md section 4).
"$SYNTH" poll "$WORK/poll" --bytes 10 --comp 1000 --comp0 3000 --barrier > /dev/null || fail "simmpi/synth poll"
predict "$WORK/poll" --what-if net=2
expect "net x 2: failed polls" "$(q "d['simulator']['failed_poll_ps']")" $(( 2 * 5 * 100 * 1000 ))
predict "$WORK/e" --what-if comp=0 --what-if net=0.5
expect "comp x 0, net x 0.5" "$(q "d['predicted_ps']")" $(( (1000 + 100 + 5000 + 2000) * 500 ))
rc=0; $PREDICT "$WORK/e" --platform "$WORK/plat.conf" --what-if cpu=2 2> /dev/null || rc=$?
expect "bad what-if: usage error" $rc 2
# A factor whose products no 64-bit clock holds fails at the 2^62 ps
# horizon, in one line naming the rank, and the picoseconds never wrap.
for w in comp=1e300 net=1e300; do
  rc=0; $PREDICT "$WORK/e" --platform "$WORK/plat.conf" --what-if $w > /dev/null 2> "$WORK/err" || rc=$?
  expect "what-if $w: exit" $rc 1
  [ "$(wc -l < "$WORK/err")" = 1 ] &&
    grep -q "rank [01]: .*the simulated time passes 2^62 ps .*, or a what-if factor, is too large" "$WORK/err" ||
    fail "what-if $w: $(cat "$WORK/err")"
done

# The price per node-hour: 2 nodes for the predicted time.
plat "price_per_node_hour = 3600"
predict "$WORK/e"
expect "cost" "$(q "round(d['cost'] * 1e12)")" $(( 2 * (4000 + 1000 + 100 + 5000 + 2000) * 1000 ))
# On the terminal: money to four decimals, a fraction of a cent in significant digits.
$PREDICT "$WORK/e" --platform "$WORK/plat.conf" | grep -qx "cost: 2.42e-05 (2 nodes at 3600 per node-hour)" ||
  fail "cost below a cent: $($PREDICT "$WORK/e" --platform "$WORK/plat.conf" | grep cost)"
plat "price_per_node_hour = 3.6e9"
$PREDICT "$WORK/e" --platform "$WORK/plat.conf" | grep -qx "cost: 24.2000 (2 nodes at 3.6e+09 per node-hour)" ||
  fail "cost: $($PREDICT "$WORK/e" --platform "$WORK/plat.conf" | grep cost)"
# ... in the file's currency: a symbol before the amount, a code after it
for cw in '$|$24.2000 (2 nodes at $3.6e+09 per' '€|€24.2000 (2 nodes at €3.6e+09 per' \
          'EUR|24.2000 EUR (2 nodes at 3.6e+09 EUR per'; do
  plat "price_per_node_hour = 3.6e9
currency = ${cw%%|*}"
  got=$($PREDICT "$WORK/e" --platform "$WORK/plat.conf" | grep "^cost")
  expect "currency ${cw%%|*}" "$got" "cost: ${cw#*|} node-hour)"
  expect "currency ${cw%%|*}: JSON" "$(predict "$WORK/e" && q "d['currency']")" "${cw%%|*}"
done
echo "platform files checked"
