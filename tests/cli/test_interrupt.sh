#!/usr/bin/env bash
# Interrupted runs (issue 17): SIGINT during `cofem run` (FE scene and mechanism) and `cofem static`
# stops after the current step, leaves well-formed outputs (CSV rows whole, the .pvd valid XML that
# lists only files that exist), says on stderr where it stopped and exits 130; SIGTERM the same
# with 143; a second SIGINT exits at once.
set -u
BIN=${COFEM_BIN:-build/cofem}
ROOT=$PWD
fail=0
n=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
ok() { echo "ok: $*"; }

# wait (up to 60 s) until file $1 matches pattern $2
wait_for() {
  for _ in $(seq 600); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# the CSV: every row has the header's number of fields, and there are $2 rows after the header
check_csv() {
  python3 - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
want = int(sys.argv[2])
bad = [i for i, r in enumerate(rows) if len(r) != len(rows[0])]
if bad: sys.exit("rows with another number of fields: %s" % bad[:5])
if len(rows) - 1 != want: sys.exit("%d rows, want %d" % (len(rows) - 1, want))
PY
}

# the .pvd: valid XML, every DataSet's file exists and parses as XML, as many as $2
check_pvd() {
  python3 - "$1" "$2" <<'PY'
import os, sys, xml.etree.ElementTree as ET
pvd = sys.argv[1]
sets = ET.parse(pvd).getroot().findall("./Collection/DataSet")
if len(sets) != int(sys.argv[2]): sys.exit("%d data sets, want %s" % (len(sets), sys.argv[2]))
for d in sets:
    f = os.path.join(os.path.dirname(pvd), d.get("file"))
    if not os.path.isfile(f): sys.exit("lists %s, which does not exist" % f)
    ET.parse(f)
PY
}

LUG=$ROOT/meshes/lug.msh
MAT='"material": {"E": 210e9, "nu": 0.3, "rho": 7850}'

# ---- 1. an FE run -----------------------------------------------------------------------------------
printf '{"mesh": "%s", %s, "fixed": [{"set": "support"}], "loads": [{"set": "load", "force": [1e5, 0, 0]}], "time": {"dt": 0.001, "end": 5}, "output": {"vtu_every": 3, "probes": ["probe", "load"]}}' \
  "$LUG" "$MAT" >"$tmp/fe.json"
"$BIN" run "$tmp/fe.json" --out "$tmp/fe" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" "step 40/" || bad "FE run: no progress in 60 s"
kill -INT $pid
wait $pid
rc=$?
n=$((n + 1))
k=$(sed -n 's/.*SIGINT: stopped after step \([0-9]*\) of 5000.*/\1/p' "$tmp/err")
if [ $rc -ne 130 ] || [ -z "$k" ]; then bad "FE run: exit $rc, stderr: $(cat "$tmp/err")"
else
  ok "FE run: exit 130, stopped after step $k"
  n=$((n + 1))
  e=$(check_csv "$tmp/fe/probes.csv" "$k" 2>&1) && ok "FE run: probes.csv has $k whole rows" || bad "FE run: probes.csv: $e"
  n=$((n + 1))
  e=$(check_pvd "$tmp/fe/result.pvd" $((k / 3)) 2>&1) && ok "FE run: result.pvd lists the $((k / 3)) frames written, each valid XML" || bad "FE run: result.pvd: $e"
  n=$((n + 1))
  [ "$(ls "$tmp/fe/frames" | wc -l)" = $((k / 3)) ] && ! ls "$tmp/fe" | grep -q tmp && ok "FE run: no other frame and no .tmp file" ||
    bad "FE run: frames/ holds $(ls "$tmp/fe/frames" | wc -l) files, $(ls "$tmp/fe")"
  grep -q "kept $tmp/fe/probes.csv ($k steps) and $tmp/fe/result.pvd ($((k / 3)) frames" "$tmp/err" || bad "FE run: stderr does not say what was kept: $(cat "$tmp/err")"
fi
grep -q "^done" "$tmp/out" && bad "FE run: a 'done' line after an interrupt"

# SIGTERM: the same, exit 143
"$BIN" run "$tmp/fe.json" --out "$tmp/fe2" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" "step 20/" || bad "FE run (SIGTERM): no progress in 60 s"
kill -TERM $pid
wait $pid
rc=$?
n=$((n + 1))
k=$(sed -n 's/.*SIGTERM: stopped after step \([0-9]*\) of 5000.*/\1/p' "$tmp/err")
if [ $rc -eq 143 ] && [ -n "$k" ] && check_csv "$tmp/fe2/probes.csv" "$k"; then ok "FE run: SIGTERM exits 143 after step $k, probes.csv whole"
else bad "FE run (SIGTERM): exit $rc, stderr: $(cat "$tmp/err")"; fi

# two SIGINTs: the second exits at once (130), whatever the step is doing
"$BIN" run "$tmp/fe.json" --out "$tmp/fe3" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" "step 20/" || bad "FE run (twice): no progress in 60 s"
kill -INT $pid
kill -INT $pid
wait $pid
rc=$?
n=$((n + 1))
if [ $rc -eq 130 ]; then ok "FE run: a second SIGINT exits 130"; else bad "FE run (twice): exit $rc: $(cat "$tmp/err")"; fi

# ---- 2. a mechanism with a flexible body (frames and .pvd) ---------------------------------------------
sed -e 's|"\.\./lug_pull.json"|"'"$ROOT"'/scenes/lug_pull.json"|' -e 's|"\.\./\.\./out/flexible_lug.cfred"|"'"$tmp"'/lug.cfred"|' \
    -e 's|"end": 0.2|"end": 2|' -e 's|"vtu_every": 50|"vtu_every": 20|' "$ROOT/scenes/mbs/flexible_lug.json" >"$tmp/mech.json"
"$BIN" run "$tmp/mech.json" --out "$tmp/mb" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" "step 2000/" || bad "mechanism run: no progress in 60 s"
kill -INT $pid
wait $pid
rc=$?
n=$((n + 1))
k=$(sed -n 's/.*SIGINT: stopped after step \([0-9]*\) of 20000.*/\1/p' "$tmp/err")
if [ $rc -ne 130 ] || [ -z "$k" ]; then bad "mechanism run: exit $rc, stderr: $(cat "$tmp/err")"
else
  ok "mechanism run: exit 130, stopped after step $k"
  rows=$((k / 10 + 1)) # every 10th step and the initial state
  n=$((n + 1))
  e=$(check_csv "$tmp/mb/mbs.csv" $rows 2>&1) && ok "mechanism run: mbs.csv has $rows whole rows" || bad "mechanism run: mbs.csv: $e"
  n=$((n + 1))
  e=$(check_pvd "$tmp/mb/lug.pvd" $((k / 20 + 1)) 2>&1) && ok "mechanism run: lug.pvd lists the $((k / 20 + 1)) frames written" || bad "mechanism run: lug.pvd: $e"
fi

# ---- 3. FE statics: stops after the current increment ---------------------------------------------------
sed -e 's|"increments": 20|"increments": 5000|' -e 's|"\.\./\.\./meshes/|"'"$ROOT"'/meshes/|' "$ROOT/scenes/accuracy/cantilever.json" >"$tmp/st.json"
"$BIN" static "$tmp/st.json" --out "$tmp/st" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" "load factor 0.0040" || bad "static: no progress in 60 s"
kill -INT $pid
wait $pid
rc=$?
n=$((n + 1))
k=$(sed -n 's/.*holds the rest state and the \([0-9]*\) converged increment.*/\1/p' "$tmp/err")
if [ $rc -eq 130 ] && [ -n "$k" ] && grep -q "SIGINT: stopped after load factor" "$tmp/err" && check_csv "$tmp/st/static.csv" $((k + 1)); then
  ok "static: exit 130 after $k increments, static.csv whole"
else bad "static: exit $rc, stderr: $(cat "$tmp/err")"; fi

# ---- 4. mechanism statics: stops inside the increment (issue 31: it waited for the increment to end;
# the hung lumped lug's first increment takes ~150 pseudo-steps, ~14 s) ---------------------------------
n=$((n + 1))
"$BIN" static scenes/mbs/lug_lumped.json --out "$tmp/stm" >"$tmp/out" 2>"$tmp/err" &
pid=$!
sleep 1.5
t0=$(date +%s.%N)
kill -INT $pid
wait $pid
rc=$?
dt=$(awk "BEGIN { print $(date +%s.%N) - $t0 }")
# The bound is half the unsanitised increment: it catches waiting for the increment's end, and leaves
# room for one pseudo-step under ASan on a loaded 2-core machine (measured 0.3 s plain, 2.8 s in CI's
# sanitizer stage, where 2.5 s failed).
if [ $rc -eq 130 ] && awk "BEGIN { exit !($dt < 7) }" && grep -q "before the first increment converged" "$tmp/err" &&
   [ ! -e "$tmp/stm/static.csv" ]; then
  ok "mechanism static: exit 130 ${dt} s after SIGINT, inside its first increment, nothing written"
else bad "mechanism static: exit $rc ${dt} s after SIGINT (the increment lasts ~14 s), stderr: $(cat "$tmp/err")"; fi

echo "interrupts: $n checks, $fail failed"
[ $fail -eq 0 ]
