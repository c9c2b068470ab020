#!/usr/bin/env bash
# Accuracy against CalculiX on the paper's parts (issue 6): `cofem accuracy --check` runs the lug
# and hinge meshes of the paper's size (scenes/accuracy/lug.json, hinge.json), and the lug on
# quadratic tetrahedra (lug_o2.json: C3D10, issue 30) through CalculiX (NLGEOM, linear, *FREQUENCY;
# C3D4 or C3D10 on the same mesh, the same nodal loads) and cofem, and fails
# unless the co-rotational displacement at full load is within 2% of |u_ref| of CalculiX NLGEOM
# where linear FEM is off by more than 10%, and the first six eigenfrequencies of cofem's modal
# analysis (with CalculiX's mass matrix: the one-point rule for C3D4, the 4-point rule for C3D10)
# are within 0.5% of CalculiX's. It also checks the
# harness's elastica against the closed-form quadrature. Skipped (77) without ccx.
set -u
BIN=${COFEM_BIN:-build/cofem}
command -v ccx >/dev/null 2>&1 || { echo "SKIP: ccx (Debian calculix-ccx) is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BIN" accuracy --check --out "$tmp" 2>&1 | grep -v '^$'
rc=${PIPESTATUS[0]}
[ "$rc" -eq 77 ] && exit 77
if [ "$rc" -ne 0 ]; then echo "FAIL: cofem accuracy --check exited $rc"; exit 1; fi
# the tables and CSVs are there
for f in errors.md lug_static.csv hinge_static.csv lug_modes.csv hinge_modes.csv lug_o2_static.csv lug_o2_modes.csv; do
  [ -s "$tmp/$f" ] || { echo "FAIL: $f missing"; exit 1; }
done
# The program's own bounds (2%, 0.5%) are the paper's; the code does far better, and a real
# regression (a +1% shear modulus, a wrong mass rule) passes them. Tighter bounds, from the CSVs,
# each a few times the value measured (2026-11-26, in the comment beside it):
fail=0
# linear statics against CalculiX's linear step, the same discrete problem, every load step:
# largest |u - u_ccx| / |u_ccx| (lug 6.6e-8, hinge 1.3e-7, lug_o2 5.1e-8: the C3D10 node order and
# its 4-point stiffness; the .dat file prints 7 digits)
for part in lug hinge lug_o2; do
  awk -F, -v part="$part" -v bound=5e-7 'NR > 1 && $2 > 0 {
      d = 0; n = 0
      for (k = 0; k < 3; k++) { a = $(9 + k); b = $(12 + k); d += (a - b) ^ 2; n += b ^ 2 }
      e = sqrt(d / n); if (e > w) w = e }
    END { printf "%s: linear vs CalculiX linear, worst load step %.2e (bound %g)\n", part, w, bound; exit !(w <= bound) }' \
    "$tmp/${part}_static.csv" || fail=1
done
# co-rotational against CalculiX NLGEOM at full load (formulation difference, not discretization):
# lug 0.48%, hinge 0.09%, lug_o2 0.53% (at 19.9% strain, where CalculiX's neo-Hooke and St Venant-
# Kirchhoff laws part by 1.15%; 0.33% at the linear lug's displacement, half the load)
for pb in lug:0.01 hinge:0.003 lug_o2:0.015; do
  part=${pb%%:*} bound=${pb#*:}
  awk -F, -v part="$part" -v bound="$bound" 'NR > 1 { for (k = 0; k < 6; k++) v[k] = $(3 + k) }
    END { d = 0; n = 0
      for (k = 0; k < 3; k++) { d += (v[3 + k] - v[k]) ^ 2; n += v[k] ^ 2 }
      e = sqrt(d / n); printf "%s: co-rotational vs CalculiX NLGEOM at full load %.3f%% (bound %g%%)\n", part, 100 * e, 100 * bound
      exit !(e <= bound) }' "$tmp/${part}_static.csv" || fail=1
done
# modes 1-6, one-point mass (CalculiX's C3D4 rule) against ccx *FREQUENCY: the same discrete
# eigenproblem, measured 4e-7 at most (ccx prints 7 digits); the consistent mass lies at or below
# the one-point rule (M_consistent - M_one-point is positive semi-definite), and above the lumped
# one on these parts (lug 0.2-5.5%, hinge 0.1-3.2% measured): a model whose "consistent" mass is
# the lumped one fails here. lug_o2: the 4-point rule (CalculiX's C3D10 mass) 2e-7 from ccx, the
# exact consistent mass 1e-5 .. 5e-4 below it, HRZ 0.06-2.8% below that
for part in lug hinge lug_o2; do
  awk -F, -v part="$part" 'NR > 1 && $1 <= 6 {
      e = $4 / $2 - 1; if (e < 0) e = -e; if (e > w) w = e
      if ($3 > $4 * (1 + 1e-6)) bad = bad " consistent>one-point(mode " $1 ")"
      if ($3 < $5 * (1 + 1e-4)) bad = bad " consistent<=lumped(mode " $1 ")" }
    END { printf "%s: modes 1-6 one-point vs CalculiX worst %.1e (bound 2e-6)%s\n", part, w, bad
      exit !(w <= 2e-6 && bad == "") }' "$tmp/${part}_modes.csv" || fail=1
done
[ "$fail" -eq 0 ] || { echo "FAIL: a tightened accuracy bound"; exit 1; }
echo "ok: accuracy bounds met"
