# tests/simmpi-lib.sh - shared by the tests/simmpi-*.sh scripts (after tests/lib.sh).
SYNTH="$top_builddir/simmpi/synth"
PREDICT="$PHANTOM predict"
[ -x "$SYNTH" ] || skip "simmpi/synth is not built (make check builds it)"

# A platform with round numbers: every closed form below is exact in ns.
plat() {
  cat > "$WORK/plat.conf" <<EOP
name = closed-forms
network_model = loggp
o_s = 1000ns
o_r = 2us
L = 5000
o_prime = 300ns
G = 1          # ns per byte
eager_limit = 1024
o_poll = 100ns
cores_per_node = 1
$*
EOP
}

# predict TRACE [options]: the JSON prediction in $WORK/p.json
predict() { t=$1; shift; $PREDICT "$t" --platform "$WORK/plat.conf" --json "$@" > "$WORK/p.json"; }

# jq-like: q EXPR prints a value of the last prediction (python expression on d)
q() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($1)" "$WORK/p.json"; }

# expect NAME GOT WANT
expect() { [ "$2" = "$3" ] || fail "$1: got $2, want $3"; }
