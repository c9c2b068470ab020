#!/bin/bash
# The CPU's step time against the thread count (issue 17: "pick the thread count by problem size
# so that the default is never slower than one thread"): cofem_bench on the lug, the hinge and
# the 10k lug and hinge at 1, 2, 4, ... threads, block Jacobi and rotated Cholesky, in one
# command so that the ratios compare runs of the same machine minutes apart. Prints one line per
# case and thread count and, per case, each count's speed-up over one thread.
#   tools/cpu-threads.sh BENCH MESHES OUTDIR [THREADS...]   (default threads: 1 2 4 8 16 up to nproc)
# Used by tools/gpu-check.sh on the lent machine (16 cores, nothing else running).
set -u
BENCH=$1 MESHES=$2 OUT=$3
shift 3
T="$*"
if [ -z "$T" ]; then
  T=1; n=2; while [ "$n" -le "$(nproc)" ]; do T="$T $n"; n=$((n * 2)); done
fi
mkdir -p "$OUT"
echo "case threads ms_bj it_bj ms_rc it_rc   (cofem_bench --steps 20 --warmup 2 --no-cold --no-amg, median ms/step)"
for c in lug hinge lug_10k hinge_10k; do
  for t in $T; do
    d="$OUT/$c-$t"
    fam=""; case $c in *_10k) fam="--family";; esac
    if OMP_NUM_THREADS=$t "$BENCH" --threads "$t" $fam --case "$c" --steps 20 --warmup 2 --no-cold --no-amg \
         --meshes "$MESHES" --out "$d" >"$d.log" 2>&1 && [ -s "$d/bench.csv" ]; then
      python3 - "$d/bench.csv" "$c" "$t" <<'PY'
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
print("%-10s %3s %9.3f %6.1f %9.3f %6.1f" % (sys.argv[2], sys.argv[3], float(r["ms_per_step_median"]),
      float(r["pcg_iters_warm"]), float(r["rotchol_ms_per_step"]), float(r["rotchol_pcg_iters"])))
PY
    else
      echo "$c $t FAILED (see $d.log)"
    fi
  done
done
