#!/usr/bin/env bash
# The malformed-input catalogue at the CLI level. Every file in tests/data/bad goes through
#   cofem info FILE, and cofem run of a scene that names it:
# each must exit 1 with one error line that names the file (and, for run, the scene), the
# status, and the line or byte and the entity that tests/mesh/test_bad_input.c expects for that file
# (its kCases table is read from the source, so the two levels cannot drift apart); nothing on
# stdout from info, and no output directory or file from run. Then more malformed scenes (written
# here) through run (and some through static), with the messages they must give.
set -u
BIN=${COFEM_BIN:-build/cofem}
ROOT=$(pwd)
fail=0
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

# expected status, location and entity per file, from tests/mesh/test_bad_input.c
declare -A st where what
while IFS=$'\t' read -r f s w x; do st[$f]=$s; where[$f]=$w; what[$f]=$x; done < <(
  sed -nE 's/^ *\{"([^"]+)", (CF_[A-Z_]+), "([^"]*)", "(.*)"\},.*$/\1\t\2\t\3\t\4/p' tests/mesh/test_bad_input.c)
[ ${#st[@]} -ge 70 ] || bad "read only ${#st[@]} cases from tests/mesh/test_bad_input.c"

# one error line: "cofem: error: ... (CF_ERR_...)" containing every fragment given (bash
# built-ins only: process starts are what this test spends its time on)
check_msg() { # label, text, fragments...
  local label=$1 text=$2 frag; shift 2
  if [[ "$text" == *$'\n'* || ! "$text" =~ ^cofem:\ error:\ .*\(CF_ERR_[A-Z]*\)$ ]]; then
    bad "$label: not one error line: $text"; return 1
  fi
  for frag in "$@"; do
    [[ "$text" == *"$frag"* ]] || { bad "$label: '$frag' missing from: $text"; return 1; }
  done
  return 0
}

files=$(cd tests/data/bad && ls; echo does_not_exist.msh)
for f in $files; do
  path=tests/data/bad/$f
  frags=("$path")
  if [ -n "${st[$f]:-}" ]; then frags+=("(${st[$f]})" "${where[$f]}" "${what[$f]}"); fi
  n=$((n + 1))
  # info
  out=$("$BIN" info "$path" 2>"$tmp/err"); rc=$?
  err=$(<"$tmp/err")
  [ $rc -eq 1 ] || bad "info $f: exit $rc, want 1"
  [ -z "$out" ] || bad "info $f: printed to stdout: $out"
  check_msg "info $f" "$err" "${frags[@]}"
  # a scene naming it (absolute path), with outputs that must not appear
  scene=$tmp/scene_$f.json
  printf '{"mesh": "%s", "material": {"E": 210e9, "nu": 0.3, "rho": 7850}, "fixed": [{"set": "support"}],
  "output": {"dir": "%s", "vtu_every": 1}}\n' "$ROOT/$path" "$tmp/out_scene_$f" >"$scene"
  frags[0]="$ROOT/$path"
  for cmd in run; do # (static reads the scene the same way; it is checked with the scenes below)
    "$BIN" $cmd "$scene" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ $rc -eq 1 ] || bad "$cmd $f: exit $rc, want 1"
    check_msg "$cmd $f" "$(<"$tmp/err")" "$scene: mesh: " "${frags[@]}"
    [ ! -e "$tmp/out_scene_$f" ] || bad "$cmd $f: created $tmp/out_scene_$f"
  done
done
echo "bad meshes: $n files through info and run"

# more malformed scenes: file name, content, the message fragment it must give
LUG=$ROOT/meshes/lug.msh
MAT='"material": {"E": 210e9, "nu": 0.3, "rho": 7850}'
mkdir -p "$tmp/dir.msh" "$tmp/scene_dir.json"
: >"$tmp/empty.msh"
cases=(
  "empty_file.json||invalid JSON"
  "not_object.json|[1, 2, 3]|must be a JSON object"
  "no_mesh_key.json|{$MAT}|missing \"mesh\""
  "no_material.json|{\"mesh\": \"$LUG\"}|missing \"material\""
  "missing_nu.json|{\"mesh\": \"$LUG\", \"material\": {\"E\": 1e9, \"rho\": 1000}}|missing \"material.nu\""
  "E_overflow.json|{\"mesh\": \"$LUG\", \"material\": {\"E\": 1e400, \"nu\": 0.3, \"rho\": 7850}}|\"material.E\" must be a finite number"
  "nu_minus_one.json|{\"mesh\": \"$LUG\", \"material\": {\"E\": 1e9, \"nu\": -1, \"rho\": 1000}}|Poisson ratio nu = -1"
  "negative_rho.json|{\"mesh\": \"$LUG\", \"material\": {\"E\": 1e9, \"nu\": 0.3, \"rho\": -1}}|density rho = -1"
  "negative_damping.json|{\"mesh\": \"$LUG\", $MAT, \"damping\": {\"alpha\": -1}}|Rayleigh alpha = -1"
  "mesh_is_dir.json|{\"mesh\": \"$tmp/dir.msh\", $MAT}|$tmp/dir.msh: not a regular file but a directory"
  "mesh_empty_file.json|{\"mesh\": \"$tmp/empty.msh\", $MAT}|$tmp/empty.msh: the file is empty"
  "mesh_no_ext.json|{\"mesh\": \"$tmp/noext\", $MAT}|no file extension"
  "mesh_not_string.json|{\"mesh\": 7, $MAT}|\"mesh\" must be a string"
  "probe_unknown.json|{\"mesh\": \"$LUG\", $MAT, \"output\": {\"probes\": [\"tip\"]}}|\"output.probes\" names node set \"tip\""
  "fixed_not_array.json|{\"mesh\": \"$LUG\", $MAT, \"fixed\": {\"set\": \"support\"}}|\"fixed\" must be an array"
  "fixed_no_set.json|{\"mesh\": \"$LUG\", $MAT, \"fixed\": [{\"dofs\": \"x\"}]}|missing \"fixed[0].set\""
  "dofs_empty.json|{\"mesh\": \"$LUG\", $MAT, \"fixed\": [{\"set\": \"support\", \"dofs\": \"\"}]}|dofs is empty"
  "load_negative_ramp.json|{\"mesh\": \"$LUG\", $MAT, \"loads\": [{\"set\": \"load\", \"force\": [1, 0, 0], \"ramp\": -1}]}|\"loads[0].ramp\" must be >= 0"
  "force_inf.json|{\"mesh\": \"$LUG\", $MAT, \"loads\": [{\"set\": \"load\", \"force\": [1e999, 0, 0]}]}|\"loads[0].force\"[0] must be a finite number"
  "end_zero.json|{\"mesh\": \"$LUG\", $MAT, \"time\": {\"end\": 0}}|\"time.end\" must be positive"
  "dt_zero.json|{\"mesh\": \"$LUG\", $MAT, \"time\": {\"dt\": 0}}|time step dt = 0"
  "tol_one.json|{\"mesh\": \"$LUG\", $MAT, \"solver\": {\"tol\": 1}}|tolerance 1 must lie in (0, 1)"
  "max_iter_zero.json|{\"mesh\": \"$LUG\", $MAT, \"solver\": {\"max_iter\": 0}}|max_iter 0 must be >= 1"
  "threads_fraction.json|{\"mesh\": \"$LUG\", $MAT, \"solver\": {\"threads\": 1.5}}|\"solver.threads\" must be an integer"
  "mass_unknown.json|{\"mesh\": \"$LUG\", $MAT, \"solver\": {\"mass\": \"heavy\"}}|\"solver.mass\" = \"heavy\""
  "rotations_unknown.json|{\"mesh\": \"$LUG\", $MAT, \"solver\": {\"rotations\": \"node\"}}|\"solver.rotations\" = \"node\": use \"element\" or \"quadrature\""
  "warm_not_bool.json|{\"mesh\": \"$LUG\", $MAT, \"solver\": {\"warm_start\": 1}}|\"solver.warm_start\" must be true or false"
  "static_zero_increments.json|{\"mesh\": \"$LUG\", $MAT, \"static\": {\"increments\": 0}}|increments, max_iter and tol must be positive"
  "tangent_unknown.json|{\"mesh\": \"$LUG\", $MAT, \"static\": {\"tangent\": \"secant\"}}|\"static.tangent\" = \"secant\""
  "gravity_two.json|{\"mesh\": \"$LUG\", $MAT, \"gravity\": [0, -9.81]}|\"gravity\" must be an array of 3 numbers"
  "trailing_garbage.json|{\"mesh\": \"$LUG\", $MAT} x|invalid JSON"
)
# static reads and builds the scene as run does: it gets a sample of the cases (process starts
# cost ~0.1 s with the CUDA libraries linked, more under the sanitizers)
static_too=" empty_file.json probe_unknown.json mesh_is_dir.json dt_zero.json tangent_unknown.json "
for c in "${cases[@]}"; do
  name=${c%%|*}; rest=${c#*|}; body=${rest%|*}; want=${rest##*|}
  printf '%s' "$body" >"$tmp/$name"
  cmds=run
  case "$static_too" in *" $name "*) cmds="run static" ;; esac
  for cmd in $cmds; do
    n=$((n + 1))
    "$BIN" $cmd "$tmp/$name" --out "$tmp/o_$name" >/dev/null 2>"$tmp/err"; rc=$?
    [ $rc -eq 1 ] || bad "$cmd $name: exit $rc, want 1"
    check_msg "$cmd $name" "$(<"$tmp/err")" "$tmp/$name" "$want"
    [ ! -e "$tmp/o_$name" ] || bad "$cmd $name: created its output directory"
  done
done
# absurd but finite values, once they overflow (a density or time step of 1e300 does under
# gravity): the first step refuses them (exit 1), no output file is written
FIX='"fixed": [{"set": "support"}]'
G='"gravity": [0, 0, -9.81]'
absurd=(
  "force_1e300.json|{\"mesh\": \"$LUG\", $MAT, $FIX, \"loads\": [{\"set\": \"load\", \"force\": [1e300, 0, 0]}]}"
  "gravity_1e300.json|{\"mesh\": \"$LUG\", $MAT, $FIX, \"gravity\": [0, 0, -1e300]}"
  "rho_1e300.json|{\"mesh\": \"$LUG\", \"material\": {\"E\": 210e9, \"nu\": 0.3, \"rho\": 1e300}, $FIX, $G}"
  "dt_1e300.json|{\"mesh\": \"$LUG\", $MAT, $FIX, $G, \"time\": {\"dt\": 1e300, \"end\": 1e301}}"
)
for c in "${absurd[@]}"; do
  name=${c%%|*}; body=${c#*|}
  printf '%s' "$body" >"$tmp/$name"
  n=$((n + 1))
  "$BIN" run "$tmp/$name" --steps 3 --out "$tmp/o_$name" >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] || bad "run $name: exit $rc, want 1"
  want="step 1: the right side is not finite"
  # a step 1e6 times the part's wave transit time is refused before the run, naming it (issue 31, class 5)
  [ "$name" = dt_1e300.json ] && want='"time.dt" = 1e+300 s is 3.21e+304 times the part'"'"'s wave transit time'
  check_msg "run $name" "$(<"$tmp/err")" "$want"
  [ -z "$(find "$tmp/o_$name" -type f 2>/dev/null)" ] || bad "run $name: wrote $(find "$tmp/o_$name" -type f)"
done
# the scene itself unreadable
for s in "$tmp/scene_dir.json" "$tmp/no_such_scene.json"; do
  "$BIN" run "$s" >/dev/null 2>"$tmp/err"; rc=$?
  [ $rc -eq 1 ] || bad "run $s: exit $rc"
  check_msg "run $s" "$(<"$tmp/err")" "$s: cannot read the scene file ("
done
echo "cli bad meshes and scenes: $n runs, $fail failed"
[ $fail -eq 0 ]
