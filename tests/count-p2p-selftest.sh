#!/bin/sh
# The point-to-point count checker (tests/count_p2p.py, used by app-lammps.sh and
# app-hpcc.sh) must accept an exact match and catch a lost send, a wrong byte
# count, a counted PROC_NULL send, a wrong peer and missing monitoring files.
exec python3 "$top_srcdir/tests/count_p2p.py" --selftest
