#!/usr/bin/env bash
# Installs the Debian packages cofem needs (only those missing) and builds it into build/.
# Usage: tools/setup.sh [extra cmake options]
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS="cmake gcc g++ make pkg-config libcjson-dev libsuitesparse-dev liblapacke-dev libopenblas-dev libarpack2-dev
      gmsh calculix-ccx libglfw3-dev libglew-dev libstb-dev xvfb xauth libgl1-mesa-dri python3
      clang libclang-rt-14-dev libomp-14-dev valgrind python3-numpy python3-matplotlib python3-pytest
      python3-venv python3-setuptools python3-wheel python3-distributed"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  echo "setup: installing$missing"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCOFEM_WERROR=ON "$@" >/dev/null
cmake --build build -j"$(nproc)" 2>&1 | grep -E "error|warning|Built target cofem_cli" || true
test -x build/cofem
