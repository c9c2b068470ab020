#!/bin/bash
# Prepare the device check of the CUDA backend (docs/cuda.md, "The device check"): run HERE, on a
# machine with nvcc (no GPU needed). Builds test_cuda_stages, test_cuda_host, cofem_bench and
# cofem for sm_80 + sm_90 into build-gpu/ (git-ignored: build*/), and packs into
# build-gpu/bundle/ (what `run` carries to the device, < 64 MiB with the working tree):
#   cofem-gpu.tar.xz   bin/ (the four programs), lib/ (every shared library they need that a bare
#                      CUDA image lacks: SuiteSparse, BLAS/LAPACK, ARPACK, cJSON, gomp, gfortran,
#                      ...; not glibc, libstdc++, libgcc_s, nor the CUDA toolkit's own, which the
#                      device image has), share/cofem/meshes/ (lug, hinge and their family:
#                      cache/{lug,hinge}_{10k,100k,1m}.msh, made by meshes/generate.sh family)
#   MANIFEST           commit, build flags, sizes, sha256 of the tarball
# Then it checks the bundle as the device will use it: unpacked into a temporary folder, `ldd`
# with LD_LIBRARY_PATH=<bundle>/lib must resolve every library into the bundle, the CUDA toolkit
# or the base system set; test_cuda_host must pass and test_cuda_stages exit 77 (no device here),
# and a short CPU benchmark run (BLAS, CHOLMOD) must work from the bundle.
#   tools/gpu-prepare.sh            build, pack, check
# Environment: JOBS (build jobs, default 2), COFEM_GPU_BUILD (default build-gpu),
# FAMILY_MAX (10k, 100k or 1m: the largest family member packed; default 1m).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
B=${COFEM_GPU_BUILD:-build-gpu}
JOBS=${JOBS:-2}
FAMILY_MAX=${FAMILY_MAX:-1m}
BUNDLE=$B/bundle
STAGE=$B/stage
LIMIT_MB=${LIMIT_MB:-50} # the tarball's budget: the working tree (~6 MB) travels beside it
say() { printf 'gpu-prepare: %s\n' "$*"; }
die() { printf 'gpu-prepare: FAILED: %s\n' "$*" >&2; exit 1; }

command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] || die "no nvcc (CUDA toolkit) here"
mkdir -p "$B"
git check-ignore -q "$B/" || die "$B/ is not ignored by git (the bundle must not be committed)"

# ---- 1. build -------------------------------------------------------------------------------
say "configuring $B (Release, CUDA ON, sm_80;90, warnings as errors)"
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCOFEM_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="80;90" \
  -DCOFEM_WERROR=ON -DCOFEM_VIEWER=OFF -DCOFEM_TESTS=ON >"$B/prepare-configure.log" 2>&1 ||
  { tail -20 "$B/prepare-configure.log"; die "cmake configure (log: $B/prepare-configure.log)"; }
say "building (JOBS=$JOBS; nvcc takes minutes)"
cmake --build "$B" -j"$JOBS" --target test_cuda_stages test_cuda_host test_cuda_mbs_fe cofem_bench cofem_bench_coupling cofem_cli \
  >"$B/prepare-build.log" 2>&1 || { tail -30 "$B/prepare-build.log"; die "build (log: $B/prepare-build.log)"; }
PROGS="$B/test_cuda_stages $B/test_cuda_host $B/test_cuda_mbs_fe $B/perf/cofem_bench $B/perf/cofem_bench_coupling $B/cofem"
for p in $PROGS; do [ -x "$p" ] || die "$p was not built"; done
# the kernels must be there for both architectures
if command -v cuobjdump >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/cuobjdump ]; then
  CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  archs=$("$CUOBJ" --list-elf "$B/test_cuda_stages" 2>/dev/null | grep -o 'sm_[0-9]*' | sort -u | tr '\n' ' ')
  say "kernel images in test_cuda_stages: $archs"
  case "$archs" in *sm_80*sm_90*) ;; *) die "expected sm_80 and sm_90 kernel images, found: $archs" ;; esac
else
  say "no cuobjdump here: the kernel images (sm_80, sm_90) are not listed"
fi

# ---- 2. meshes --------------------------------------------------------------------------------
case $FAMILY_MAX in 10k) SIZES="10k" ;; 100k) SIZES="10k 100k" ;; 1m) SIZES="10k 100k 1m" ;;
  *) die "FAMILY_MAX must be 10k, 100k or 1m" ;; esac
need_gen=0
for part in lug hinge; do for sz in $SIZES; do [ -s "meshes/cache/${part}_$sz.msh" ] || need_gen=1; done; done
if [ $need_gen = 1 ]; then
  command -v gmsh >/dev/null 2>&1 || die "meshes/cache lacks family meshes and gmsh is not here"
  say "generating the mesh family (meshes/generate.sh family, binary .msh; minutes for 1M)"
  BINARY=1 meshes/generate.sh family >"$B/prepare-meshes.log" 2>&1 || die "mesh generation (log: $B/prepare-meshes.log)"
fi

# ---- 3. stage the bundle --------------------------------------------------------------------------
rm -rf "$STAGE" "$BUNDLE"
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/share/cofem/meshes/cache" "$BUNDLE"
cp $PROGS "$STAGE/bin/"
cp meshes/lug.msh meshes/hinge.msh meshes/lug_o2.msh "$STAGE/share/cofem/meshes/" # lug_o2: the quadratic stages
for part in lug hinge; do for sz in $SIZES; do
  cp "meshes/cache/${part}_$sz.msh" "$STAGE/share/cofem/meshes/cache/"
done; done

# libraries: what ldd resolves outside the base system and the CUDA toolkit
is_base() { # glibc, the C++ runtime and the loader: present on any image that runs nvcc's output
  case "$(basename "$1")" in
    linux-vdso*|ld-linux*|libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libutil.so*|\
    libstdc++.so*|libgcc_s.so*|libresolv.so*) return 0 ;;
  esac
  return 1
}
is_cuda() { case "$1" in /usr/local/cuda*|*/cuda-[0-9]*/*|*/nvidia/*) return 0 ;; esac; return 1; }
for p in $PROGS; do
  ldd "$p" | awk '/=>/ {print $1, $3}' | while read -r name path; do
    [ "$path" = "not" ] && die "$p: $name not found here"
    if is_base "$path" || is_cuda "$path"; then continue; fi
    [ -e "$STAGE/lib/$name" ] || cp -L "$path" "$STAGE/lib/$name"
  done
done
say "bundled libraries: $(ls "$STAGE/lib" | tr '\n' ' ')"

# ---- 4. pack ----------------------------------------------------------------------------------------
COMMIT=$(git rev-parse HEAD)
DIRTY=$(git status --porcelain --untracked-files=no -- kernels host include tests/cuda perf | wc -l)
{
  echo "cofem GPU bundle"
  echo "commit $COMMIT ($DIRTY files of kernels/ host/ include/ tests/cuda/ perf/ modified when built)"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(/usr/local/cuda/bin/nvcc --version | tail -2 | head -1)"
  echo "architectures sm_80;sm_90 (SASS + PTX), Release, warnings as errors"
  echo "family up to $FAMILY_MAX"
  echo "programs:"; (cd "$STAGE" && ls -l bin lib share/cofem/meshes share/cofem/meshes/cache | sed 's/^/  /')
} >"$STAGE/MANIFEST"
say "packing (xz)"
tar -C "$STAGE" -cf - . | xz -6 -T"$JOBS" >"$BUNDLE/cofem-gpu.tar.xz"
cp "$STAGE/MANIFEST" "$BUNDLE/MANIFEST"
(cd "$BUNDLE" && sha256sum cofem-gpu.tar.xz >>MANIFEST)
SIZE=$(du -b "$BUNDLE/cofem-gpu.tar.xz" | cut -f1)
say "bundle: $BUNDLE/cofem-gpu.tar.xz, $((SIZE / 1048576)) MiB"
[ "$SIZE" -le $((LIMIT_MB * 1048576)) ] || die "bundle over ${LIMIT_MB} MiB: use FAMILY_MAX=100k"
TREE=$(git ls-files -z --cached --others --exclude-standard | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
say "working tree that travels with it: $((TREE / 1048576)) MiB; together $(((TREE + SIZE) / 1048576)) MiB of 64"
[ $((TREE + SIZE)) -le $((63 * 1048576)) ] || die "working tree + bundle over 63 MiB"

# ---- 5. check it as the device will use it --------------------------------------------------------
T=$(mktemp -d /tmp/cofem-gpu-check.XXXXXX)
trap 'rm -rf "$T"' EXIT
tar -xJf "$BUNDLE/cofem-gpu.tar.xz" -C "$T"
export LD_LIBRARY_PATH="$T/lib:/usr/local/cuda/lib64"
bad=0
for p in "$T"/bin/*; do
  while read -r name path; do
    if [ "$path" = "not" ]; then say "ldd $(basename "$p"): $name NOT FOUND"; bad=1; continue; fi
    case "$path" in "$T"/lib/*) continue ;; esac
    if is_base "$path" || is_cuda "$path"; then continue; fi
    say "ldd $(basename "$p"): $name resolves outside the bundle: $path"; bad=1
  done < <(ldd "$p" | awk '/=>/ {print $1, $3}')
done
[ $bad = 0 ] || die "the bundle is not self-contained (see above)"
say "ldd: every library of every program resolves into the bundle, the CUDA toolkit or glibc/libstdc++"
(cd "$T" && OMP_NUM_THREADS=2 ./bin/test_cuda_host >"$T/host.log" 2>&1) || { tail -20 "$T/host.log"; die "test_cuda_host from the bundle"; }
say "test_cuda_host from the bundle: $(tail -1 "$T/host.log")"
set +e
(cd "$T" && ./bin/test_cuda_stages --meshes "$T/share/cofem/meshes") >"$T/stages.log" 2>&1
rc=$?
set -e
if [ $rc = 77 ]; then
  say "test_cuda_stages from the bundle: exit 77 here, as it must without a device: $(head -1 "$T/stages.log")"
elif [ $rc = 0 ]; then
  say "test_cuda_stages from the bundle PASSED (a device is here)"
else
  cat "$T/stages.log"; die "test_cuda_stages from the bundle: exit $rc"
fi
(cd "$T" && OMP_NUM_THREADS=2 ./bin/cofem_bench --case lug --steps 2 --meshes "$T/share/cofem/meshes" \
  --out "$T/bench" >"$T/bench.log" 2>&1) || { cat "$T/bench.log"; die "cofem_bench (CPU) from the bundle"; }
say "cofem_bench (CPU, lug, BLAS and CHOLMOD) from the bundle: ok"
"$T/bin/cofem" --help >/dev/null 2>&1 || die "cofem --help from the bundle"
say "cofem --help from the bundle: ok"
say "ready. On a lent GPU machine: run(command='tools/gpu-check.sh', carry=['$BUNDLE'], timeout_s=450)"
