# Sourced by tests/test_viewer_*.sh (bash). Finds cofem_view, starts a private Xvfb (a free
# display chosen by Xvfb itself, so tests can run in parallel), checks that an OpenGL 3.3 core
# context opens, and gives helpers to read the viewer's "report" lines. Skips (exit 77, one line)
# when the viewer is not built, Xvfb is missing or no context can be had.
VIEW=${COFEM_BUILD:-build}/viewer/cofem_view
BIN=${COFEM_BIN:-build/cofem}
VIEWER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ -x "$VIEW" ] || skip "viewer not built ($VIEW; it needs libglfw3-dev libglew-dev libstb-dev)"
command -v Xvfb >/dev/null 2>&1 || skip "Xvfb not installed (Debian package xvfb)"
tmp=$(mktemp -d)
Xvfb -displayfd 3 -screen 0 1600x1200x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
xvfb_pid=$!
trap 'kill $xvfb_pid 2>/dev/null; wait $xvfb_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
  [ -s "$tmp/display" ] && break
  kill -0 $xvfb_pid 2>/dev/null || break
  sleep 0.1
done
[ -s "$tmp/display" ] || skip "Xvfb did not start: $(tr '\n' ' ' < "$tmp/xvfb.log" | cut -c1-200)"
export DISPLAY=":$(head -1 "$tmp/display")"
"$VIEW" --check-gl >"$tmp/gl.log" 2>&1
gl_rc=$?
[ $gl_rc -eq 3 ] && skip "no OpenGL 3.3 core context under Xvfb: $(tail -1 "$tmp/gl.log")"
if [ $gl_rc -ne 0 ]; then
  echo "FAIL: cofem_view --check-gl exited $gl_rc: $(cat "$tmp/gl.log")"
  exit 1
fi
echo "viewer: $(head -1 "$tmp/gl.log" | sed 's/^cofem_view: //') on Xvfb $DISPLAY"

fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=$((fail + 1)); fi; }
# f FILE LABEL KEY: the value of KEY in the report line labelled LABEL
f() { grep "^report label=$2 " "$1" | head -1 | tr ' ' '\n' | grep "^$3=" | head -1 | cut -d= -f2-; }
# c VEC I: component I (1-3) of "x,y,z"
c() { echo "$1" | cut -d, -f"$2"; }
# calc EXPR: awk arithmetic; cond EXPR: true if EXPR holds (numbers interpolated by the caller)
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
cond() { awk "BEGIN { exit !($1) }"; }
# vector helpers on "x,y,z" strings
vsub() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, p, ","); split(b, q, ","); printf "%.9g,%.9g,%.9g", p[1]-q[1], p[2]-q[2], p[3]-q[3] }'; }
vdot() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, p, ","); split(b, q, ","); printf "%.9g", p[1]*q[1]+p[2]*q[2]+p[3]*q[3] }'; }
vnorm() { awk -v a="$1" 'BEGIN { split(a, p, ","); printf "%.9g", sqrt(p[1]^2+p[2]^2+p[3]^2) }'; }
# run the viewer on a script; output in $tmp/NAME.out, status in $tmp/NAME.rc
run_view() {
  local name=$1; shift
  timeout 120 "$VIEW" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  echo $rc >"$tmp/$name.rc"
  [ $rc -eq 0 ] || { echo "cofem_view exited $rc:"; tail -5 "$tmp/$name.err"; }
}
