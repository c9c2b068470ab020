#!/bin/bash
# The device check of the CUDA backend (docs/cuda.md, "The device check"): run THERE, on a lent
# GPU machine, in the repository root, with the bundle of tools/gpu-prepare.sh carried:
#   run(command='tools/gpu-check.sh', carry=['build-gpu/bundle'], timeout_s=450)
# One call of at most 8 minutes (a deadline of DEADLINE_S = 480 s shares the time out: each part
# gets at most its cap and what is left; a 15-minute lease holds the machine's start, one run and
# a short rerun), at most 8 files into $OUT:
#   env.txt        nvidia-smi, driver, toolkit, the bundle's MANIFEST, ldd of the programs
#   stages.log     test_cuda_host, then test_cuda_stages -v, then test_cuda_mbs_fe (a mechanism's
#                  corotational FE body on the device; exit 77 is a FAILURE here), then
#                  cofem_bench_coupling --backend cuda on the lug and lug_100k (the linear
#                  coupling's body against the part alone, its bus bytes a step; issue 27)
#   memcheck.log   compute-sanitizer --tool memcheck  test_cuda_stages --quick
#   racecheck.log  compute-sanitizer --tool racecheck test_cuda_stages --quick
#   bench.log      cofem_bench --backend cuda --family --big (the lug and hinge families up to
#   bench.csv        1M tetrahedra, beams; block Jacobi and AMG): ms/step, PCG
#                    iterations, bytes per iteration, GB/s
#   cpu.log        the host's 16 cores: step time against threads (tools/cpu-threads.sh), and
#                  lug_100k on all cores, the CPU baseline of the GPU's figures in the same lease
#   summary.txt    one line per part (PASS/FAIL/TIMEOUT), the benchmark against the card's
#                  measured copy bandwidth, the estimated block-Jacobi step time at 1M
# Last, in processes of their own so that nothing above can depend on them, and only in the time
# left before F32_END_S (440 s, inside the call's 450): AMG with float matrices (cfCudaOptions.
# amg_float, docs/cuda.md "AMG in float"): test_cuda_stages --amg-f32 (appended to stages.log),
# compute-sanitizer memcheck on its --quick (appended to memcheck.log), cofem_bench --amg-only
# --amg-f32 (appended to bench.log, its CSV too), and a table of it in summary.txt; then the
# step kernel by kernel (cofem_bench --kernel-times on the lug, the hinge and lug_1m), the
# warp-per-row SpMV beside the thread-per-row one (--spmv-warp) and, on the lug and the hinge, the
# whole step as one graph (--step-graph).
# Exit 0 when every part passed, 1 otherwise. Arguments: [BUNDLE_DIR] (default build-gpu/bundle).
set -u
cd "$(dirname "$0")/.."
BUNDLE=${1:-build-gpu/bundle}
OUT=${OUT:-/tmp/cofem-gpu-out}
mkdir -p "$OUT"
START=$(date +%s)
DEADLINE=$((START + ${DEADLINE_S:-480}))
# line-buffered output: a part stopped by its time limit keeps what it printed
LB=""
command -v stdbuf >/dev/null 2>&1 && LB="stdbuf -oL -eL"
W=/tmp/cofem-gpu
S="$OUT/summary.txt"
: >"$S"
fail=0
note() { echo "$*" | tee -a "$S"; }
left() { echo $((DEADLINE - $(date +%s))); }
# budget CAP RESERVE: seconds for the next part: at most CAP, leaving RESERVE for the parts after
budget() { local l; l=$(( $(left) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 10 ] && l=10; echo "$l"; }
verdict() { # name rc [timeout-is-failure]
  case $2 in
    0) note "PASS     $1" ;;
    124|137) note "TIMEOUT  $1 (its time ran out; see its log)"; fail=1 ;;
    77) note "FAIL     $1: exit 77 (skipped: no usable device?)"; fail=1 ;;
    *) note "FAIL     $1: exit $2"; fail=1 ;;
  esac
}

note "cofem GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), tree $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
# ---- the bundle ----------------------------------------------------------------------------------
if [ ! -s "$BUNDLE/cofem-gpu.tar.xz" ]; then
  note "FAIL     bundle: $BUNDLE/cofem-gpu.tar.xz absent (run tools/gpu-prepare.sh here, carry $BUNDLE)"
  exit 1
fi
rm -rf "$W" && mkdir -p "$W"
if ! tar -xJf "$BUNDLE/cofem-gpu.tar.xz" -C "$W"; then note "FAIL     bundle: cannot unpack"; exit 1; fi
export LD_LIBRARY_PATH="$W/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
MESHES="$W/share/cofem/meshes"
note "bundle   $(sed -n 2p "$W/MANIFEST")"

# ---- 1. environment ----------------------------------------------------------------------------
{
  echo "== nvidia-smi"; nvidia-smi 2>&1
  echo "== nvidia-smi -q (product, clocks, memory)"
  nvidia-smi -q 2>&1 | grep -E -i 'Product Name|Driver Version|CUDA Version|Max Clocks|Memory *:|Bus Id|Persistence|MIG Mode' -A0
  echo "== nvcc"; (nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>&1 | tail -3
  echo "== uname"; uname -a
  echo "== nproc $(nproc), OMP_NUM_THREADS $OMP_NUM_THREADS"
  echo "== bundle MANIFEST"; cat "$W/MANIFEST"
  for p in "$W"/bin/*; do echo "== ldd $(basename "$p")"; ldd "$p" 2>&1; done
} >"$OUT/env.txt" 2>&1
GPU=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
note "device   ${GPU:-nvidia-smi gave nothing}"
if grep -q "=> not found" "$OUT/env.txt"; then
  note "FAIL     libraries: ldd finds some missing (env.txt)"; fail=1
fi
# the card's copy bandwidth, measured (PyTorch is on the image): bytes read + written per second
BW=$(timeout 60 python3 - <<'PY' 2>/dev/null
import torch
x = torch.empty(512 * 2**20, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(20): y.copy_(x)
e.record(); torch.cuda.synchronize()
print("%.0f" % (2 * 20 * x.numel() / (s.elapsed_time(e) * 1e-3) / 1e9))
PY
)
note "copy     ${BW:-?} GB/s device-to-device (read + write, PyTorch, 512 MiB x 20)"

# ---- 2. the stage tests (a device is here: exit 77 is a failure) -------------------------------------
{
  echo "== test_cuda_host"; "$W/bin/test_cuda_host"; echo "exit $?"
} >"$OUT/stages.log" 2>&1
grep -q "^exit 0$" "$OUT/stages.log"; verdict "test_cuda_host (CPU side)" $?
T=$(budget 150 290)
{ echo "== test_cuda_stages -v --meshes $MESHES (limit ${T} s)"
  timeout "$T" $LB "$W/bin/test_cuda_stages" -v --meshes "$MESHES"; echo "exit $?"; } >>"$OUT/stages.log" 2>&1
rc=$(tail -1 "$OUT/stages.log" | awk '{print $2}')
verdict "test_cuda_stages -v ($(sed -n '/^== test_cuda_stages/,$p' "$OUT/stages.log" | grep -E '^[0-9]+ checks' | tail -1))" "$rc"

# the corotational FE body of a mechanism on the device ("backend": "cuda") against the CPU's runs;
# its scenes and meshes from this checkout (COFEM_SOURCE_DIR)
T=$(budget 60 300)
{ echo "== test_cuda_mbs_fe (limit ${T} s)"
  COFEM_SOURCE_DIR="$PWD" OMP_NUM_THREADS=1 timeout "$T" $LB "$W/bin/test_cuda_mbs_fe"; echo "exit $?"; } >>"$OUT/stages.log" 2>&1
rc=$(tail -1 "$OUT/stages.log" | awk '{print $2}')
verdict "test_cuda_mbs_fe ($(sed -n '/^== test_cuda_mbs_fe/,$p' "$OUT/stages.log" | grep -E '^[0-9]+ checks' | tail -1))" "$rc"

# issue 27's figure: the linear coupling's GPU body (its nodes on the device) against the part
# alone on the GPU, same process, wall clock, with its bus bytes per step; the lug, then lug_100k
for cc in lug lug_100k; do
  T=$(budget 40 260)
  { echo "== cofem_bench_coupling --backend cuda --case $cc (limit ${T} s)"
    COFEM_SOURCE_DIR="$PWD" OMP_NUM_THREADS=1 timeout "$T" $LB "$W/bin/cofem_bench_coupling" --backend cuda --case "$cc" \
      --rounds 2 --steps 30 --mesh-dir "$MESHES/cache"; echo "exit $?"; } >"$W/coupling.log" 2>&1
  cat "$W/coupling.log" >>"$OUT/stages.log"
  grep -E "^\| (alone|linear_pcg) |bus per step" "$W/coupling.log" | sed "s/^/         $cc /" | tee -a "$S"
  verdict "cofem_bench_coupling --backend cuda --case $cc" "$(tail -1 "$W/coupling.log" | awk '{print $2}')"
done

# ---- 3. the benchmark ---------------------------------------------------------------------------------
T=$(budget 160 140)
LABEL=$(echo "${GPU%%,*}" | tr ' ' '-' | tr -cd 'A-Za-z0-9_.-')
# AMG on every case (the H200 run of 19:15Z: its host setup 6.4 s at 1M, the whole benchmark
# within its cap; cofem_bench --amg-skip LIST would leave cases out)
{ echo "== cofem_bench --backend cuda --family --big --steps 10 (limit ${T} s)"
  timeout "$T" $LB "$W/bin/cofem_bench" --backend cuda --family --big --steps 10 \
    --meshes "$MESHES" --out "$W/bench" --label "${LABEL:-gpu}"; echo "exit $?"; } >"$OUT/bench.log" 2>&1
rc=$(tail -1 "$OUT/bench.log" | awk '{print $2}')
cp "$W/bench/bench.csv" "$OUT/bench.csv" 2>/dev/null
rows=0; [ -s "$OUT/bench.csv" ] && rows=$(tail -n +2 "$OUT/bench.csv" | wc -l)
verdict "cofem_bench --backend cuda ($rows cases, $(grep -c 'AMG failed' "$OUT/bench.log") AMG failures)" "$rc"

# ---- 4. compute-sanitizer on short runs -----------------------------------------------------------------
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
sanitize() { local tool=$1
  if [ -z "$CS" ]; then note "FAIL     $tool: compute-sanitizer not found"; fail=1; return; fi
  if [ "$tool" = memcheck ]; then T=$(budget 45 95); else T=$(budget 150 0); fi
  { echo "== compute-sanitizer --tool $tool test_cuda_stages --quick (limit ${T} s)"
    timeout "$T" $LB "$CS" --tool "$tool" --error-exitcode 3 "$W/bin/test_cuda_stages" --quick --meshes "$MESHES"
    echo "exit $?"; } >"$OUT/$tool.log" 2>&1
  rc=$(tail -1 "$OUT/$tool.log" | awk '{print $2}')
  verdict "compute-sanitizer $tool ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -1))" "$rc"
}
sanitize memcheck

# ---- 6. the host CPU, same lease (issue 17's thread threshold; the GPU/CPU ratio in one command) -------
# The lent machine's 16 cores, nothing else running: step time against threads on the small parts
# (tools/cpu-threads.sh), and lug_100k on all cores as the CPU baseline of the GPU's figures.
T=$(budget 60 40)
{ echo "== tools/cpu-threads.sh (limit ${T} s)"
  timeout "$T" $LB tools/cpu-threads.sh "$W/bin/cofem_bench" "$MESHES" "$W/threads"; echo "exit $?"
  T2=$(budget 40 0)
  echo "== cofem_bench --backend cpu --threads $(nproc) --family --case lug_100k --steps 3 (limit ${T2} s)"
  timeout "$T2" $LB "$W/bin/cofem_bench" --backend cpu --threads "$(nproc)" --family --case lug_100k --steps 3 \
    --warmup 1 --no-cold --meshes "$MESHES" --out "$W/cpu100k"; echo "exit $?"
} >"$OUT/cpu.log" 2>&1
note "cpu      $(grep -cE '^(lug|hinge)[_0-9k]* +[0-9]+ +[0-9.]+ ' "$OUT/cpu.log") thread-sweep lines, lug_100k on $(nproc) threads: $(grep -E '^lug_100k' "$OUT/cpu.log" | awk '{print $6 " ms/step block Jacobi, " $11 " ms/step rotated Cholesky"}' | head -1) (cpu.log)"

sanitize racecheck

# ---- 5. summary of the benchmark ---------------------------------------------------------------------
if [ -s "$OUT/bench.csv" ]; then
  python3 - "$OUT/bench.csv" "${BW:-0}" <<'PY' | tee -a "$S"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bw = float(sys.argv[2] or 0)
print("case         nodes    elems  ms/step  it/step  MB/it  ms/it   GB/s  %copy | AMG ms/step  it/step  (warm start, dt 0.01, tol 1e-6)")
for r in rows:
    f = lambda k: float(r[k]) if r.get(k) not in (None, "", "nan") else float("nan")
    it, pcg = f("pcg_iters_warm"), f("pcg_ms")
    mb, gbs = f("pcg_bytes_per_iter") / 1e6, f("pcg_gb_per_s")
    msit = pcg / it if it > 0 else float("nan")
    pct = 100 * gbs / bw if bw > 0 else float("nan")
    am, ai = f("amg_ms_per_step"), f("amg_pcg_iters")
    amg = "%11.2f %8.1f" % (am, ai) if am == am else "%11s %8s" % ("not run", "")
    print("%-11s %6s %8s %8.2f %8.1f %6.1f %6.3f %6.0f %5.0f%% | %s" % (r["case"], r["nodes"], r["elements"],
          f("ms_per_step_median"), it, mb, msit, gbs, pct, amg))
    if r["case"].endswith("_1m") and bw > 0:
        print("%-11s at the copy bandwidth one iteration would take %.3f ms: %.0f iterations/step -> %.1f ms/step"
              % ("", mb * 1e6 / (bw * 1e9) * 1e3, it, it * mb * 1e6 / (bw * 1e9) * 1e3))
# the step's byte budget (cofem_bench's gpu_step_bytes: each stage's minimum bytes) at the measured
# copy bandwidth, against the measured times (docs/cuda.md, "The step's bytes")
if bw > 0 and rows and "gpu_bytes_step" in rows[0]:
    print("byte budget at %.0f GB/s: step MB, limit ms, measured ms, measured/limit (element stages: polar + assemble + update; pcg)" % bw)
    print("case        precond.      step MB  limit ms  step ms  ratio | elem. ratio  pcg ratio")
    for r in rows:
        f = lambda k: float(r[k]) if r.get(k) not in (None, "", "nan") else float("nan")
        for name, pre, ms_key in (("block-Jacobi", "", "ms_per_step_median"), ("AMG", "amg_", "amg_ms_per_step")):
            step_b, elem_b, pcg_b = f(pre + "gpu_bytes_step"), f(pre + "gpu_bytes_elem"), f(pre + "gpu_bytes_pcg")
            if step_b != step_b:
                continue
            lim = step_b / (bw * 1e9) * 1e3
            ms = f(ms_key)
            elem_ms = f(pre + "polar_ms") + f(pre + "assemble_ms") + f(pre + "update_ms")
            print("%-11s %-12s %8.1f %9.4f %8.3f %5.1fx | %10.1fx %9.1fx" % (r["case"], name, step_b / 1e6, lim, ms,
                  ms / lim, elem_ms / (elem_b / (bw * 1e9) * 1e3), f(pre + "pcg_ms") / (pcg_b / (bw * 1e9) * 1e3)))
PY
fi
# ---- 7. AMG with float matrices (amg_float): after everything above, in the time left --------------
F32_END=$((START + ${F32_END_S:-440}))
# f32_budget CAP RESERVE: seconds for the next float part, at most CAP, leaving RESERVE before
# F32_END; 0 when under 15 s are left (the part is then not run)
f32_budget() { local l; l=$(( F32_END - $(date +%s) - $2 )); [ "$l" -gt "$1" ] && l=$1; [ "$l" -lt 15 ] && l=0; echo "$l"; }
f32_part() { # name rc
  # a skip is no failure of the code: the time went to the parts above
  if [ "$2" = skip ]; then note "SKIP     $1: no time left before ${F32_END_S:-440} s"; else verdict "$1" "$2"; fi
}
# ~15 s, ~35 s (the 1M cases: model and hierarchy again, 2 x 13 steps), ~15 s: the benchmark is
# the measurement, so the stages leave it 45 s and the sanitizer takes what is left
T=$(f32_budget 40 45)
if [ "$T" -gt 0 ]; then
  { echo "== test_cuda_stages -v --amg-f32 --meshes $MESHES (limit ${T} s)"
    timeout "$T" $LB "$W/bin/test_cuda_stages" -v --amg-f32 --meshes "$MESHES"; echo "exit $?"; } >"$W/stages-f32.log" 2>&1
  cat "$W/stages-f32.log" >>"$OUT/stages.log"
  grep -E 'AMG float (V-cycle \(|pcg:)' "$W/stages-f32.log" | sed 's/^ */         /' | tee -a "$S"
  f32_part "test_cuda_stages --amg-f32 ($(grep -E '^[0-9]+ checks' "$W/stages-f32.log" | tail -1))" \
    "$(tail -1 "$W/stages-f32.log" | awk '{print $2}')"
else f32_part "test_cuda_stages --amg-f32" skip; fi
T=$(f32_budget 90 10)
if [ "$T" -gt 0 ]; then
  { echo "== cofem_bench --backend cuda --family --big --steps 10 --amg-only --amg-f32 (limit ${T} s)"
    timeout "$T" $LB "$W/bin/cofem_bench" --backend cuda --family --big --steps 10 --amg-only --amg-f32 \
      --meshes "$MESHES" --out "$W/bench-f32" --label "${LABEL:-gpu}"; echo "exit $?"
    echo "== bench-f32.csv"; cat "$W/bench-f32/bench.csv" 2>/dev/null; } >"$W/bench-f32.log" 2>&1
  cat "$W/bench-f32.log" >>"$OUT/bench.log"
  f32_part "cofem_bench --amg-only --amg-f32 ($(grep -c 'AMG float failed' "$W/bench-f32.log") float failures)" \
    "$(grep -E '^exit [0-9]+$' "$W/bench-f32.log" | tail -1 | awk '{print $2}')"
  [ -s "$W/bench-f32/bench.csv" ] && python3 - "$W/bench-f32/bench.csv" <<'PY' | tee -a "$S"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("AMG, double and float matrices in the same run (cofem_bench --amg-only --amg-f32; warm start, dt 0.01, tol 1e-6)")
print("case        double: ms/step  it/step   pcg ms  MB/Vc | float: ms/step  it/step   pcg ms  MB/Vc | pcg float/double")
for r in rows:
    f = lambda k: float(r[k]) if r.get(k) not in (None, "", "nan") else float("nan")
    am, ai, ap, ab = f("amg_ms_per_step"), f("amg_pcg_iters"), f("amg_pcg_ms"), f("amg_bytes_per_vcycle")
    fm, fi, fp, fb = f("amg_f32_ms_per_step"), f("amg_f32_pcg_iters"), f("amg_f32_pcg_ms"), f("amg_f32_bytes_per_vcycle")
    dbl = "%15.2f %8.1f %8.2f %6.0f" % (am, ai, ap, ab / 1e6) if am == am else "%15s %8s %8s %6s" % ("not run", "", "", "")
    flt = "%14.2f %8.1f %8.2f %6.0f" % (fm, fi, fp, fb / 1e6) if fm == fm else "%14s %8s %8s %6s" % ("not run", "", "", "")
    ratio = "%15.0f%%" % (100 * fp / ap) if fp == fp and ap > 0 else "%16s" % ""
    print("%-11s %s | %s | %s" % (r["case"], dbl, flt, ratio))
PY
else f32_part "cofem_bench --amg-only --amg-f32" skip; fi
# the step kernel by kernel (cofem_bench --kernel-times: CUDA events between the kernels,
# cfCudaOptions.kernel_timers) against each kernel's byte limit (docs/cuda.md, "The step's
# bytes"), and on the small parts the whole step as one graph (--step-graph: cfCudaOptions.
# step_graph, the PCG in a conditional loop) beside the batched graphs; appended to bench.log, its
# lines to the summary
T=$(f32_budget 60 30)
if [ "$T" -gt 0 ]; then
  for kc in lug hinge lug_1m; do
    SG=--step-graph; [ "$kc" = lug_1m ] && SG=""
    { echo "== cofem_bench --backend cuda --family --big --case $kc --steps 10 --no-cold --kernel-times --spmv-warp $SG --gpu-gbs ${BW:-3000} (limit ${T} s)"
      timeout "$T" $LB "$W/bin/cofem_bench" --backend cuda --family --big --case "$kc" --steps 10 --no-cold --kernel-times --spmv-warp $SG \
        --gpu-gbs "${BW:-3000}" --meshes "$MESHES" --out "$W/bench-kt-$kc"; echo "exit $?"; } >"$W/bench-kt.log" 2>&1
    cat "$W/bench-kt.log" >>"$OUT/bench.log"
    grep -E "GPU kernels|GPU bytes per step|one graph per step|warp-per-row SpMV" "$W/bench-kt.log" | sed "s/^ */         $kc /" | tee -a "$S"
    f32_part "cofem_bench --kernel-times --spmv-warp $SG --case $kc" "$(grep -E '^exit [0-9]+$' "$W/bench-kt.log" | tail -1 | awk '{print $2}')"
    T=$(f32_budget 60 30)
    [ "$T" -gt 0 ] || break
  done
else f32_part "cofem_bench --kernel-times" skip; fi
if [ -n "$CS" ] && [ "$(f32_budget 30 0)" -gt 0 ]; then
  T=$(f32_budget 30 0)
  { echo "== compute-sanitizer --tool memcheck test_cuda_stages --quick --amg-f32 (limit ${T} s)"
    timeout "$T" $LB "$CS" --tool memcheck --error-exitcode 3 "$W/bin/test_cuda_stages" --quick --amg-f32 --meshes "$MESHES"
    echo "exit $?"; } >"$W/memcheck-f32.log" 2>&1
  cat "$W/memcheck-f32.log" >>"$OUT/memcheck.log"
  f32_part "compute-sanitizer memcheck --amg-f32 ($(grep -E 'ERROR SUMMARY' "$W/memcheck-f32.log" | tail -1))" \
    "$(tail -1 "$W/memcheck-f32.log" | awk '{print $2}')"
else f32_part "compute-sanitizer memcheck --amg-f32" skip; fi

note "elapsed  $(( $(date +%s) - START )) s; $( [ $fail = 0 ] && echo 'ALL PASSED' || echo 'SOME PARTS FAILED' )"
ls "$OUT" >/dev/null
exit $fail
