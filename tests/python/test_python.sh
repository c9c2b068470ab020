#!/usr/bin/env bash
# The Python module (python/cofem) by pytest (python/tests) over the build's libcofem.so
# ($COFEM_BUILD, set by ctest). Skipped (77) when no python3 with numpy and pytest is there
# (Debian: python3-numpy python3-pytest).
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
export COFEM_BUILD=${COFEM_BUILD:-$SRC/build}
py=""
for cand in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c "import numpy, pytest" 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "test_python: skipped, no python3 with numpy and pytest (python3-numpy python3-pytest)"; exit 77; }
[ -e "$COFEM_BUILD/libcofem.so" ] || { echo "test_python: $COFEM_BUILD/libcofem.so not built"; exit 1; }
export PYTHONPATH=$SRC/python${PYTHONPATH:+:$PYTHONPATH} OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
exec "$py" -m pytest -q -p no:cacheprovider python/tests
