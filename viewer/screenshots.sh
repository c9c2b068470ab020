#!/usr/bin/env bash
# Regenerates the README's viewer screenshots (docs/img/viewer_*.png) with the viewer itself:
# scripted runs (viewer/script.h), 1280x800, 4x multisampling. Uses $DISPLAY, or a private Xvfb.
# Usage: viewer/screenshots.sh [BUILD_DIR (default build)] [OUT_DIR (default docs/img)]
set -euo pipefail
cd "$(dirname "$0")/.."
VIEW=${1:-build}/viewer/cofem_view
OUT=${2:-docs/img}
[ -x "$VIEW" ] || { echo "screenshots: $VIEW not built" >&2; exit 1; }
mkdir -p "$OUT"
tmp=$(mktemp -d)
if [ -z "${DISPLAY:-}" ]; then
  Xvfb -displayfd 3 -screen 0 1600x1200x24 -nolisten tcp 3>"$tmp/display" >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill $xvfb_pid 2>/dev/null; rm -rf "$tmp"' EXIT
  for _ in $(seq 100); do [ -s "$tmp/display" ] && break; sleep 0.1; done
  export DISPLAY=":$(head -1 "$tmp/display")"
else
  trap 'rm -rf "$tmp"' EXIT
fi
shot() { # NAME SCENE [options]: runs $tmp/NAME.txt
  local name=$1; shift
  "$VIEW" "$@" --script "$tmp/$name.txt" --size 1280x800 --samples 4 >/dev/null
}

# the lug pulled at its tip by the mouse (scene loads off), displacement colouring
cat >"$tmp/lug_pull.txt" <<EOT
frame 0 key L
frame 3 drag_start @probe
frame 4 drag_by 60 -45
frame 60 screenshot $OUT/viewer_lug_pull.png
quit
EOT
shot lug_pull lug --fixed-steps 2

# the same pull coloured by von Mises stress, with the element edges
cat >"$tmp/lug_stress.txt" <<EOT
frame 0 key L
key C
key W
frame 3 drag_start @probe
frame 4 drag_by 95 0
frame 60 screenshot $OUT/viewer_lug_stress.png
quit
EOT
shot lug_stress lug --fixed-steps 2

# supports removed while a corner of the flange is held: the lug swings down under gravity and
# follows the mouse as a rigid body (displacement colouring: the whole part has moved)
cat >"$tmp/lug_free.txt" <<EOT
frame 0 key L
scroll -3
frame 3 drag_start 805 520
frame 5 key S
frame 6 drag_by 0 -60
frame 20 drag_by -60 -140
frame 34 screenshot $OUT/viewer_lug_free.png
quit
EOT
shot lug_free lug --fixed-steps 2

# the hinge under its scene load, in real time: this machine cannot keep up, and says so
cat >"$tmp/hinge.txt" <<EOT
frame 36 screenshot $OUT/viewer_hinge.png
quit
EOT
shot hinge hinge --color stress --wireframe
# mechanisms (issue 14): the rigid door swinging on the corotational FE hinge, clamped at its
# bolt holes (the view panned to the pin and zoomed in; the door is the translucent box)
cat >"$tmp/door.txt" <<EOT
frame 0 press right 640 155
move 640 400
release right
scroll 16
frame 30 screenshot $OUT/viewer_mbs_door.png
quit
EOT
shot door scenes/mbs/door_on_fe_hinge.json --fixed-steps 2

# the chain of two FE lugs swinging under gravity, the upper one pulled by the mouse
cat >"$tmp/chain.txt" <<EOT
frame 2 drag_start @lug2/probe
frame 3 drag_by 120 -40
frame 30 screenshot $OUT/viewer_mbs_chain.png
quit
EOT
shot chain scenes/mbs/fe_chain.json --fixed-steps 1
ls -l "$OUT"/viewer_*.png
