#!/bin/sh
# ./example.sh - set up a fresh Debian 12 machine and run phantom on the
# bundled example: build, record a 4-rank run of tests/progs/stencil.c with
# its message log, print the trace's statistics, choose its representative
# ranks, replay them here, and predict the run time on an InfiniBand cluster.
set -eu
cd "$(dirname "$0")"
top=$(pwd)
sh tests/install-deps.sh
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || "$top/configure" -q
make -s -j"$(nproc 2>/dev/null || echo 2)"
mpicc -O2 -g -o stencil "$top/tests/progs/stencil.c" -lm
# Open MPI refuses root unless told; more ranks than cores needs oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf stencil.trace # and the replays of an earlier run
./cli/phantom record --log -o stencil.trace -- mpirun --oversubscribe -np 4 ./stencil 1024 300
./cli/phantom stats stencil.trace
echo
# PHANTOM's chain on this node: representatives and their replay subgroups
# (2 ranks per node), each subgroup replayed here for the iterations the plan
# says, then the prediction for an InfiniBand cluster from those vectors.
./cli/phantom cluster stencil.trace --ppn 2
echo
runs=$(python3 -c 'import json; print(" ".join(r["ranks"] for r in json.load(open("stencil.trace/groups.json"))["runs"]))')
for r in $runs; do
  ./cli/phantom replay stencil.trace --ranks "$r" --plan stencil.trace/groups.json --name here -- ./stencil 1024 300
done
echo
./cli/phantom predict stencil.trace --platform "$top/platforms/ib-qdr.conf" --ppn 2 --comp here \
  --groups stencil.trace/groups.json
echo
echo "The trace is in $(pwd)/stencil.trace; try: build/cli/phantom dump build/stencil.trace --rank 1 | head"
