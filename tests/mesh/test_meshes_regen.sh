#!/usr/bin/env bash
# The committed meshes and their generators never drift apart: regenerate the small meshes from
# meshes/*.geo in a scratch copy and compare what `cofem info` reports (counts, volume, quality,
# node and element sets) with the committed files. Skipped (77) without gmsh.
set -u
BIN=${COFEM_BIN:-build/cofem}
command -v gmsh >/dev/null 2>&1 || { echo "SKIP: gmsh is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp meshes/*.geo meshes/generate.sh meshes/mshstat.py "$tmp"/
PYTHON=/nonexistent sh "$tmp/generate.sh" small >/dev/null || { echo "FAIL: generate.sh small"; exit 1; }
fail=0
for m in lug hinge beam_coarse beam_medium beam_o2 strip lug_o2 flex_rod_o2_n1_20 flex_rod_o2_n1_40 flex_rod_o2_n1_80 \
         flex_rod_o2_n2_40 kane_beam_o2_20 kane_beam_o2_40 kane_beam_o2_80; do
  a=$("$BIN" info "meshes/$m.msh" | sed 1s/^[^:]*://)
  b=$("$BIN" info "$tmp/$m.msh" | sed 1s/^[^:]*://)
  if [ "$a" == "$b" ]; then echo "ok: $m: $(echo "$a" | head -1)"; else
    echo "FAIL: $m differs from its generator:"; diff <(echo "$a") <(echo "$b"); fail=$((fail+1)); fi
done
# the paper's sizes: lug 1453 tets / 417 nodes, hinge 3342 / 1288, within 15%
within() { awk -v v="$1" -v r="$2" 'BEGIN{exit !(v >= 0.85*r && v <= 1.15*r)}'; }
read -r ln lt < <("$BIN" info meshes/lug.msh | head -1 | awk '{print $2, $4}')
read -r hn ht < <("$BIN" info meshes/hinge.msh | head -1 | awk '{print $2, $4}')
within "$lt" 1453 && within "$ln" 417 && echo "ok: lug $lt tets, $ln nodes" || { echo "FAIL: lug size $lt/$ln"; fail=$((fail+1)); }
within "$ht" 3342 && within "$hn" 1288 && echo "ok: hinge $ht tets, $hn nodes" || { echo "FAIL: hinge size $ht/$hn"; fail=$((fail+1)); }
echo "meshes: $fail failed"
[ $fail -eq 0 ]
