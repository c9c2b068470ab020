#!/usr/bin/env bash
# `cofem info MECHANISM.json` (issue 29, item 1) prints the joint graph: checked on the double four-bar
# of paper 000 against the hand count (Table 1: 5 relative coordinates; 2 loops closed by the joints
# B1 and C1; planar Grubler 3 x 5 - 2 x 7 = 1; the crank, then two RRR dyads); and
# `cofem run` with "solver.formulation": "semi_recursive" on it (the energy line is printed, nothing
# fails), a bad formulation refused with a message naming the key; the four-bar's kinematic analysis by
# structural groups ("formulation": "structural_groups") writes the global analysis's channels (1e-6 in
# the CSV's 10 digits, measured 1.1e-8).
set -u
BIN=${COFEM_BIN:-build/cofem}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
out=$("$BIN" info scenes/mbs/double_fourbar.json 2>&1) || { echo "FAIL: cofem info exited $?"; echo "$out"; exit 1; }
echo "$out"
expect() { grep -qF -- "$1" <<<"$out" || { echo "FAIL: no line with: $1"; fail=1; }; }
expect "5 relative coordinates, 2 cut joints (10 closure equations)"
expect "cut joints: 'B1' (revolute, crank2-coupler1, 5 equations) 'C1' (revolute, crank3-coupler2, 5 equations)"
expect "planar 3 n - 2 (revolute + prismatic) - ... = 1"
expect "1. input      crank1"
expect "2. dyad RRR   crank2 coupler1"
expect "3. dyad RRR   crank3 coupler2"
# the semi-recursive formulation through the scene key
sed 's/"time": {"dt": 0.01, "end": 5.0}/"time": {"dt": 0.01, "end": 1.0}, "solver": {"formulation": "semi_recursive"}/' \
  scenes/mbs/double_fourbar.json > "$tmp/sr.json"
grep -q semi_recursive "$tmp/sr.json" || { echo "FAIL: could not make the scene"; exit 1; }
run=$("$BIN" run "$tmp/sr.json" --out "$tmp/out" --quiet 2>&1) || { echo "FAIL: cofem run semi_recursive exited $?"; echo "$run"; fail=1; }
grep -q "semi-recursive (relative coordinates)" <<<"$run" || { echo "FAIL: no semi-recursive header"; echo "$run"; fail=1; }
[ -s "$tmp/out/mbs.csv" ] || { echo "FAIL: no mbs.csv"; fail=1; }
sed 's/"semi_recursive"/"recursive"/' "$tmp/sr.json" > "$tmp/bad.json"
bad=$("$BIN" run "$tmp/bad.json" --out "$tmp/bad" 2>&1) && { echo "FAIL: a bad formulation ran"; fail=1; }
grep -q '"solver.formulation" = "recursive"' <<<"$bad" || { echo "FAIL: message: $bad"; fail=1; }
# the kinematic analysis by structural groups through the scene key: the same CSV as the global one
sed 's/"analysis": "kinematic"/"analysis": "kinematic", "formulation": "structural_groups"/' \
  scenes/mbs/fourbar_kinematic.json > "$tmp/groups.json"
grep -q structural_groups "$tmp/groups.json" || { echo "FAIL: could not make the groups scene"; exit 1; }
run=$("$BIN" run "$tmp/groups.json" --out "$tmp/groups" --quiet 2>&1) || { echo "FAIL: groups run exited $?"; echo "$run"; fail=1; }
grep -q "by structural groups" <<<"$run" || { echo "FAIL: no groups header"; echo "$run"; fail=1; }
"$BIN" run scenes/mbs/fourbar_kinematic.json --out "$tmp/global" --quiet >/dev/null 2>&1 || { echo "FAIL: global run"; fail=1; }
# columns from 10 on are the channels (angle, positions, velocities, accelerations): equal to 1e-6
awk -F, 'NR == FNR { for (i = 10; i <= NF; i++) a[FNR, i] = $i; next }
         FNR > 1 { for (i = 10; i <= NF; i++) { d = $i - a[FNR, i]; if (d < 0) d = -d; if (d > m) m = d } }
         END { printf "groups vs global kinematic analysis: largest channel difference %.3g\n", m; exit !(m < 1e-6) }' \
  "$tmp/global/mbs.csv" "$tmp/groups/mbs.csv" || { echo "FAIL: the groups' CSV differs from the global one"; fail=1; }
# combinations that make no sense are refused, naming the key
sed 's/"analysis": "kinematic"/"analysis": "kinematic", "formulation": "semi_recursive"/' \
  scenes/mbs/fourbar_kinematic.json > "$tmp/bad2.json"
bad=$("$BIN" run "$tmp/bad2.json" --out "$tmp/bad2" 2>&1) && { echo "FAIL: semi_recursive kinematics ran"; fail=1; }
grep -q 'runs dynamics only' <<<"$bad" || { echo "FAIL: message: $bad"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
