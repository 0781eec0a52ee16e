#!/bin/sh
# pass-calls.sh - what the recorder adds to a call it passes through and
# times (one-sided, MPI-IO, ...: doc/recorder.md) and to a local call it
# only counts, in ns per call, measured inside the program (bench/pass-calls.c,
# 2 million calls each, 2 ranks), bare and recorded in turn, ROUNDS times
# (default 5); per call the best of the rounds.  Not a test.
#
#   sh bench/pass-calls.sh BUILDDIR
set -eu
B=$(cd "${1:?usage: pass-calls.sh BUILDDIR}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=${ROUNDS:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/pass-calls" "$HERE/pass-calls.c"
for r in $(seq "$ROUNDS"); do
  mpirun --oversubscribe -np 2 "$tmp/pass-calls" | sed 's/^/bare /' >> "$tmp/all"
  "$B/cli/phantom" record --force -o "$tmp/t.trace" -- mpirun --oversubscribe -np 2 "$tmp/pass-calls" 2> /dev/null |
    sed 's/^/recorded /' >> "$tmp/all"
done
echo "$(date -u +%Y-%m-%dT%H:%MZ), $ROUNDS rounds, ns per call (best of the rounds):"
awk '{ key = $1 SUBSEP $2; if (!(key in v) || $3 + 0 < v[key]) v[key] = $3 + 0; names[$2] = 1 }
  END { printf "%-20s %10s %10s %10s %8s\n", "call", "bare", "recorded", "added", "ratio"
        for (k in names) printf "%-20s %10.1f %10.1f %10.1f %8.2f\n", k, v["bare", k], v["recorded", k],
                                v["recorded", k] - v["bare", k], v["recorded", k] / v["bare", k] }' "$tmp/all"
