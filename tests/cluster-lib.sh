# tests/cluster-lib.sh - sourced by the tests/cluster-*.sh scripts after tests/lib.sh.
# CLUSTER runs the verb; SYNTH writes synthetic traces with planted groups and
# periods; json KEY... reads a plan.
CLUSTER="$PHANTOM cluster"
SYNTH="$top_builddir/cluster/synth-groups"
[ -x "$SYNTH" ] || fail "build the check programs first: make check (or make cluster/synth-groups)"

# Groups of a plan as "0-3,8-11 4-7,12-15", sorted by lowest member.
groups_of() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(g["members"] for g in d["groups"]))' "$1"
}

# A value of a plan by a Python expression on d, e.g. 'd["iterations"]["period"]'.
plan_get() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# Asserts the plan is self-consistent: every rank in exactly one group,
# rank_group/rank_representative agree with the groups, each representative
# a member of its group and in its replay ranks.
check_plan() {
  python3 - "$1" <<'PY' || fail "inconsistent plan $1"
import json, sys
d = json.load(open(sys.argv[1]))
def ranks(s):
    out = []
    for part in s.split(","):
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
n = d["trace"]["ranks"]
seen = {}
for g in d["groups"]:
    mem = ranks(g["members"])
    assert len(mem) == g["size"], g
    assert g["representative"] in mem, g
    assert g["representative"] in ranks(g["replay_ranks"]), g
    for r in mem:
        assert r not in seen, f"rank {r} in two groups"
        seen[r] = g["id"]
        assert d["rank_group"][r] == g["id"], (r, g["id"])
        assert d["rank_representative"][r] == g["representative"], r
assert sorted(seen) == list(range(n)), "not every rank is in a group"
assert d["ngroups"] == len(d["groups"])
PY
}
