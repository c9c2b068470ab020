#!/usr/bin/env bash
# Viewer, headless (Xvfb): removing the supports (key S) turns the lug into a free body.
#  - under gravity it falls as a rigid body, z = -g t (t + h) / 2 (backward Euler);
#  - with gravity off (key G) the same mouse drag as a supported pull moves it as a rigid body,
#    the picked point following the cursor, where the supported lug only deforms;
#  - the supports set again (key S) hold it where it is.
# Exits 77 without Xvfb or OpenGL.
set -u
. "$(dirname "$0")/../../viewer/test_env.sh"

cat >"$tmp/rigid.txt" <<'EOF'
frame 0 key L
key S
frame 24 report fall
# back to rest (supports on), supports off again, gravity off, pull the tip
frame 25 key R
key S
key G
frame 26 drag_start @probe
frame 27 drag_by 60 0
frame 60 report free_drag
frame 61 drag_end
# the same pull with the supports on
key R
frame 62 drag_start @probe
frame 63 drag_by 60 0
frame 96 report supp_drag
frame 97 drag_end
# free again, falling; the supports set again in mid-air hold it there
key R
key S
key G
frame 105 key S
frame 115 report held1
frame 135 report held2
quit
EOF
run_view rigid lug --script "$tmp/rigid.txt" --fixed-steps 2 --size 800x500 --samples 0
out=$tmp/rigid.out
check "viewer exits 0" "[ $(cat "$tmp/rigid.rc") -eq 0 ]"

# free fall
t=$(f "$out" fall t)
cu=$(f "$out" fall centroid_u)
zexp=$(calc "-9.81 * $t * ($t + 0.01) / 2")
echo "free fall: t = $t s, centroid moved $cu m (expected z $zexp m), rigid-fit rms $(f "$out" fall rigid_rms) m"
check "supports removed by key S" "[ '$(f "$out" fall supports)' = 0 ]"
check "falls by g t (t + h) / 2 within 0.5%" "cond '$(c "$cu" 3) < 0 && ($(c "$cu" 3) - $zexp)^2 < (0.005 * $zexp)^2'"
check "falls straight down (sideways < 10 um)" "cond '($(c "$cu" 1))^2 + ($(c "$cu" 2))^2 < 1e-10'"
check "falls as a rigid body (rms of the rigid fit < 1 um)" "cond '$(f "$out" fall rigid_rms) < 1e-6'"

# the same drag, free and supported
for lab in free_drag supp_drag; do
  pick0=$(f "$out" $lab pick0); pick=$(f "$out" $lab pick); target=$(f "$out" $lab target)
  eval "${lab}_D=$(vnorm "$(vsub "$target" "$pick0")")"
  eval "${lab}_gap=$(vnorm "$(vsub "$target" "$pick")")"
  eval "${lab}_cent=$(vnorm "$(f "$out" $lab centroid_u)")"
  eval "${lab}_rms=$(f "$out" $lab rigid_rms)"
  eval "${lab}_umax=$(f "$out" $lab u_max)"
  echo "$lab: supports $(f "$out" $lab supports), gravity $(f "$out" $lab gravity), drag $(eval echo \$${lab}_D) m," \
    "tip to cursor $(eval echo \$${lab}_gap) m, centroid moved $(eval echo \$${lab}_cent) m," \
    "u_max $(eval echo \$${lab}_umax) m, rigid-fit rms $(eval echo \$${lab}_rms) m, force $(f "$out" $lab fmag) N"
done
check "free: the picked point follows the cursor (within 10% of the drag)" "cond '$free_drag_gap < 0.1 * $free_drag_D'"
check "free: large motion (u_max $free_drag_umax m > the drag)" "cond '$free_drag_umax > $free_drag_D'"
check "free: moves as a rigid body (rigid-fit rms < 1e-3 u_max)" "cond '$free_drag_rms < 1e-3 * $free_drag_umax'"
check "free: the centroid moves ($free_drag_cent m)" "cond '$free_drag_cent > 0.002'"
check "supported: the tip stays further from the cursor ($supp_drag_gap m)" "cond '$supp_drag_gap > 3 * $free_drag_gap'"
check "supported: deforms (rigid-fit rms $supp_drag_rms m > 50 x free)" "cond '$supp_drag_rms > 50 * $free_drag_rms'"
# measured 0.58 (free 3.854 mm, supported 2.246 mm; the same with block Jacobi and the rotated
# Cholesky when the scene's PCG tol is 1e-11). The bound was 0.5 until 2026-11-26, set on block
# Jacobi at the scene's tol 1e-6, where the free lug moved 43 mm under a 14x larger drag force
# (0.098 N against 0.0068 N): the free drag's gain is capped by the point's compliance, solved
# at PCG tol 1e-4 (compute_compliance in viewer/app.c), which block Jacobi leaves far from its
# rigid-body part; the step itself agrees to 1e-4 (a free lug under 7 mN for 0.66 s, cofem run,
# block Jacobi at 1e-6 against 1e-11). The rotated Cholesky ("auto" for the lug) solves it exactly.
check "supported: the centroid moves less than free (ratio < 0.8)" "cond '$supp_drag_cent < 0.8 * $free_drag_cent'"
check "supported: far more force for the same drag" "cond '$(f "$out" supp_drag fmag) > 100 * $(f "$out" free_drag fmag)'"

# supports set again while falling
h1=$(f "$out" held1 centroid_u); h2=$(f "$out" held2 centroid_u)
echo "supports set again in mid-fall: centroid at $h1 then $h2"
check "supports set again by key S" "[ '$(f "$out" held1 supports)' = 1 ] && [ '$(f "$out" held2 gravity)' = 1 ]"
check "it had fallen before the supports were set (> 5 cm)" "cond '$(c "$h1" 3) < -0.05'"
check "the supports hold it there (moves < 0.1 mm in 0.4 s)" "cond '$(vnorm "$(vsub "$h2" "$h1")") < 1e-4'"
check "no step failed" "! grep -q 'step failed' '$tmp/rigid.err'"

echo "viewer rigid: $fail failed"
[ $fail -eq 0 ]
