#!/usr/bin/env bash
# The main job: set up, build, then a headless dynamic simulation of the lug pulled at its eye
# (paper 003's demo: 1.5k tetrahedra, dt 0.01 s). Prints the steps, real-time ratio and PCG
# iterations; writes out/lug_pull/probes.csv and a ParaView series out/lug_pull/result.pvd.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
exec build/cofem run scenes/lug_pull.json "$@"
