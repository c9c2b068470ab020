#!/usr/bin/env bash
# Viewer, headless (Xvfb): the keys (pause, reset, gain, colouring, wireframe, help, gravity, loads,
# follow, scene switching, quit), the on-screen "slower than real time" warning when the steps per
# frame are capped, and the errors (bad script, missing scene, CUDA backend without a device).
# Exits 77 without Xvfb or OpenGL.
set -u
. "$(dirname "$0")/../../viewer/test_env.sh"

# 1. keys, one frame apart (one step per frame)
cat >"$tmp/keys.txt" <<'EOF2'
frame 1 report k0
frame 2 key P
frame 3 report p1
frame 6 report p2
frame 7 key SPACE
frame 9 report p3
frame 10 key +
frame 11 report g1
frame 12 key -
key -
frame 13 report g2
frame 14 key 0
frame 15 report g3
frame 16 key C
frame 17 report c1
frame 18 key C
frame 19 report c2
frame 20 key C
frame 21 report c3
frame 22 key W
key H
key G
key L
key F
frame 23 report t1
frame 24 key R
frame 25 report r1
frame 26 key N
frame 27 report n1
frame 28 key 1
frame 29 report n2
frame 30 report v0
# camera: orbit (left drag on the background), pan (right drag), zoom (wheel), reset (V)
frame 31 drag_start 20 250
frame 32 drag_by 100 -50
frame 33 drag_end
report v1
frame 34 press right 400 250
frame 35 move 450 250
frame 36 release right
report v2
frame 37 scroll 2
frame 38 report v3
frame 39 key V
frame 40 report v4
frame 41 key ESC
frame 50 report never
EOF2
run_view keys lug hinge --script "$tmp/keys.txt" --fixed-steps 1 --size 800x500 --samples 0
out=$tmp/keys.out
check "viewer exits 0" "[ $(cat "$tmp/keys.rc") -eq 0 ]"
check "defaults: lug, displacement colour, supports, gravity and loads on" \
  "[ '$(f "$out" k0 scene)' = lug_pull.json ] && [ '$(f "$out" k0 color)' = disp ] && [ '$(f "$out" k0 supports)$(f "$out" k0 gravity)$(f "$out" k0 loads)' = 111 ]"
check "P pauses: time stands ($(f "$out" p1 t) = $(f "$out" p2 t))" \
  "[ '$(f "$out" p1 paused)' = 1 ] && [ '$(f "$out" p1 t)' = '$(f "$out" p2 t)' ]"
check "space resumes" "[ '$(f "$out" p3 paused)' = 0 ] && cond '$(f "$out" p3 t) > $(f "$out" p2 t)'"
g0=$(f "$out" k0 gain)
check "+ doubles the gain ($g0 -> $(f "$out" g1 gain) N/m)" "cond '($(f "$out" g1 gain) / $g0 - 2)^2 < 1e-10'"
check "- - halves it from the start" "cond '($(f "$out" g2 gain) / $g0 - 0.5)^2 < 1e-10'"
check "0 restores the automatic gain" "[ '$(f "$out" g3 gain)' = '$g0' ]"
check "C cycles the colouring: stress, plain, displacement" \
  "[ '$(f "$out" c1 color) $(f "$out" c2 color) $(f "$out" c3 color)' = 'stress plain disp' ]"
check "W, H, G, L, F toggle wireframe, help, gravity, loads, follow" \
  "[ '$(f "$out" t1 wireframe)$(f "$out" t1 help)$(f "$out" t1 gravity)$(f "$out" t1 loads)$(f "$out" t1 follow)' = 11001 ]"
check "R resets to rest (t $(f "$out" r1 t), u_max $(f "$out" r1 u_max))" \
  "cond '$(f "$out" r1 t) < 0.025 && $(f "$out" r1 u_max) < 1e-6'"
check "N switches to the next scene ($(f "$out" n1 scene))" "[ '$(f "$out" n1 scene)' = hinge_pull.json ]"
check "1 switches back to the first ($(f "$out" n2 scene))" "[ '$(f "$out" n2 scene)' = lug_pull.json ]"
check "escape quits" "! grep -q 'label=never' '$out'"
cam0=$(f "$out" v0 cam); cam1=$(f "$out" v1 cam); cam3=$(f "$out" v3 cam)
echo "camera yaw,pitch[deg],distance[m]: $cam0 -> orbit $cam1 -> zoom $cam3 -> reset $(f "$out" v4 cam)"
check "left drag on the background orbits (yaw and pitch change, not the part)" \
  "cond '($(c "$cam1" 1) - $(c "$cam0" 1))^2 > 1 && ($(c "$cam1" 2) - $(c "$cam0" 2))^2 > 1' && [ '$(f "$out" v1 drag)' = 0 ]"
check "right drag pans (the target moves: $(f "$out" v1 cam_target) -> $(f "$out" v2 cam_target))" \
  "cond '$(vnorm "$(vsub "$(f "$out" v2 cam_target)" "$(f "$out" v1 cam_target)")") > 1e-3'"
check "the wheel zooms (distance x 0.81)" "cond '($(c "$cam3" 3) / $(c "$cam1" 3) - 0.81)^2 < 1e-8'"
check "V resets the view" "[ '$(f "$out" v4 cam)' = '$cam0' ]"

# 2. real time, at most one step per frame of >= 40 ms: the viewer says it is behind
cat >"$tmp/slow.txt" <<EOF2
frame 30 report slow
screenshot $tmp/slow.png
quit
EOF2
run_view slow lug --script "$tmp/slow.txt" --max-steps 1 --min-frame-ms 40 --size 800x500 --samples 0
out=$tmp/slow.out
warn=$(grep "^report label=slow " "$out" | sed 's/.* warn="\([^"]*\)".*/\1/')
rt=$(f "$out" slow rt)
echo "capped at one 10 ms step per 40 ms frame: rt = $rt, warning \"$warn\""
check "real-time ratio measured below 1 (x$rt)" "cond '$rt > 0.05 && $rt < 0.45'"
check "flagged behind, and the warning says 'slower than real time (x0.xx)'" \
  "[ '$(f "$out" slow behind)' = 1 ] && echo '$warn' | grep -qE '^slower than real time \(x0\.[0-9][0-9]\)$'"
if command -v python3 >/dev/null 2>&1; then
  n=$(python3 "$VIEWER_DIR/pngstats.py" count "$tmp/slow.png" 0 0 800 90 255 158 25 60 | cut -d= -f2)
  check "the warning is drawn in orange at the top ($n pixels)" "cond '$n > 100'"
fi

# 3. errors
printf 'frame 1 key S\nframe 2 drag_stat 10 10\n' >"$tmp/bad.txt"
"$VIEW" lug --script "$tmp/bad.txt" >"$tmp/bad.log" 2>&1
rc=$?
check "bad script: exit 2 naming the line ($(head -1 "$tmp/bad.log"))" \
  "[ $rc -eq 2 ] && grep -q 'bad.txt:2: unknown event \"drag_stat\"' '$tmp/bad.log'"
"$VIEW" no/such/scene.json --screenshot "$tmp/x.png" >"$tmp/missing.log" 2>&1
rc=$?
check "missing scene: exit 1 naming it ($(head -1 "$tmp/missing.log"))" \
  "[ $rc -eq 1 ] && grep -q 'no/such/scene.json' '$tmp/missing.log' && [ ! -e '$tmp/x.png' ]"
"$VIEW" --frobnicate >"$tmp/usage.log" 2>&1
rc=$?
check "unknown option: exit 2" "[ $rc -eq 2 ]"
timeout 120 "$VIEW" lug --backend cuda --fixed-steps 1 --frames 2 --size 400x300 --samples 0 \
  --screenshot "$tmp/cuda.png" >"$tmp/cuda.log" 2>&1
rc=$?
echo "--backend cuda: exit $rc: $(grep -v OpenGL "$tmp/cuda.log" | head -1)"
check "--backend cuda runs (device) or says why not (exit 1, 'cuda')" \
  "[ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -qi cuda '$tmp/cuda.log'; }"

echo "viewer keys: $fail failed"
[ $fail -eq 0 ]
