#!/bin/sh
# melt-input.sh OUT - write the input of LAMMPS's melt example (Debian's
# lammps-examples, plain or gzipped, wherever this release puts it) to OUT.
# Exit 1, writing nothing, when it is not installed.  Used by the tests
# (tests/lib.sh), the benches and example.sh.
[ $# -eq 1 ] || { echo "usage: melt-input.sh OUT" >&2; exit 2; }
for f in /usr/share/lammps/examples/melt/in.melt /usr/share/doc/lammps-examples/examples/melt/in.melt \
         /usr/share/doc/lammps/examples/melt/in.melt; do
  if [ -f "$f" ]; then cp "$f" "$1"; exit; fi
  if [ -f "$f.gz" ]; then gzip -dc "$f.gz" > "$1"; exit; fi
done
exit 1
