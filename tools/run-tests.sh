#!/usr/bin/env bash
# Set up, build, and run the whole test suite (ctest). GPU tests skip (exit 77) without a device.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cd build
exec ctest --output-on-failure -j2 "$@"
