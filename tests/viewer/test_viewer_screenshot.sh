#!/usr/bin/env bash
# Viewer, headless (Xvfb): screenshots (--screenshot and the script's 'screenshot') show the part,
# lit and coloured: blue at rest, a colour range once pulled, other colours by stress, grey and
# shaded in plain mode, element edges in wireframe, and the part falling down the image once its
# supports are removed; the legend bar and the status text are drawn. Pixel statistics by
# viewer/pngstats.py. Exits 77 without Xvfb or OpenGL.
set -u
. "$(dirname "$0")/../../viewer/test_env.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed (pixel statistics)"

# 1. --screenshot at rest
timeout 60 "$VIEW" lug --no-loads --no-gravity --fixed-steps 1 --size 640x400 --samples 0 --frames 2 \
  --screenshot "$tmp/rest.png" >"$tmp/rest.log" 2>&1
check "--screenshot writes a PNG" "[ $? -eq 0 ] && [ -s '$tmp/rest.png' ]"

# 2. scripted: pull, colour modes, wireframe, then the supports removed and the part falling
cat >"$tmp/shots.txt" <<EOF
frame 0 key L
key G
frame 3 drag_start @probe
frame 4 drag_by 60 0
frame 40 screenshot $tmp/pulled.png
frame 41 key C
frame 42 screenshot $tmp/stress.png
frame 43 key C
frame 44 screenshot $tmp/plain.png
frame 45 key W
frame 46 screenshot $tmp/wire.png
frame 47 drag_end
key W
key R
key S
key G
screenshot $tmp/before.png
frame 51 screenshot $tmp/fallen.png
quit
EOF
run_view shots lug --script "$tmp/shots.txt" --fixed-steps 2 --size 640x400 --samples 0
check "scripted run exits 0" "[ $(cat "$tmp/shots.rc") -eq 0 ]"

python3 "$VIEWER_DIR/pngstats.py" stats "$tmp/rest.png" stats "$tmp/pulled.png" stats "$tmp/plain.png" \
  stats "$tmp/before.png" stats "$tmp/fallen.png" diff "$tmp/rest.png" "$tmp/pulled.png" \
  diff "$tmp/pulled.png" "$tmp/stress.png" diff "$tmp/plain.png" "$tmp/wire.png" >"$tmp/px.txt"
check "pixel statistics computed" "[ $? -eq 0 ]"
for s in rest pulled plain before fallen; do echo "$s: $(grep "^$s " "$tmp/px.txt" | cut -d' ' -f2 | tr '\n' ' ')"; done
v() { grep "^$1 $2=" "$tmp/px.txt" | cut -d= -f2; }

check "640 x 400 pixels" "[ '$(v rest width)' = 640 ] && [ '$(v rest height)' = 400 ]"
check "the part fills 5-60% of the scene ($(v rest part_frac))" "cond '$(v rest part_frac) > 0.05 && $(v rest part_frac) < 0.6'"
check "at rest it is blue (no displacement)" "cond '$(v rest cool_frac) > 0.8 && $(v rest warm_frac) < 0.02'"
check "status text drawn at the bottom ($(v rest status_bright) bright pixels)" "cond '$(v rest status_bright) > 500'"
lt=$(v rest legend_top); lb=$(v rest legend_bottom)
check "legend bar: red at the top ($lt), blue at the bottom ($lb)" \
  "cond '$(c "$lt" 1) > $(c "$lt" 3) + 80 && $(c "$lb" 3) > $(c "$lb" 1) + 80'"
check "pulled: colours across the range (warm $(v pulled warm_frac), cool $(v pulled cool_frac))" \
  "cond '$(v pulled warm_frac) > 0.03 && $(v pulled cool_frac) > 0.1'"
check "pulled differs from rest (mean |diff| $(v rest:pulled diff))" "cond '$(v rest:pulled diff) > 2'"
check "stress colouring differs from displacement colouring ($(v pulled:stress diff))" "cond '$(v pulled:stress diff) > 2'"
check "plain: grey (gray fraction $(v plain gray_frac))" "cond '$(v plain gray_frac) > 0.7'"
check "plain: lit, the shading varies (luminance std $(v plain lum_std))" "cond '$(v plain lum_std) > 8'"
check "wireframe draws the edges ($(v plain:wire diff))" "cond '$(v plain:wire diff) > 0.5'"
cx0=$(v before cx); cx1=$(v fallen cx); cy0=$(v before cy); cy1=$(v fallen cy)
check "supports removed, gravity on: the part falls down the image ($cy0 -> $cy1 px)" "cond '$cy1 > $cy0 + 30'"
check "straight down ($cx0 -> $cx1 px)" "cond '($cx1 - $cx0)^2 < 25^2'"
check "and it is still in view ($(v fallen part_frac))" "cond '$(v fallen part_frac) > 0.05'"

echo "viewer screenshot: $fail failed"
[ $fail -eq 0 ]
