#!/bin/sh
# ./example.sh - set up a fresh Debian 12 machine and run phantom's whole
# chain (phantom run) on the bundled example: build, then for a 4-rank run of
# tests/progs/stencil.c, and for LAMMPS's melt example when LAMMPS is
# installed, record it, choose its representative ranks, record the message
# log they need, replay them on this node, predict the run time on every
# bundled platform at 1, 2 and 4 nodes, and write the report.  It ends by
# printing where the reports are.
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

# PHANTOM's chain on this node, 2 ranks per node here (the replayed
# subgroups); the application's own output goes to each study's logs/.
./cli/phantom run -o stencil.study --platforms "$top/platforms" --nodes 1,2,4 --ppn 2 \
  -- mpirun --oversubscribe -np 4 ./stencil 1024 300
reports="$(pwd)/stencil.study/report.html"

lmp=$(command -v lmp || true)
if [ -n "$lmp" ] && mkdir -p lammps && sh "$top/tests/melt-input.sh" lammps/in.melt; then
  echo
  (cd lammps && ../cli/phantom run -o melt.study --platforms "$top/platforms" --nodes 1,2,4 --ppn 2 \
     -- mpirun --oversubscribe -np 4 "$lmp" -in in.melt -log none)
  reports="$reports $(pwd)/lammps/melt.study/report.html"
fi
echo
for r in $reports; do echo "report: $r"; done
echo "Rerun with other platforms (--platforms my.conf) and only the prediction is redone; see doc/user-guide.md."
