#!/usr/bin/env bash
# Viewer, headless (Xvfb): a run the divergence monitor stops (issue 15). The lug pulled at 5 MN
# with the linearised Newmark step (dt 0.01 s) diverges at step 48 in `cofem run`; in the viewer
#  - stderr carries the library's message exactly as `cofem run` prints it (step, time, what
#    grew, what to try) and a 'stopped: diverged at step N' line;
#  - the part is reset to rest (t = 0, 0 steps, u = 0) and paused instead of drawing the last
#    state; the report line carries the message, the screenshot shows the part blue (at rest) with
#    the red headline and the message under it;
#  - P runs it again from rest (the note goes), and it diverges again at the same step.
# Exits 77 without Xvfb or OpenGL.
set -u
. "$(dirname "$0")/../../viewer/test_env.sh"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed (pixel statistics)"
SRC=$(cd "$VIEWER_DIR/.." && pwd)
case $BIN in /*) CLI=$BIN ;; *) CLI=$PWD/$BIN ;; esac
[ -x "$CLI" ] || { echo "FAIL: $CLI not built"; exit 1; }

cat >"$tmp/lug_newmark.json" <<EOF
{
  "description": "the lug pulled at 5 MN with the linearised Newmark step: the divergence monitor stops it",
  "mesh": "$SRC/meshes/lug.msh",
  "material": {"E": 210e9, "nu": 0.3, "rho": 7850},
  "fixed": [{"set": "support", "dofs": "xyz"}],
  "loads": [{"set": "load", "force": [5e6, 0, 0], "start": 0.0, "ramp": 0.3, "stop": 0.6}],
  "time": {"dt": 0.01, "end": 1.0, "integrator": "newmark"},
  "solver": {"tol": 1e-6, "max_iter": 2000, "warm_start": true, "backend": "cpu", "mass": "lumped"},
  "output": {"probes": ["probe"]}
}
EOF

# the CLI on the same scene: where it stops and what it says
(cd "$tmp" && OMP_THREAD_LIMIT=1 "$CLI" run lug_newmark.json --out cli --quiet >cli.out 2>cli.err)
cli_rc=$?
cli_msg=$(sed -n 's/^cofem: error: lug_newmark.json: \(.*\) (CF_ERR_DIVERGED)$/\1/p' "$tmp/cli.err")
cli_step=$(echo "$cli_msg" | sed -n 's/^step \([0-9]*\), .*/\1/p')
echo "cofem run: exit $cli_rc, stopped at step $cli_step: $cli_msg"
check "cofem run stops with exit 3 (the test's premise)" "[ $cli_rc -eq 3 ] && [ -n '$cli_step' ]"
[ -n "$cli_step" ] || { echo "viewer diverge: $fail failed"; exit 1; }

# 2 steps a frame: the step that diverges comes in frame (cli_step + 1) / 2
fd=$(((cli_step + 1) / 2))
cat >"$tmp/div.txt" <<EOF
frame $((fd - 4)) report before
screenshot $tmp/before.png
frame $((fd + 6)) report after
screenshot $tmp/after.png
frame $((fd + 7)) key P
frame $((fd + 12)) report resumed
frame $((2 * fd + 12)) report again
quit
EOF
run_view div "$tmp/lug_newmark.json" --script "$tmp/div.txt" --fixed-steps 2 --size 1000x600 --samples 0
# the same scene at rest (loads off), the same window: what the reset must look like
timeout 60 "$VIEW" "$tmp/lug_newmark.json" --no-loads --fixed-steps 1 --size 1000x600 --samples 0 --frames 2 \
  --screenshot "$tmp/rest.png" >"$tmp/rest.log" 2>&1
check "--screenshot at rest" "[ $? -eq 0 ] && [ -s '$tmp/rest.png' ]"
out=$tmp/div.out
err=$tmp/div.err
check "viewer exits 0" "[ $(cat "$tmp/div.rc") -eq 0 ]"

# the message: the library's, as the CLI prints it
view_msg=$(sed -n 's/^cofem_view: error: lug_newmark.json: \(.*\) (CF_ERR_DIVERGED)$/\1/p' "$err" | head -1)
echo "viewer stderr: $view_msg"
echo "viewer stderr: $(grep 'stopped:' "$err" | head -1)"
check "stderr: the same message as cofem run" "[ -n \"\$view_msg\" ] && [ \"\$view_msg\" = \"\$cli_msg\" ]"
check "it names the step and the time (step $cli_step, t = 0.$cli_step s)" \
  "grep -q \"^cofem_view: error: lug_newmark.json: step $cli_step, t = 0.$cli_step s: the dynamics diverged\" '$err'"
check "it names what grew and what to try" "grep -q 'grew to .* J' '$err' && grep -q 'try a smaller time step' '$err'"
check "stderr: 'stopped: diverged at step $cli_step', reset and paused" \
  "grep -q \"^cofem_view: stopped: diverged at step $cli_step (t = 0.$cli_step s); the part was reset to rest and paused\" '$err'"
check "no other step failure" "! grep -q 'step failed' '$err'"

# before: running, deformed; after: reset to rest, paused, the message in the report
for lab in before after resumed again; do
  echo "$lab: t $(f "$out" $lab t), steps $(f "$out" $lab steps), u_max $(f "$out" $lab u_max) m," \
    "paused $(f "$out" $lab paused), diverged $(f "$out" $lab diverged)"
done
check "before: running (steps $(f "$out" before steps), u_max $(f "$out" before u_max) m)" \
  "cond '$(f "$out" before steps) > 30 && $(f "$out" before steps) < $cli_step && $(f "$out" before u_max) > 1e-3' && [ '$(f "$out" before diverged)' = 0 ]"
check "after: reset to rest (t 0, 0 steps, u_max 0)" \
  "[ '$(f "$out" after steps)' = 0 ] && cond '$(f "$out" after t) == 0 && $(f "$out" after u_max) == 0'"
check "after: paused, one divergence counted" "[ '$(f "$out" after paused)' = 1 ] && [ '$(f "$out" after diverged)' = 1 ]"
check "after: the on-screen headline names the step" \
  "grep '^report label=after ' '$out' | grep -q 'warn=\"diverged at step $cli_step (t = 0.$cli_step s): reset to rest, paused \[P\]\"'"
check "after: the report carries the message" "grep '^report label=after ' '$out' | grep -qF \"diverge_msg=\\\"\$cli_msg\\\"\""
check "resumed with P: running from rest, the note gone" \
  "[ '$(f "$out" resumed paused)' = 0 ] && cond '$(f "$out" resumed steps) > 0 && $(f "$out" resumed steps) < 20' && grep '^report label=resumed ' '$out' | grep -q 'diverge_msg=\"\"'"
check "and it diverges again at the same step (counted twice, reset again)" \
  "[ '$(f "$out" again diverged)' = 2 ] && [ '$(f "$out" again steps)' = 0 ] && [ \$(grep -c '^cofem_view: stopped: diverged at step $cli_step ' '$err') = 2 ]"

# the screenshots: the part at rest is blue; before the divergence it is not; after the reset it
# is drawn as at rest (the same blue pixels below the text), with the red headline and the
# message's lines over the top of the scene. Part blue (45,54,137)-(57,68,172), lit faces.
box="0 170 850 540"
python3 "$VIEWER_DIR/pngstats.py" stats "$tmp/rest.png" stats "$tmp/before.png" \
  count "$tmp/rest.png" $box 51 61 155 25 count "$tmp/before.png" $box 51 61 155 25 count "$tmp/after.png" $box 51 61 155 25 \
  count "$tmp/after.png" 0 0 1000 200 255 77 77 40 count "$tmp/rest.png" 0 0 1000 200 255 77 77 40 \
  count "$tmp/after.png" 0 0 1000 200 255 217 217 12 count "$tmp/rest.png" 0 0 1000 200 255 217 217 12 >"$tmp/px.txt"
check "pixel statistics computed" "[ $? -eq 0 ]"
cat "$tmp/px.txt" | cut -c1-200
v() { grep "^$1 $2=" "$tmp/px.txt" | head -${3:-1} | tail -1 | cut -d= -f2; }
check "rest: blue (cool $(v rest cool_frac))" "cond '$(v rest cool_frac) > 0.8 && $(v rest warm_frac) < 0.02'"
check "before: coloured, not at rest (cool $(v before cool_frac), warm $(v before warm_frac))" \
  "cond '$(v before cool_frac) < 0.8 && $(v before warm_frac) > 0.05'"
check "after: the part's blue pixels as at rest ($(v after count) vs $(v rest count); before $(v before count))" \
  "cond '$(v rest count) > 20000 && ($(v after count) - $(v rest count))^2 < (0.01 * $(v rest count))^2 && $(v before count) < 0.5 * $(v rest count)'"
check "after: red headline drawn ($(v after count 2) red pixels, rest $(v rest count 2))" \
  "cond '$(v after count 2) > 200 && $(v rest count 2) < 20'"
check "after: the message's lines drawn ($(v after count 3) pink pixels, rest $(v rest count 3))" \
  "cond '$(v after count 3) > 1000 && $(v rest count 3) < 20'"
[ -n "${KEEP_SHOTS:-}" ] && cp "$tmp"/*.png "$KEEP_SHOTS"/

echo "viewer diverge: $fail failed"
[ $fail -eq 0 ]
