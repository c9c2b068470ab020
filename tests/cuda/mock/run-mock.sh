#!/bin/bash
# test_cuda_stages (or the test TEST names: TEST=test_cuda_mbs_fe) against the CPU mock of
# cofem/cuda.h (cuda_mock.c), without a device:
#   [TEST=name] tests/cuda/mock/run-mock.sh BUILD_DIR [MOCK.c] [-- test arguments, e.g. --quick]
# BUILD_DIR: a configured and built tree (its libcofem.a and test_cuda_stages link line are used).
# Runs from the repository root (meshes/). Exit status: the test's.
set -eu
cd "$(dirname "$0")/../../.."
B=$(cd "$1" && pwd); shift
MOCK=tests/cuda/mock/cuda_mock.c
if [ $# -gt 0 ] && [ "$1" != "--" ]; then MOCK=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
T=$(mktemp -d /tmp/cofem-mock.XXXXXX)
trap 'rm -rf "$T"' EXIT
INC="-Ihost -Itests -Iinclude -I/usr/include/suitesparse"
gcc -O2 -fopenmp -std=c11 -Wall $INC -c "$MOCK" -o "$T/mock.o"
TEST=${TEST:-test_cuda_stages}
gcc -O2 -fopenmp -std=c11 -Wall $INC -DCOFEM_SOURCE_DIR="\"$PWD\"" -c "tests/cuda/$TEST.c" -o "$T/t.o"
(cd "$B" && g++ "$T/t.o" "$T/mock.o" -o "$T/${TEST}_mock" @CMakeFiles/$TEST.dir/linkLibs.rsp \
  -L/usr/local/cuda/targets/x86_64-linux/lib/stubs -L/usr/local/cuda/targets/x86_64-linux/lib)
"$T/${TEST}_mock" "$@"
