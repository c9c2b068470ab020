#!/usr/bin/env bash
# The package as a user installs it (issue 32): the source tree copied to a scratch folder (its
# tracked and untracked, not ignored, files: no build/), `pip install --no-build-isolation .` into
# a fresh `python3 -m venv --system-site-packages` (offline: --no-index, Debian's setuptools and
# wheel; CMake builds libcofem and the cofem program into the package, CUDA off to keep the build
# short), then, from a folder outside the source tree and with no COFEM_* variable pointing back at
# it: the package is the venv's, its library and program are the ones inside it, the README's one-
# liner runs the installed lug, `python3 -m cofem run` runs, and the Python tests (python/tests,
# copied out) pass against it. Skipped (77) without a python3 having numpy, pytest and venv with
# ensurepip (Debian: python3-numpy python3-pytest python3-venv python3-setuptools python3-wheel).
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
py=""
for cand in ${PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null && "$cand" -c "import numpy, pytest, venv, ensurepip, setuptools, wheel" 2>/dev/null; then
    py=$cand; break
  fi
done
[ -n "$py" ] || { echo "test_python_install: skipped, no python3 with numpy, pytest, venv/ensurepip, setuptools and wheel (python3-venv python3-setuptools python3-wheel)"; exit 77; }
command -v cmake >/dev/null || { echo "test_python_install: skipped, no cmake"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "test_python_install: FAIL: $*"; exit 1; }

# the checkout's files (a fresh clone's, plus what is not committed yet)
mkdir "$T/src"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (git -C "$SRC" ls-files -z --cached --others --exclude-standard | (cd "$SRC" && xargs -0 cp --parents -t "$T/src" 2>/dev/null)) || true
else
  tar -C "$SRC" --exclude='./build*' --exclude=./out --exclude=./.git -cf - . | tar -C "$T/src" -xf -
fi
[ -f "$T/src/pyproject.toml" ] || fail "no pyproject.toml copied"

"$py" -m venv --system-site-packages "$T/venv" >"$T/venv.log" 2>&1 || { cat "$T/venv.log"; fail "python3 -m venv"; }
V=$T/venv/bin/python
mkdir "$T/elsewhere" && cd "$T/elsewhere"
unset COFEM_BUILD COFEM_LIB COFEM_BIN COFEM_DATA PYTHONPATH
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
start=$(date +%s)
COFEM_CMAKE_ARGS="-DCOFEM_CUDA=OFF ${COFEM_CMAKE_ARGS:-}" COFEM_BUILD_JOBS=${COFEM_BUILD_JOBS:-2} \
  "$V" -m pip install --no-build-isolation --no-deps --no-index "$T/src" >"$T/pip.log" 2>&1 \
  || { tail -40 "$T/pip.log"; fail "pip install --no-build-isolation ."; }
echo "pip install: $(( $(date +%s) - start )) s"

# the installed package, not the source tree's, with its own library, program and data
"$V" - "$T/venv" <<'PY' || fail "the installed package is not the venv's own"
import os, sys
import cofem
venv = os.path.realpath(sys.argv[1])
for what, p in [("module", cofem.__file__), ("library", cofem.library_path()), ("program", cofem.program()),
                ("data", cofem.data_dir())]:
    ok = p is not None and os.path.realpath(p).startswith(venv + os.sep)
    print(f"  {what}: {p}")
    if not ok:
        sys.exit(f"{what} {p} is outside the venv")
PY
# the README's line
"$V" -c "import cofem, os; s = cofem.Scene(os.path.join(cofem.data_dir(), 'scenes', 'lug_pull.json')); s.step(20); print('lug probe after 20 steps', s.probe('probe'))" \
  || fail "the README's one-liner"
"$V" -m cofem run "$T/venv/lib/python"*/site-packages/cofem/_native/share/cofem/scenes/lug_pull.json --steps 5 --out "$T/run" --quiet >/dev/null \
  || fail "python3 -m cofem run"
[ -s "$T/run/probes.csv" ] || fail "python3 -m cofem run wrote no probes.csv"

# the Python tests against the installed package, from outside the source tree (scenes and meshes
# still read from it: COFEM_SOURCE_DIR)
cp -r "$SRC/python/tests" "$T/tests"
COFEM_SOURCE_DIR=$SRC "$V" -m pytest -q -p no:cacheprovider "$T/tests" || fail "the Python tests against the installed package"
echo "test_python_install: OK"
