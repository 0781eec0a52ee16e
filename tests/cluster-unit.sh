#!/bin/sh
# The cluster library against independent computations: the naive O(n^3)
# Algorithm 1, the full dendrogram for the exact threshold and count cuts,
# hand-computed distances, periods, Equation 2 and representatives.
. "$top_srcdir/tests/lib.sh"
"$top_builddir/cluster/cluster-test" || fail "cluster-test"
