#!/usr/bin/env bash
# Quadratic tetrahedra through the command line: cofem info names them and gives the corner
# tetrahedra's quality; cofem static on the gmsh -order 2 cantilever (meshes/beam_o2.msh) against
# Timoshenko's tip deflection (independent: beam theory), and the linear mesh of the same geometry
# (meshes/beam_coarse.msh) printed beside it; cofem run takes it on the CPU and refuses the CUDA
# backend with a message naming why; the Craig-Bampton reduction of the clamped cantilever gives its
# first bending frequency (against Timoshenko's beam); a mechanism with the cantilever as an FE body
# runs with every formulation on the CPU, and a GPU body is refused naming why.
set -u
BIN=${COFEM_BIN:-build/cofem}
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

info=$("$BIN" info meshes/beam_o2.msh) || bad "cofem info failed"
echo "$info" | head -4
[[ "$info" == *"422 tetrahedra (quadratic, 10 nodes)"* ]] || bad "info does not name the quadratic tetrahedra"
[[ "$info" == *"(of the corner tetrahedra)"* ]] || bad "info does not say whose quality"
[[ "$info" == *"node set clamp                33 nodes"* ]] || bad "clamp set (corner and edge nodes of the face)"

# Timoshenko: P L^3/(3 E I) + P L/(kappa G A), kappa = 10 (1 + nu)/(12 + 11 nu)
ref=$(awk 'BEGIN{E=210e9;nu=0.3;P=1000;L=1;b=0.1;I=b^4/12;A=b*b;G=E/(2*(1+nu));k=10*(1+nu)/(12+11*nu);
            printf "%.6e", P*L^3/(3*E*I)+P*L/(k*G*A)}')
"$BIN" static tests/data/fe/tet10_cantilever.json --out "$tmp/o2" > "$tmp/o2.log" 2>&1 || bad "cofem static (tet10): $(tail -1 "$tmp/o2.log")"
sed "s#\"../../../meshes/beam_o2.msh\"#\"$PWD/meshes/beam_coarse.msh\"#" tests/data/fe/tet10_cantilever.json > "$tmp/tet4.json"
"$BIN" static "$tmp/tet4.json" --out "$tmp/o1" > "$tmp/o1.log" 2>&1 || bad "cofem static (tet4): $(tail -1 "$tmp/o1.log")"
w2=$(tail -1 "$tmp/o2/static.csv" | cut -d, -f5)
w1=$(tail -1 "$tmp/o1/static.csv" | cut -d, -f5)
r2=$(awk -v w="$w2" -v r="$ref" 'BEGIN{printf "%.4f", -w/r}')
r1=$(awk -v w="$w1" -v r="$ref" 'BEGIN{printf "%.4f", -w/r}')
echo "tip deflection / Timoshenko ($ref m): beam_o2.msh (422 tet10) $r2, beam_coarse.msh (1570 tet4) $r1"
# measured 0.9904 and 0.7282
awk -v r="$r2" 'BEGIN{exit !(r > 0.97 && r < 1.02)}' || bad "tet10 tip deflection $r2 of Timoshenko's"
awk -v r="$r1" 'BEGIN{exit !(r < 0.85)}' || bad "tet4 should lock: $r1"

out=$("$BIN" run tests/data/fe/tet10_cantilever.json --steps 3 --out "$tmp/run" --quiet 2>&1) || bad "cofem run (cpu): $out"
# the GPU takes quadratic tetrahedra (its element stages: kernels/fem_cuda.cu, k_polar10, k_rotate10;
# test_cuda_stages compares them with the CPU's on a device): here it runs, or is refused for the
# device alone, never for the element
if out=$("$BIN" run tests/data/fe/tet10_cantilever.json --steps 3 --out "$tmp/run_cuda" --backend cuda 2>&1); then
  echo "cuda backend: ran tet10 on a device"
else
  [[ "$out" == *"no usable device"* && "$out" != *"10-node"* ]] || bad "cuda backend on tet10: $out"
fi
out=$("$BIN" reduce tests/data/fe/tet10_cantilever.json --clamp --modes 2 --out "$tmp/r.cfred" 2>&1) || bad "reduce (tet10): $out"
# Timoshenko's first bending frequency of the 1 x 0.1 x 0.1 m steel cantilever: Euler-Bernoulli's
# (1.8751^2 / 2 pi L^2) sqrt(E I / rho A) = 83.55 Hz less the shear and rotary inertia (~0.3%)
f1=$(echo "$out" | awk '$1 == 1 && NF == 3 {print $2; exit}')
feb=$(awk 'BEGIN{E=210e9;rho=7850;b=0.1;L=1;I=b^4/12;A=b*b;printf "%.4f", 1.8751040687^2/(2*3.14159265358979*L*L)*sqrt(E*I/(rho*A))}')
echo "reduce --clamp (tet10): first mode $f1 Hz, Euler-Bernoulli $feb Hz"
# measured 83.39 Hz (-0.20%)
awk -v f="$f1" -v r="$feb" 'BEGIN{exit !(f > 0.98 * r && f < 1.01 * r)}' || bad "tet10 reduction's first frequency $f1 Hz"
[ -s "$tmp/r.cfred" ] || bad "no .cfred written"
# mechanisms: an FE body of quadratic tetrahedra runs with every formulation (CPU)
for form in corotational lumped modal; do
  cat > "$tmp/mech_$form.json" <<JSON
{"gravity": [0, 0, -9.81],
 "bodies": [{"name": "beam", "flexible": {"scene": "$PWD/tests/data/fe/tet10_cantilever.json", "formulation": "$form"}}],
 "joints": [{"name": "pin", "type": "revolute", "body1": "ground", "body2": "beam", "node2": "clamp", "axis": [0, 1, 0]}],
 "time": {"dt": 0.01, "end": 0.02}}
JSON
  out=$("$BIN" run "$tmp/mech_$form.json" --out "$tmp/mech_$form" --quiet 2>&1) || bad "mechanism ($form) on tet10: $out"
  [ -s "$tmp/mech_$form/mbs.csv" ] || bad "mechanism ($form): no mbs.csv"
done
# a GPU body of quadratic tetrahedra in a mechanism is refused naming why
cat > "$tmp/mech_cuda.json" <<JSON
{"gravity": [0, 0, -9.81],
 "bodies": [{"name": "beam", "flexible": {"scene": "$PWD/tests/data/fe/tet10_cantilever.json", "formulation": "corotational", "factor": "pcg", "backend": "cuda"}}],
 "joints": [{"name": "pin", "type": "revolute", "body1": "ground", "body2": "beam", "node2": "clamp", "axis": [0, 1, 0]}],
 "time": {"dt": 0.01, "end": 0.02}}
JSON
out=$("$BIN" run "$tmp/mech_cuda.json" --out "$tmp/mech_cuda" 2>&1) && bad "GPU FE body accepted tet10"
[[ "$out" == *"10-node (quadratic) tetrahedra"* ]] || bad "GPU FE body refusal: $out"
echo "cuda FE body: $out"
[ $fail -eq 0 ] && echo "PASS" || echo "$fail failures"
exit $((fail > 0))
