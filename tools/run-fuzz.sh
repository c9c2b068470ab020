#!/usr/bin/env bash
# Build the libFuzzer targets (clang, ASan + UBSan) into build-fuzz/ and run them.
#
#   tools/run-fuzz.sh                 every target for 60 s (what CI runs)
#   tools/run-fuzz.sh 3600            every target for an hour
#   tools/run-fuzz.sh 0 fuzz_inp      one target until stopped (Ctrl-C)
#   tools/run-fuzz.sh --merge         add the inputs that found new coverage to tests/fuzz/corpus/
#
# Targets: fuzz_msh (.msh files, ASCII and binary), fuzz_msh_bin (binary .msh 4.1 sections
# behind a fixed header), fuzz_inp (.inp), fuzz_scene (scene JSON). Each starts from the committed
# seeds in tests/fuzz/corpus/<target>/ and keeps what it finds in build-fuzz/corpus/<target>/ (so
# longer runs build on earlier ones; the committed corpus is never written to except by --merge).
# Targets run $FUZZ_JOBS at a time (default: the number of cores). A crash, a leak, a broken
# contract (see tests/fuzz/fuzz_common.h), a hang (over 10 s for one input), an allocation over
# 512 MB or 2 GB in use (the inputs are a few kB) fails the run and leaves the input in
# build-fuzz/artifacts/<target>/: fix the bug, then keep the input as
# tests/fuzz/regressions/<target>/<name> (with <name>.expect holding a fragment of the error
# message it must now give) so that test_fuzz_regressions replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
ALL="fuzz_msh fuzz_msh_bin fuzz_inp fuzz_scene"
secs=60
merge=0
targets=""
for a in "$@"; do
  case "$a" in
    --merge) merge=1 ;;
    fuzz_*) targets="$targets $a" ;;
    ''|*[!0-9]*) echo "usage: tools/run-fuzz.sh [SECONDS] [--merge] [TARGET...]" >&2; exit 2 ;;
    *) secs=$a ;;
  esac
done
targets=${targets:-$ALL}
command -v clang >/dev/null || { echo "run-fuzz: clang is needed (tools/setup.sh installs it)" >&2; exit 1; }

B=build-fuzz
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
t0=$(date +%s)
cmake -S tests/fuzz -B $B -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="-pthread -fsanitize=fuzzer-no-link $SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" >/dev/null
# shellcheck disable=SC2086
cmake --build $B -j"$(nproc)" --target $targets 2>&1 | grep -E "error|warning:" | grep -v "unknown warning option" || true
for t in $targets; do test -x $B/$t || { echo "run-fuzz: $t did not build" >&2; exit 1; }; done
echo "run-fuzz: built $targets in $(( $(date +%s) - t0 )) s"

jobs=${FUZZ_JOBS:-$(nproc)} # (before OMP_NUM_THREADS=1 below, which nproc would obey)
# OpenBLAS's thread pool makes LeakSanitizer's exit-time scan crash; the readers do not use it
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [ $merge -eq 1 ]; then
  for t in $targets; do
    name=${t#fuzz_}
    [ -d $B/corpus/$name ] || continue
    before=$(ls tests/fuzz/corpus/$name | wc -l)
    $B/$t -merge=1 tests/fuzz/corpus/$name $B/corpus/$name 2>/dev/null
    echo "run-fuzz: $t: corpus $before -> $(ls tests/fuzz/corpus/$name | wc -l) files"
  done
  exit 0
fi

logs=$B/logs
mkdir -p $logs
. tools/lib/kmp-shm.sh
kmp_shm_sweep # libomp's leftover registration files in /dev/shm (SIGBUS before main)
run_one() {
  local t=$1 name=${1#fuzz_}
  mkdir -p $B/corpus/$name $B/artifacts/$name
  set +e
  $B/$t -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
    -print_final_stats=1 -artifact_prefix=$B/artifacts/$name/ \
    $B/corpus/$name tests/fuzz/corpus/$name >$logs/$t.log 2>&1
  echo $? >$logs/$t.rc
}
fail=0
running=0
for t in $targets; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  echo "run-fuzz: $t for ${secs} s (seeds tests/fuzz/corpus/${t#fuzz_}, log $logs/$t.log)"
  rm -f $logs/$t.rc
  run_one "$t" &
  running=$((running + 1))
done
wait || true
for t in $targets; do
  if [ "$(cat $logs/$t.rc 2>/dev/null)" = 0 ]; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' $logs/$t.log | grep -o '[0-9]*$' || echo "?")
    cov=$(grep -o 'cov: [0-9]*' $logs/$t.log | tail -1 || true)
    echo "run-fuzz: $t: ok, $execs inputs, $cov, corpus $(ls $B/corpus/${t#fuzz_} | wc -l) new files"
  else
    fail=1
    echo "run-fuzz: $t: FAILED; the end of its log:"
    grep -v '^#[0-9]' $logs/$t.log | tail -40
    echo "run-fuzz: inputs kept in $B/artifacts/${t#fuzz_}/:"
    ls -l $B/artifacts/${t#fuzz_}/ || true
  fi
done
echo "run-fuzz: $(( $(date +%s) - t0 )) s in all"
exit $fail
