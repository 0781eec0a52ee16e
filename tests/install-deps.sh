#!/bin/sh
# Installs what phantom needs on a fresh Debian 12 machine (as root).
# Shared by ./example.sh, ./check.sh and .ci/run; does nothing when all is there.
set -eu
PKGS="build-essential autoconf automake libtool pkg-config python3 gfortran
openmpi-bin libopenmpi-dev libzstd-dev zstd libunwind-dev libjansson-dev libdw-dev libiberty-dev
lammps lammps-examples hpcc libsimgrid-dev quantum-espresso quantum-espresso-data nwchem-openmpi
chromium fonts-dejavu-core tesseract-ocr python3-pil python3-mpi4py"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "phantom: missing Debian packages:$missing (run this as root, or apt-get install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
