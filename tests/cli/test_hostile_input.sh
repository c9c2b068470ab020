#!/usr/bin/env bash
# Hostile input (issue 17): strict option values, special files refused before they are opened,
# a user's file never overwritten as a reduction cache, the output budget, duplicate and
# out-of-range scene values, and `cofem static` failures reported on stderr. Every case: the exit
# status, the message (on stderr) and what was (not) written. Sections 11-12: issue 31, classes 4
# (no key accepted where it means nothing) and 5 (errors that name the cause).
set -u
BIN=${COFEM_BIN:-build/cofem}
BUILD=${COFEM_BUILD:-build}
ROOT=$PWD
fail=0
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# expect NAME RC FRAGMENT -- command...: exit status RC, FRAGMENT in stderr, nothing on stdout
# when RC is 2 (usage)
expect() {
  local name=$1 want=$2 frag=$3
  shift 4
  n=$((n + 1))
  timeout 300 "$@" >"$tmp/out" 2>"$tmp/err" # generous: a loaded machine runs the statics cases 10x slower
  local rc=$?
  if [ $rc -ne "$want" ]; then bad "$name: exit $rc, want $want; stderr: $(head -c 300 "$tmp/err")"; return; fi
  if ! grep -qF -- "$frag" "$tmp/err"; then bad "$name: stderr lacks '$frag': $(head -c 400 "$tmp/err")"; return; fi
  echo "ok: $name: $(grep -F -- "$frag" "$tmp/err" | head -1 | cut -c1-160)"
}

LUG=$ROOT/meshes/lug.msh
MAT='"material": {"E": 210e9, "nu": 0.3, "rho": 7850}'
scene() { printf '{"mesh": "%s", %s, %s}' "$LUG" "$MAT" "$1" >"$tmp/$2"; }
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e5, 0, 0]}], "time": {"dt": 0.01, "end": 0.05}' ok.json
S=$tmp/ok.json

# ---- 1. strict option values ----------------------------------------------------------------
expect "run --steps 1e12" 2 "--steps wants an integer from 1 to" -- "$BIN" run "$S" --steps 1e12 --out "$tmp/o"
expect "run --steps abc" 2 "got 'abc'" -- "$BIN" run "$S" --steps abc --out "$tmp/o"
expect "run --steps 99999999999999999999" 2 "--steps wants an integer" -- "$BIN" run "$S" --steps 99999999999999999999 --out "$tmp/o"
expect "run --steps ' 5'" 2 "--steps wants an integer" -- "$BIN" run "$S" --steps " 5" --out "$tmp/o"
expect "run --steps 0" 2 "--steps wants an integer from 1" -- "$BIN" run "$S" --steps 0 --out "$tmp/o"
expect "run --end -5" 2 "--end wants a number" -- "$BIN" run "$S" --end -5 --out "$tmp/o"
expect "run --end nan" 2 "--end wants a number" -- "$BIN" run "$S" --end nan --out "$tmp/o"
expect "run --end inf" 2 "--end wants a number" -- "$BIN" run "$S" --end inf --out "$tmp/o"
expect "run --end 0.1s" 2 "got '0.1s'" -- "$BIN" run "$S" --end 0.1s --out "$tmp/o"
expect "run --precond x" 2 "--precond x: use block_jacobi, rotated_cholesky, amg or auto" -- "$BIN" run "$S" --precond x --out "$tmp/o"
expect "run --backend x" 2 "--backend x: use cpu, cuda or auto" -- "$BIN" run "$S" --backend x --out "$tmp/o"
expect "run --max-output -1" 2 "--max-output wants an integer from 0" -- "$BIN" run "$S" --max-output -1 --out "$tmp/o"
expect "run --steps (no value)" 2 "--steps wants a value" -- "$BIN" run "$S" --steps
expect "run --bogus" 2 "unknown option '--bogus'" -- "$BIN" run "$S" --bogus
expect "static --increments -3" 2 "--increments wants an integer from 1 to" -- "$BIN" static "$S" --increments -3 --out "$tmp/o"
expect "static --increments 2.5" 2 "got '2.5'" -- "$BIN" static "$S" --increments 2.5 --out "$tmp/o"
expect "static --tangent bogus" 2 "--tangent bogus: use consistent or KR" -- "$BIN" static "$S" --tangent bogus --out "$tmp/o"
expect "reduce --modes 5x" 2 "--modes wants an integer from 0 to 100000, got '5x'" -- "$BIN" reduce "$S" --modes 5x
expect "reduce --damping -1" 2 "--damping wants a number from 0" -- "$BIN" reduce "$S" --damping -1
expect "accuracy --cases lug,bogus" 2 "no case 'bogus'; the cases are lug, hinge" -- "$BIN" accuracy --cases lug,bogus
expect "info with two meshes" 2 "usage" -- "$BIN" info "$LUG" "$LUG"
[ -e "$tmp/o" ] && bad "a refused option left $tmp/o behind"
for b in cofem_bench:--steps:1e3 cofem_soak:--steps:abc cofem_soak:--fmax:-1 cofem_bench_modal:--dt:0 \
         cofem_bench_mbs:--repeat:0 cofem_bench:--backend:gpu cofem_bench:--threads:2x; do
  IFS=: read -r prog opt val <<<"$b"
  [ -x "$BUILD/perf/$prog" ] || continue
  expect "$prog $opt $val" 2 "$opt" -- "$BUILD/perf/$prog" "$opt" "$val"
done
if [ -x "$BUILD/viewer/cofem_view" ]; then # the options are checked before any window opens
  for c in "--gain:x:--gain wants a number" "--gain:0:--gain wants a number" "--max-steps:0:--max-steps wants an integer" \
           "--fixed-steps:1.5:--fixed-steps wants an integer" "--budget-ms:-4:--budget-ms wants a number" \
           "--frames:abc:--frames wants an integer" "--max-frames:1e99:--max-frames wants an integer" \
           "--size:100x100junk:--size height wants an integer" "--size:huge:--size wants WxH" \
           "--color:red:--color red: use disp, stress or plain" "--backend:gpu:--backend gpu: use cpu, cuda or auto" \
           "--samples:-1:--samples wants an integer"; do
    IFS=: read -r opt val frag <<<"$c"
    expect "cofem_view $opt $val" 2 "$frag" -- "$BUILD/viewer/cofem_view" "$opt" "$val"
  done
fi

# ---- 2. special files are refused before they are opened --------------------------------------
mkfifo "$tmp/fifo.msh" "$tmp/fifo.json"
ln -s /dev/zero "$tmp/zero.msh"
ln -s /dev/zero "$tmp/zero.json"
mkdir "$tmp/dir.msh" "$tmp/dir.json"
for f in fifo zero dir; do
  k=$([ $f = fifo ] && echo "a FIFO" || ([ $f = zero ] && echo "a character device" || echo "a directory"))
  expect "info $f.msh" 1 "$tmp/$f.msh: not a regular file but $k" -- "$BIN" info "$tmp/$f.msh"
  expect "run $f.json" 1 "$tmp/$f.json: cannot read the scene file (not a regular file but $k)" -- "$BIN" run "$tmp/$f.json" --out "$tmp/o"
  expect "static $f.json" 1 "not a regular file but $k" -- "$BIN" static "$tmp/$f.json" --out "$tmp/o"
  printf '{"mesh": "%s", %s}' "$tmp/$f.msh" "$MAT" >"$tmp/mesh_$f.json"
  expect "run a scene whose mesh is $f" 1 "mesh: $tmp/$f.msh: not a regular file but $k" -- "$BIN" run "$tmp/mesh_$f.json" --out "$tmp/o"
done
expect "run /dev/zero" 1 "/dev/zero: cannot read the scene file (not a regular file but a character device)" -- "$BIN" run /dev/zero
[ -e "$tmp/o" ] && bad "a refused file left $tmp/o behind"

# ---- 3. a reduction cache path that is not a reduction file is never overwritten --------------
cp "$S" "$tmp/precious.json"
sum=$(md5sum <"$tmp/precious.json")
expect "reduce --out onto a scene file" 1 "$tmp/precious.json: exists and is not a cofem reduction file" -- \
  "$BIN" reduce "$S" --modes 2 --quiet --out "$tmp/precious.json"
[ "$(md5sum <"$tmp/precious.json")" = "$sum" ] || bad "reduce --out overwrote a user's file"
# a mechanism's flexible body whose "reduction" names a user's file: refused before the reduction
sed -e 's|"\.\./lug_pull.json"|"'"$ROOT"'/scenes/lug_pull.json"|' -e 's|"\.\./\.\./out/flexible_lug.cfred"|"'"$tmp"'/precious.json"|' \
  scenes/mbs/flexible_lug.json >"$tmp/mech.json"
expect "mechanism cache onto a scene file" 1 "lug_pull.json: reduction cache $tmp/precious.json: exists and is not a cofem reduction file" -- \
  "$BIN" run "$tmp/mech.json" --steps 2 --out "$tmp/mo"
[ "$(md5sum <"$tmp/precious.json")" = "$sum" ] || bad "a flexible body's cache overwrote a user's file"
expect "reduce --out onto a FIFO" 1 "not a regular file but a FIFO" -- "$BIN" reduce "$S" --modes 2 --quiet --out "$tmp/fifo.json"
timeout 60 "$BIN" reduce "$S" --modes 2 --quiet --out "$tmp/good.cfred" >/dev/null 2>&1 || bad "reduce --out to a new file failed"
timeout 60 "$BIN" reduce "$S" --modes 3 --quiet --out "$tmp/good.cfred" >/dev/null 2>&1 || bad "reduce --out over a reduction file failed"

# ---- 4. the output budget ----------------------------------------------------------------------
scene '"fixed": [{"set": "support"}], "time": {"dt": 0.01, "end": 1e12}, "output": {"vtu_every": 1}' long.json
expect "run time.end 1e12" 1 "more than the output budget of 2.0 GB" -- "$BIN" run "$tmp/long.json" --out "$tmp/o"
expect "run --end 1e10" 1 "raise it with --max-output BYTES" -- "$BIN" run "$S" --end 1e10 --out "$tmp/o"
expect "run --steps 1e9 (CSV alone)" 1 "more than the output budget" -- "$BIN" run "$S" --steps 1000000000 --out "$tmp/o"
expect "run over --max-output 100" 1 "more than the output budget of 100 bytes" -- "$BIN" run "$S" --max-output 100 --out "$tmp/o"
# a mechanism scene: the same options, parsed as strictly, and the same budget (CSV rows, flexible bodies' frames)
M=$ROOT/scenes/mbs/pendulum.json
expect "mechanism run --steps abc" 2 "--steps wants an integer" -- "$BIN" run "$M" --steps abc --out "$tmp/m"
expect "mechanism run --backend gpu" 2 "--backend gpu: use cpu, cuda or auto" -- "$BIN" run "$M" --backend gpu --out "$tmp/m"
expect "mechanism run over --max-output 100" 1 "more than the output budget of 100 bytes" -- "$BIN" run "$M" --max-output 100 --out "$tmp/m"
[ -e "$tmp/m" ] && bad "mechanism run over budget: $tmp/m was created"
[ -e "$tmp/o" ] && bad "a run refused for its output left $tmp/o behind"
# the estimate bounds what is written
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e6, 0, 0]}], "time": {"dt": 0.01, "end": 0.04}, "output": {"vtu_every": 2, "probes": ["probe", "load"]}' frames.json
timeout 60 "$BIN" run "$tmp/frames.json" --out "$tmp/fr" >"$tmp/out" 2>&1 || bad "run with frames failed: $(tail -2 "$tmp/out")"
est=$(sed -n 's/.*output: at most about \([0-9.]*\) kB.*/\1/p' "$tmp/out")
got=$(du -sb "$tmp/fr" | cut -f1)
n=$((n + 1))
if [ -z "$est" ] || ! awk -v e="$est" -v g="$got" 'BEGIN{exit !(g <= e * 1000 && g > e * 1000 / 4)}'; then
  bad "output estimate '$est kB' against $got bytes written"
else echo "ok: output estimate $est kB bounds the $got bytes written"; fi
timeout 60 "$BIN" run "$tmp/frames.json" --out "$tmp/fr2" --max-output 100000000 >/dev/null 2>&1 || bad "--max-output raising the budget failed"
# no room: a folder on a file system with less free space than the run needs
if [ -w /dev/shm ] && df -B1 --output=avail /dev/shm >/dev/null 2>&1; then
  avail=$(df -B1 --output=avail /dev/shm | tail -1)
  if [ "$avail" -lt 50000000000 ]; then
    expect "run into a too-small file system" 1 "are free there" -- "$BIN" run "$tmp/long.json" --end 1 --max-output 9000000000000000000 --steps 100000000 --out /dev/shm/cofem_hostile_$$
    rm -rf /dev/shm/cofem_hostile_$$
  fi
fi

# ---- 5. scene values ---------------------------------------------------------------------------
printf '{"mesh": "%s", "material": {"E": 1, "nu": 0.3, "rho": 1}, %s}' "$LUG" "$MAT" >"$tmp/dup.json"
expect "duplicate material" 1 "duplicate key \"material\"" -- "$BIN" run "$tmp/dup.json" --out "$tmp/o"
scene '"fixed": [{"set": "support", "dofs": "x", "dofs": "xyz"}]' dup2.json
expect "duplicate fixed[0].dofs" 1 "duplicate key \"fixed[0].dofs\"" -- "$BIN" static "$tmp/dup2.json" --out "$tmp/o"
scene '"solver": {"tol": 1e-6, "tol": 1e-3}' dup3.json
expect "duplicate solver.tol" 1 "duplicate key \"solver.tol\"" -- "$BIN" run "$tmp/dup3.json" --out "$tmp/o"
# a typo in a nested key is an error naming it, not a silent default (issue 13)
scene '"solver": {"preconditoner": "rotated_cholesky"}' typo.json
expect "typo solver.preconditoner" 1 "unknown key \"solver.preconditoner\"" -- "$BIN" run "$tmp/typo.json" --out "$tmp/o"
scene '"loads": [{"set": "load", "force": [1, 0, 0], "rmap": 0.3}]' typo2.json
expect "typo loads[0].rmap" 1 "unknown key \"loads[0].rmap\"" -- "$BIN" run "$tmp/typo2.json" --out "$tmp/o"
scene '"solver": {"threads": 100000}' thr.json
expect "solver.threads 100000" 1 "\"solver.threads\" must be an integer from 0 to" -- "$BIN" run "$tmp/thr.json" --out "$tmp/o"
scene '"solver": {"threads": -2}' thr2.json
expect "solver.threads -2" 1 "\"solver.threads\" must be an integer from 0 to" -- "$BIN" run "$tmp/thr2.json" --out "$tmp/o"
scene '"output": {"vtu_every": -3}' vtu.json
expect "output.vtu_every -3" 1 "\"output.vtu_every\" must be an integer from 0 to" -- "$BIN" run "$tmp/vtu.json" --out "$tmp/o"
[ -e "$tmp/o" ] && bad "a refused scene left $tmp/o behind"

# ---- 6. statics: unsupported parts named before solving; a stopped run said on stderr ------------
scene '"loads": [{"set": "load", "force": [1e5, 0, 0]}]' free.json
expect "static without supports" 1 "translation along x, translation along y, translation along z, rotation about x, rotation about y, rotation about z are not held" -- "$BIN" static "$tmp/free.json" --out "$tmp/o"
scene '"fixed": [{"set": "support", "dofs": "yz"}], "loads": [{"set": "load", "force": [1e5, 0, 0]}]' slide.json
expect "static held in y and z only" 1 "translation along x is not held" -- "$BIN" static "$tmp/slide.json" --out "$tmp/o"
[ -e "$tmp/o/static.csv" ] && bad "an unsupported static run left static.csv"
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [5e8, 0, 0]}], "static": {"increments": 2, "max_iter": 2, "max_cuts": 1}' stall.json
expect "static that does not converge" 1 "static solution stopped at load factor 0 of 1" -- "$BIN" static "$tmp/stall.json" --out "$tmp/st"
grep -q "holds only the rest state" "$tmp/err" || bad "static stop: stderr does not say what static.csv holds"
grep -q "^done" "$tmp/out" && bad "static stop: a 'done' line on stdout"
[ "$(wc -l <"$tmp/st/static.csv" 2>/dev/null)" = 2 ] || bad "static stop: static.csv is not the header and the rest state"
# the cantilever with the K_R tangent converges the first quarter of the load, not the second
sed -e 's|"increments": 20, "tol": 1e-8, "max_iter": 25|"increments": 4, "tol": 1e-8, "max_iter": 25, "max_cuts": 0|' \
    -e 's|"\.\./\.\./meshes/|"'"$ROOT"'/meshes/|' scenes/accuracy/cantilever.json >"$tmp/quarter.json"
expect "static stopping after an increment" 1 "static solution stopped at load factor 0.25 of 1" -- "$BIN" static "$tmp/quarter.json" --tangent KR --out "$tmp/st2"
grep -q "holds the rest state and the 1 converged increment up to load factor 0.25" "$tmp/err" || bad "static stop: stderr does not say what static.csv holds: $(cat "$tmp/err")"
grep -q "^done" "$tmp/out" && bad "static stop: a 'done' line on stdout"
[ "$(wc -l <"$tmp/st2/static.csv" 2>/dev/null)" = 3 ] || bad "static stop: static.csv is not the header, the rest state and one increment"

# ---- 7. outputs on error and re-runs (issue 17, round two) ----------------------------------------
# a small tetrahedral box as .inp (tests/data/gen_box_inp.py): coordinates scaled, flattened, an orphan node
GEN=$ROOT/tests/data/gen_box_inp.py
python3 "$GEN" 4 2 2 1 0.2 0.2 >"$tmp/box.inp"
python3 "$GEN" 4 2 2 1e306 2e305 2e305 >"$tmp/big.inp"
python3 "$GEN" 4 2 2 1 0.2 2e-10 >"$tmp/flat.inp"
python3 "$GEN" 4 2 2 1 0.2 0.2 orphan >"$tmp/orphan.inp"
box() { printf '{"mesh": "%s", %s, "fixed": [{"set": "fixed"}], "loads": [{"set": "load", "force": [0, 0, -1e3]}], "time": {"dt": 0.01, "end": 0.03}%s}' "$tmp/$1.inp" "$MAT" "${3:-}" >"$tmp/$2"; }
box big big.json; box flat flat.json; box orphan orphan.json
expect "info: coordinates of 1e306" 1 "coordinates (2.5e+305, 0, 0) of node 2 are beyond 1e+100" -- "$BIN" info "$tmp/big.inp"
grep -q "nan\|limit inf" "$tmp/err" && bad "coordinates of 1e306: the message still says nan or inf: $(cat "$tmp/err")"
expect "info: a part flattened to 2e-10" 1 "96 degenerate elements: positive volume, but below 1e-08 of the longest edge cubed" -- "$BIN" info "$tmp/flat.inp"
grep -q "zero or negative volume" "$tmp/err" && bad "a flat part is still called zero or negative volume"
grep -q "element 1 (volume 4.17e-13" "$tmp/err" || bad "a flat part: the volume is not printed: $(cat "$tmp/err")"
for c in "info $tmp/orphan.inp" "run $tmp/orphan.json --out $tmp/o" "static $tmp/orphan.json --out $tmp/o"; do
  # shellcheck disable=SC2086
  expect "orphan node: ${c%% *}" 1 "1 node in no tetrahedron (node 46)" -- "$BIN" $c
done
[ -e "$tmp/o" ] && bad "a refused mesh left $tmp/o behind"
# statics that fail before any increment leave no folder
scene '"loads": [{"set": "load", "force": [1e5, 0, 0]}]' free2.json
expect "static without supports leaves no folder" 1 "are not held" -- "$BIN" static "$tmp/free2.json" --out "$tmp/o/deep/er"
[ -e "$tmp/o" ] && bad "static without supports left $tmp/o behind"
# mechanisms: overflowing scales name the scene and the body, nothing is left behind
sed 's/"gravity": \[0, -9.81, 0\]/"gravity": [0, -1e300, 0]/' "$M" >"$tmp/g300.json"
expect "mechanism gravity 1e300" 1 "g300.json: step 1 (t = 0.001 s): the Newton iteration overflowed" -- "$BIN" run "$tmp/g300.json" --out "$tmp/m"
grep -q "largest applied force 1e+300 on body 'bar'" "$tmp/err" || bad "gravity 1e300: the body is not named: $(cat "$tmp/err")"
sed 's/"position": \[0, 0, 0\]/"position": [0, 0, 0], "omega": [0, 0, 1e200]/' "$M" >"$tmp/w200.json"
expect "mechanism omega 1e200" 1 "w200.json: initial accelerations: the constraints' velocity terms are not finite" -- "$BIN" run "$tmp/w200.json" --out "$tmp/m"
grep -q "largest coordinate velocity 8.66e+199 of body 'bar'" "$tmp/err" || bad "omega 1e200: the body is not named: $(cat "$tmp/err")"
python3 - "$M" "$tmp/drv.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["drivers"] = [{"name": "spin", "type": "angle", "joint": "hinge", "function": {"type": "poly", "coeffs": [0, 0, 1e200]}}]
json.dump(s, open(sys.argv[2], "w"))
PY
expect "mechanism: an impossible driver" 1 "drv.json: driver 'spin' moves" -- "$BIN" run "$tmp/drv.json" --out "$tmp/m"
grep -q "driver 'spin'" "$tmp/err" || bad "impossible driver: the driver is not named: $(cat "$tmp/err")"
expect "mechanism statics: gravity 1e300" 1 "g300.json" -- "$BIN" static "$tmp/g300.json" --out "$tmp/m"
[ -e "$tmp/m" ] && bad "a failed mechanism run left $tmp/m behind"
# modes: validated before any reduction or cache
sed -e 's|"\.\./lug_pull.json"|"'"$ROOT"'/scenes/lug_pull.json"|' -e 's|"\.\./\.\./out/flexible_lug.cfred"|"'"$tmp"'/m5000.cfred"|' \
    -e 's/"modes": 6/"modes": 5000/' scenes/mbs/flexible_lug.json >"$tmp/m5000.json"
expect "flexible body modes 5000" 1 "\"modes\" must be an integer from 0 to 240" -- "$BIN" run "$tmp/m5000.json" --steps 2 --out "$tmp/m"
sed 's/"modes": 5000/"modes": 200/' "$tmp/m5000.json" >"$tmp/m200.json"
expect "flexible body: 57 interface nodes + 200 modes" 1 "the reduction would have 251 modes (57 constraint modes of 19 interface nodes, 200 normal modes, less 6 rigid), a modal body takes at most 240" -- "$BIN" run "$tmp/m200.json" --steps 2 --out "$tmp/m"
[ -e "$tmp/m5000.cfred" ] && bad "modes out of range: a cache was written"
[ -e "$tmp/m" ] && bad "modes out of range: $tmp/m was created"
# re-running into the same folder: the previous run's frames go, a file cofem did not write stops the run
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e5, 0, 0]}], "time": {"dt": 0.001, "end": 0.01}, "output": {"vtu_every": 2}' rerun.json
timeout 60 "$BIN" run "$tmp/rerun.json" --out "$tmp/rr" --quiet >/dev/null 2>&1 || bad "re-run: the first run failed"
echo "mine" >"$tmp/rr/notes.txt"
timeout 60 "$BIN" run "$tmp/rerun.json" --out "$tmp/rr" --quiet --steps 4 >"$tmp/out" 2>&1 || bad "re-run: the second run failed"
n=$((n + 1))
if [ "$(ls "$tmp/rr/frames")" = "$(printf 'frame_000002.vtu\nframe_000004.vtu')" ] && grep -q "removed 7 files of a previous run" "$tmp/out" &&
   [ "$(grep -c DataSet "$tmp/rr/result.pvd")" = 2 ] && [ "$(cat "$tmp/rr/notes.txt")" = mine ]; then
  echo "ok: re-run: the previous run's 5 frames, its .pvd and CSV removed, 2 frames left, notes.txt kept"
else bad "re-run: frames $(ls "$tmp/rr/frames" | tr '\n' ' '); $(grep removed "$tmp/out")"; fi
cp "$S" "$tmp/rr/frames/frame_000006.vtu"
sum=$(md5sum <"$tmp/rr/frames/frame_000006.vtu")
expect "re-run over a frame cofem did not write" 1 "frames/frame_000006.vtu: has the name of a file this run writes, but cofem did not write it" -- \
  "$BIN" run "$tmp/rerun.json" --out "$tmp/rr" --quiet --steps 4
[ "$(md5sum <"$tmp/rr/frames/frame_000006.vtu")" = "$sum" ] || bad "re-run: a user's file named like a frame was changed"
[ -e "$tmp/rr/frames/frame_000002.vtu" ] || bad "re-run refused: the previous run's frames were removed all the same"
ln -s "$tmp/rr/notes.txt" "$tmp/rr/probes.csv.link"; rm -f "$tmp/rr/frames/frame_000006.vtu"; rm "$tmp/rr/probes.csv"; ln -s "$tmp/rr/notes.txt" "$tmp/rr/probes.csv"
expect "re-run over a symbolic link named probes.csv" 1 "probes.csv: has the name of a file this run writes, but cofem did not write it" -- \
  "$BIN" run "$tmp/rerun.json" --out "$tmp/rr" --quiet --steps 4
[ "$(cat "$tmp/rr/notes.txt")" = mine ] || bad "re-run: the file behind a link was changed"

# ---- 8. the reduction cache: checksum and contents -------------------------------------------------
sed -e 's|"\.\./lug_pull.json"|"'"$ROOT"'/scenes/lug_pull.json"|' -e 's|"\.\./\.\./out/flexible_lug.cfred"|"'"$tmp"'/lug.cfred"|' \
  scenes/mbs/flexible_lug.json >"$tmp/flex.json"
timeout 120 "$BIN" run "$tmp/flex.json" --steps 2 --out "$tmp/fl" --quiet >/dev/null 2>&1 || bad "flexible lug: the first run failed"
cp "$tmp/lug.cfred" "$tmp/lug_good.cfred"
edit() { python3 "$ROOT/tests/data/edit_cfred.py" "$tmp/lug.cfred" "$@"; }
for c in "Kr:1e8:checksum mismatch" "Kr:-1:checksum mismatch" "omega2:1e8:checksum mismatch" "omega2:-1:checksum mismatch" \
         "Kr:1e8:resum:the stiffness does not match the frequencies" "omega2:-1:resum:has a negative stiffness" \
         "Mr:2:resum:but the basis is orthonormal (M_r = I)"; do
  cp "$tmp/lug_good.cfred" "$tmp/lug.cfred"
  IFS=: read -r fld fac a3 a4 <<<"$c"
  if [ "$a3" = resum ]; then edit "$fld" "$fac" resum; frag=$a4; else edit "$fld" "$fac"; frag=$a3; fi
  sum=$(md5sum <"$tmp/lug.cfred")
  expect "cache: $fld x $fac${a4:+ (checksum recomputed)}" 1 "flex.json: \"bodies\"[0] ('lug') \"flexible\": $ROOT/scenes/lug_pull.json: reduction cache $tmp/lug.cfred: " -- \
    "$BIN" run "$tmp/flex.json" --steps 2 --out "$tmp/fl2"
  grep -qF -- "$frag" "$tmp/err" || bad "cache: $fld x $fac: stderr lacks '$frag': $(cat "$tmp/err")"
  [ "$(md5sum <"$tmp/lug.cfred")" = "$sum" ] || bad "cache: $fld x $fac: the refused cache was rewritten"
done
[ -e "$tmp/fl2" ] && bad "a refused cache left $tmp/fl2 behind"
cp "$tmp/lug_good.cfred" "$tmp/lug.cfred"
edit version 1   # a version-1 file (no checksum): ours, recomputed and rewritten
timeout 120 "$BIN" run "$tmp/flex.json" --steps 2 --out "$tmp/fl3" >"$tmp/out" 2>&1 || bad "cache of version 1: the run failed: $(tail -2 "$tmp/out")"
n=$((n + 1))
if grep -q "reduction computed" "$tmp/out" && cmp -s "$tmp/lug.cfred" "$tmp/lug_good.cfred"; then echo "ok: a version-1 cache is recomputed and rewritten"
else bad "a version-1 cache: $(grep reduction "$tmp/out")"; fi

# ---- 9. multibody: projections that do not converge are counted and reported ----------------------
python3 - "$M" "$tmp/proj.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["solver"] = {"proj_iter": 1, "tol_phi": 1e-13}
json.dump(s, open(sys.argv[2], "w"))
PY
expect "mechanism: projections not converged" 0 "projections not converged within solver.proj_iter = 1 iterations: velocity 200 times, acceleration 200 times" -- \
  "$BIN" run "$tmp/proj.json" --steps 200 --out "$tmp/pj"
timeout 60 "$BIN" run "$M" --steps 200 --out "$tmp/pj" >"$tmp/out" 2>"$tmp/err"
n=$((n + 1))
if grep -q "warnings: 0 velocity and 0 acceleration projections not converged" "$tmp/out" && ! grep -q "warning" "$tmp/err"; then
  echo "ok: the default projections converge and say so"
else bad "default projections: $(grep warning "$tmp/out" "$tmp/err")"; fi

# ---- 10. .inp from gmsh (surface and line elements) and *INCLUDE ------------------------------------
G=$ROOT/tests/data/inp_gmsh
timeout 60 "$BIN" info "$G/box.inp" >"$tmp/out" 2>&1 || bad "gmsh's .inp export: $(cat "$tmp/out")"
n=$((n + 1))
if grep -q "note: skipped 30 surface and line elements (28 CPS3, 2 T3D2); their element sets are node sets" "$tmp/out" &&
   grep -q "node set support *12 nodes" "$tmp/out" && grep -q "element set solid *254 elements" "$tmp/out"; then
  echo "ok: gmsh's .inp: 28 CPS3 and 2 T3D2 skipped with a note, the physical surface 'support' a node set of 12 nodes"
else bad "gmsh's .inp: $(cat "$tmp/out")"; fi
printf '{"mesh": "%s", %s, "fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [0, 0, -1e4]}]}' "$G/model.inp" "$MAT" >"$tmp/gm.json"
timeout 120 "$BIN" static "$tmp/gm.json" --out "$tmp/gm" >"$tmp/out" 2>&1
n=$((n + 1))
if grep -q "^done" "$tmp/out" && grep -q "note: .*model.inp: skipped 30 surface and line elements" "$tmp/out"; then
  echo "ok: a deck that *INCLUDEs gmsh's mesh (mesh/box.inp, relative to it) solves, supported and loaded on its surfaces"
else bad "*INCLUDE deck: $(tail -3 "$tmp/out")"; fi
for i in 0 1 2 3 4 5 6 7 8 9; do printf '*INCLUDE, INPUT=d%d.inp\n' $((i + 1)) >"$tmp/d$i.inp"; done
cp "$G/box.inp" "$tmp/d10.inp"
expect "*INCLUDE ten deep" 1 "d8.inp:1: *INCLUDE, INPUT=d9.inp: files included more than 8 deep" -- "$BIN" info "$tmp/d0.inp"
printf '** a\n*INCLUDE, INPUT=sub/b.inp\n' >"$tmp/a.inp"; mkdir -p "$tmp/sub"; printf '*INCLUDE, INPUT=../a.inp\n' >"$tmp/sub/b.inp"
expect "*INCLUDE cycle" 1 "*INCLUDE cycle: $tmp/a.inp:2 includes $tmp/sub/b.inp:1 includes $tmp/sub/../a.inp" -- "$BIN" info "$tmp/a.inp"
printf '*INCLUDE, INPUT=/dev/zero\n' >"$tmp/z.inp"
expect "*INCLUDE of /dev/zero" 1 "z.inp:1: *INCLUDE, INPUT=/dev/zero: /dev/zero: not a regular file but a character device" -- "$BIN" info "$tmp/z.inp"
printf '*INCLUDE, INPUT=fifo.msh\n' >"$tmp/zf.inp"
expect "*INCLUDE of a FIFO" 1 "*INCLUDE, INPUT=fifo.msh" -- "$BIN" info "$tmp/zf.inp"
printf '*INCLUDE\n' >"$tmp/noin.inp"
expect "*INCLUDE without INPUT=" 1 "noin.inp:1: *INCLUDE without INPUT=" -- "$BIN" info "$tmp/noin.inp"

# ---- 11. no key accepted where it means nothing (issue 31, class 4) ---------------------------------
# keys of another formulation on a flexible body: refused naming the key and the formulation
sed -e 's|"\.\./lug_pull.json"|"'"$ROOT"'/scenes/lug_pull.json"|' -e 's|"\.\./\.\./out/flexible_lug.cfred"|"'"$tmp"'/k4.cfred"|' \
  scenes/mbs/flexible_lug.json >"$tmp/k4modal.json"
for kv in '"factor": "pcg"' '"backend": "cpu"' '"tol": 1e-9' '"preconditioner": "bogus"'; do
  k=${kv%%:*}
  sed 's/"modes": 6,/"modes": 6, '"$kv"',/' "$tmp/k4modal.json" >"$tmp/k4m.json"
  expect "modal body with $kv" 1 "$k goes with \"formulation\": \"corotational\"; this body is \"modal\"" -- "$BIN" run "$tmp/k4m.json" --steps 2 --out "$tmp/m"
done
[ -e "$tmp/k4.cfred" ] && bad "a modal body with a corotational key: the reduction ran"
sed -e 's|"\.\./lug_pull.json"|"'"$ROOT"'/scenes/lug_pull.json"|' scenes/mbs/lug_lumped.json >"$tmp/k4lump.json"
sed 's/"formulation": "lumped"/"formulation": "lumped", "reduction": "x.cfred"/' "$tmp/k4lump.json" >"$tmp/k4l.json"
expect "lumped body with \"reduction\"" 1 "\"reduction\" goes with \"formulation\": \"modal\"; this body is \"lumped\"" -- "$BIN" run "$tmp/k4l.json" --steps 2 --out "$tmp/m"
# the FE scene's own gravity and loads inside a mechanism: a warning that they are not used
expect "FE scene's gravity and loads in a mechanism" 0 "the FE scene $ROOT/scenes/lug_pull.json: its \"gravity\" and \"loads\" are not used in a mechanism; the mechanism's \"gravity\" acts on the body" -- \
  "$BIN" run "$tmp/k4lump.json" --steps 1 --out "$tmp/k4o"
# a joint's "point" beside a node set that does not agree with it: conflicting
sed 's|"node2": "load"|"node2": "load", "point": [0, 0, 0.1]|' "$tmp/k4lump.json" >"$tmp/k4p.json"
expect "joint point beside node2" 1 "\"joints\"[0] ('pin'): \"point\" [0, 0, 0.1] and \"node2\" conflict: the joint sits at the mean of node set 'load' of body2 'lug'" -- \
  "$BIN" run "$tmp/k4p.json" --steps 2 --out "$tmp/m"
# "supports": "clamp" on an FE scene without fixed sets
printf '{"mesh": "%s", %s}' "$LUG" "$MAT" >"$tmp/nofix.json"
sed 's|"\.\./lug_pull.json", "formulation": "corotational"|"'"$tmp"'/nofix.json", "formulation": "corotational", "supports": "clamp"|' \
  scenes/mbs/lug_corotational.json >"$tmp/k4c.json"
expect "clamp without fixed sets (corotational)" 1 "\"supports\": \"clamp\", but the FE scene $tmp/nofix.json has no \"fixed\" sets to clamp" -- \
  "$BIN" run "$tmp/k4c.json" --steps 2 --out "$tmp/m"
expect "reduce --clamp without fixed sets" 1 "nofix.json: clamped supports" -- "$BIN" reduce "$tmp/nofix.json" --clamp --modes 2 --quiet --out "$tmp/k4.cfred"
# a load that stops before it starts; generalized-alpha keys with other integrators; statics' ranges
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e5, 0, 0], "start": 0.2, "stop": 0.1}]' k4stop.json
expect "load stop before start" 1 "\"loads[0].stop\" = 0.1 is not after \"loads[0].start\" = 0.2" -- "$BIN" run "$tmp/k4stop.json" --out "$tmp/o"
scene '"fixed": [{"set": "support"}], "time": {"dt": 0.01, "end": 0.05, "rho_inf": 0.5}' k4rho.json
expect "rho_inf with backward Euler" 1 "\"time.rho_inf\" has no effect with \"time.integrator\": \"backward_euler\"" -- "$BIN" run "$tmp/k4rho.json" --out "$tmp/o"
scene '"fixed": [{"set": "support"}], "time": {"dt": 0.01, "end": 0.05, "integrator": "newmark"}, "solver": {"newton_max_iter": 5}' k4nw.json
expect "newton_max_iter with Newmark" 1 "\"solver.newton_max_iter\" has no effect with \"time.integrator\": \"newmark\"" -- "$BIN" run "$tmp/k4nw.json" --out "$tmp/o"
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e5, 0, 0]}], "static": {"max_cuts": -1}' k4cuts.json
expect "static.max_cuts -1" 1 "\"static.max_cuts\" must be an integer from 0 to 20" -- "$BIN" static "$tmp/k4cuts.json" --out "$tmp/o"
# options that do nothing on a mechanism, an empty interface name
expect "mechanism run --precond amg" 0 "--precond amg has no effect on a mechanism" -- "$BIN" run "$M" --steps 2 --precond amg --out "$tmp/k4o"
expect "mechanism run --cold" 0 "--cold has no effect on a mechanism" -- "$BIN" run "$M" --steps 2 --cold --out "$tmp/k4o"
expect "reduce --interface ''" 2 "--interface '': an empty node-set name" -- "$BIN" reduce "$S" --interface "" --modes 2 --quiet --out "$tmp/k4.cfred"
expect "reduce --interface 'load,'" 2 "--interface 'load,': an empty node-set name" -- "$BIN" reduce "$S" --interface "load," --modes 2 --quiet --out "$tmp/k4.cfred"
[ -e "$tmp/o" ] && bad "class 4: a refused FE scene left $tmp/o behind"
[ -e "$tmp/m" ] && bad "class 4: a refused mechanism left $tmp/m behind"
[ -e "$tmp/k4.cfred" ] && bad "class 4: a refused reduction wrote $tmp/k4.cfred"

# ---- 12. errors that name the cause (issue 31, class 5) ---------------------------------------------
# a tolerance below round-off: refused at parse, naming the key (was "constraints inconsistent" or a failed step)
python3 - "$M" "$tmp/k5phi.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["solver"] = {"tol_phi": 1e-30}
json.dump(s, open(sys.argv[2], "w"))
PY
expect "mechanism solver.tol_phi 1e-30" 1 "\"solver.tol_phi\" = 1e-30 is below round-off" -- "$BIN" run "$tmp/k5phi.json" --out "$tmp/m"
scene '"fixed": [{"set": "support"}], "solver": {"tol": 1e-20}' k5tol.json
expect "FE solver.tol 1e-20" 1 "\"solver.tol\" = 1e-20 is below round-off" -- "$BIN" run "$tmp/k5tol.json" --out "$tmp/o"
scene '"fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e5, 0, 0]}], "static": {"tol": 1e-18}' k5st.json
expect "FE static.tol 1e-18" 1 "\"static.tol\" = 1e-18 is below round-off" -- "$BIN" static "$tmp/k5st.json" --out "$tmp/o"
# a body 0.1 m off its joint: named with the distance before the run (was dragged into place)
python3 - "$ROOT/scenes/lug_pull.json" "$tmp/k5off.json" <<'PY'
import json, sys
fe = {"scene": sys.argv[1], "formulation": "lumped"}
s = {"gravity": [0, 0, -9.81],
     "bodies": [{"name": "lug", "flexible": fe}, {"name": "lug2", "flexible": fe, "position": [0.1, 0, 0]}],
     "joints": [{"name": "pin", "type": "revolute", "body1": "ground", "body2": "lug", "node2": "load", "axis": [0, 1, 0]},
                {"name": "link", "type": "spherical", "body1": "lug", "node1": "load", "body2": "lug2", "node2": "load"}],
     "time": {"dt": 0.01, "end": 0.05}}
json.dump(s, open(sys.argv[2], "w"))
PY
expect "FE body 0.1 m off its joint" 1 "\"joints\"[1] ('link'): body2 'lug2' is 0.1 m from the joint at t = 0" -- "$BIN" run "$tmp/k5off.json" --out "$tmp/m"
python3 - "$M" "$tmp/k5dist.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["joints"].append({"name": "rope", "type": "distance", "body1": "ground", "body2": "bar", "point": [0, 1, 0], "point2": "tip", "distance": 1.0})
json.dump(s, open(sys.argv[2], "w"))
PY
expect "rigid body off its distance joint" 1 "joint 'rope': body2 'bar' is 0.732 m off the joint's distance, 1 m, at t = 0" -- "$BIN" run "$tmp/k5dist.json" --out "$tmp/m"
# a time step of 1e6 s: named against the run's end and the part's wave transit time (blamed the supports)
scene '"fixed": [{"set": "support"}], "time": {"dt": 1e6}' k5dt.json
expect "FE time.dt 1e6 (end 1 s)" 1 "\"time.dt\" = 1e+06 s is longer than the run (\"time.end\" = 1 s, the default)" -- "$BIN" run "$tmp/k5dt.json" --out "$tmp/o"
scene '"fixed": [{"set": "support"}], "time": {"dt": 1e6, "end": 1e7}' k5dt2.json
expect "FE time.dt 1e6 (end 1e7 s)" 1 "\"time.dt\" = 1e+06 s is 3.21e+10 times the part's wave transit time" -- "$BIN" run "$tmp/k5dt2.json" --out "$tmp/o"
sed 's/"dt": 0.001, "end": 2.0/"dt": 1e6, "end": 2.0/' "$M" >"$tmp/k5mdt.json"
expect "mechanism time.dt 1e6" 1 "\"time.dt\" = 1e+06 s is longer than the run (\"time.end\" = 2 s)" -- "$BIN" run "$tmp/k5mdt.json" --out "$tmp/m"
# a huge driver amplitude: the driver named before the run (was "neither mass nor a constraint" of body 'bar')
python3 - "$M" "$tmp/k5drv.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["drivers"] = [{"name": "spin", "type": "angle", "joint": "hinge", "function": {"type": "harmonic", "amplitude": 1e6, "omega": 10}}]
json.dump(s, open(sys.argv[2], "w"))
PY
expect "mechanism driver amplitude 1e6" 1 "driver 'spin' moves 1e+04 rad in one step" -- "$BIN" run "$tmp/k5drv.json" --out "$tmp/m"
# an FE body of tiny density: the user's body and "material.rho" named (was the internal body 'lug.nodes0')
sed -e 's/"rho": 7850/"rho": 1e-12/' -e 's|"\.\./meshes/|"'"$ROOT"'/meshes/|' scenes/lug_pull.json >"$tmp/light.json"
sed 's|"\.\./lug_pull.json"|"'"$tmp"'/light.json"|' scenes/mbs/lug_corotational.json >"$tmp/k5rho.json"
expect "FE body of density 1e-12" 1 "\"bodies\"[0] ('lug') \"flexible\": the FE scene $tmp/light.json: its density \"material.rho\" = 1e-12" -- "$BIN" run "$tmp/k5rho.json" --out "$tmp/m"
grep -q "nodes0" "$tmp/err" && bad "density 1e-12: an internal body is still named: $(cat "$tmp/err")"
[ -e "$tmp/o" ] && bad "class 5: a refused FE scene left $tmp/o behind"
[ -e "$tmp/m" ] && bad "class 5: a refused mechanism left $tmp/m behind"

echo "hostile input: $n cases, $fail failed"
[ $fail -eq 0 ]
