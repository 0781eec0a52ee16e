#!/bin/sh
# ./example.sh - set up a fresh Debian 12 machine and run phantom on the
# bundled example: build, record a 4-rank run of tests/progs/stencil.c with
# its message log, print the trace's statistics, its representative ranks and
# a predicted run time on an InfiniBand cluster.
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
./cli/phantom record --log --force -o stencil.trace -- mpirun --oversubscribe -np 4 ./stencil 1024 300
./cli/phantom stats stencil.trace
echo
# The stages built so far: representatives, and a prediction for an IB cluster
# from the host's own computation vectors.
./cli/phantom cluster stencil.trace --ppn 2
echo
./cli/phantom predict stencil.trace --platform "$top/platforms/ib-qdr.conf" --ppn 2
echo
echo "The trace is in $(pwd)/stencil.trace; try: build/cli/phantom dump build/stencil.trace --rank 1 | head"
