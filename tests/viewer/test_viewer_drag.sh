#!/usr/bin/env bash
# Viewer, headless (Xvfb): pick the lug's tip with the mouse and drag it 120 px to the right.
# The tip must move in the drag direction by a plausible amount: part of the way to the cursor,
# with the spring force k (cursor - tip), and where nonlinear statics (cofem static, the same
# force on the same node) puts it; released, it springs back. Exits 77 without Xvfb or OpenGL.
set -u
. "$(dirname "$0")/../../viewer/test_env.sh"

cat >"$tmp/drag.txt" <<'EOF'
# scene loads and gravity off: the mouse is the only load
frame 0 key L
key G
frame 3 drag_start @probe
report picked
frame 4 drag_by 60 0
frame 45 report hold
frame 46 drag_end
frame 86 report released
quit
EOF
run_view drag lug --script "$tmp/drag.txt" --fixed-steps 2 --size 800x500 --samples 0
out=$tmp/drag.out
check "viewer exits 0" "[ $(cat "$tmp/drag.rc") -eq 0 ]"
check "gravity and scene loads switched off by keys" "[ '$(f "$out" picked gravity)' = 0 ] && [ '$(f "$out" picked loads)' = 0 ]"

rest=$(f "$out" hold pick_rest)
pick0=$(f "$out" hold pick0)
pick=$(f "$out" hold pick)
target=$(f "$out" hold target)
force=$(f "$out" hold force)
k=$(f "$out" hold k_used)
echo "picked at $rest (rest), dragged towards $target; tip now $pick, force $force N, gain $k N/m"
check "the ray cast picked the tip (node set probe at (0, 0, 0.1))" \
  "cond '$(vnorm "$(vsub "$rest" "0,0,0.1")") < 1e-6'"

# drag direction in the world: from the picked point to the cursor's point in the view plane
dvec=$(vsub "$target" "$pick0")
D=$(vnorm "$dvec")
u=$(vsub "$pick" "$pick0")
along=$(calc "$(vdot "$u" "$dvec") / $D")
echo "drag ${D} m in the view plane, tip moved $(vnorm "$u") m, ${along} m along the drag"
check "60 px is a few cm at the tip (D = $D m)" "cond '$D > 0.01 && $D < 0.1'"
check "tip moved along the drag, visibly and not past the cursor (along = $along m)" \
  "cond '$along > 0.2 * $D && $along < $D && $(vnorm "$u") > 0.005'"
gap=$(vsub "$target" "$pick")
spring=$(awk -v g="$gap" -v k="$k" 'BEGIN { split(g, p, ","); printf "%.9g,%.9g,%.9g", k*p[1], k*p[2], k*p[3] }')
check "spring force = gain x (cursor - tip) within 2% ($spring vs $force)" \
  "cond '$(vnorm "$(vsub "$spring" "$force")") < 0.02 * $(vnorm "$force")'"
check "MN-level force on the steel lug ($(vnorm "$force") N)" "cond '$(vnorm "$force") > 2e5'"

# the same force, held, by nonlinear statics on the same node
cat >"$tmp/static.json" <<EOF
{
  "mesh": "$PWD/meshes/lug.msh",
  "material": {"E": 210e9, "nu": 0.3, "rho": 7850},
  "fixed": [{"set": "support", "dofs": "xyz"}],
  "loads": [{"set": "probe", "force": [$force], "start": 0.0, "ramp": 0.0, "stop": 1e9}],
  "static": {"increments": 8, "tol": 1e-8, "max_iter": 25, "tangent": "consistent"},
  "output": {"dir": "$tmp/static", "probes": ["probe"]}
}
EOF
"$BIN" static "$tmp/static.json" --out "$tmp/static" >"$tmp/static.log" 2>&1
check "cofem static runs" "[ $? -eq 0 ]"
us=$(tail -1 "$tmp/static/static.csv" | cut -d, -f3-5)
uv=$(f "$out" hold u_probe)
echo "tip displacement: viewer $uv, statics $us"
check "viewer tip displacement = statics under the same force within 1%" \
  "cond '$(vnorm "$(vsub "$uv" "$us")") < 0.01 * $(vnorm "$us")'"

check "released, the lug springs back (u_max = $(f "$out" released u_max) m)" "cond '$(f "$out" released u_max) < 1e-4'"
check "no step warnings" "[ '$(f "$out" released warn_steps)' = 0 ]"

echo "viewer drag: $fail failed"
[ $fail -eq 0 ]
