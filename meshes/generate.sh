#!/bin/sh
# Regenerate the cofem test meshes from the .geo files in this directory.
#
#   meshes/generate.sh small    committed meshes: lug.msh, hinge.msh, beam_coarse.msh, the *_o2 ones,
#                               beam_medium.msh, strip.msh, flex_rod_n1..4.msh, kane_beam_c/f.msh
#                               (overwritten)
#   meshes/generate.sh family   refinement family into meshes/cache/ (git-ignored); files that
#                               already exist there are kept (cache)
#   meshes/generate.sh all      both
#   meshes/generate.sh stats    element/node counts and quality of every mesh present
#   meshes/generate.sh render   lug.png, hinge.png from lug.msh, hinge.msh (needs matplotlib)
#
# Environment: GMSH (default gmsh; the committed meshes were made with gmsh 4.8.4 / OCC 7.6.3),
# PYTHON (a python3 with numpy for the statistics; optional), BINARY=1 (binary .msh 4.1).
# Meshing is deterministic (Delaunay 2-D/3-D, one thread, fixed seed): with the same gmsh
# version the committed files are reproduced byte for byte.
set -eu
cd "$(dirname "$0")"
GMSH=${GMSH:-gmsh}
BINARY=${BINARY:-0}       # BINARY=1: write binary .msh 4.1 (smaller, faster to read)

find_python() {
  for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import numpy' >/dev/null 2>&1; then
      echo "$p"; return 0
    fi
  done
  return 1
}
PY=$(find_python || true)

# mesh GEO OUT SIZE_FACTOR: mesh GEO at the given size factor into OUT (via a temporary file,
# so that an interrupted run leaves no partial mesh behind)
mesh() {
  geo=$1; out=$2; sf=$3
  tmp="$out.tmp.$$"
  log="$out.log.$$"
  bin=""
  [ "$BINARY" = 1 ] && bin="-bin"
  t0=$(date +%s.%N)
  if ! "$GMSH" "$geo" -setnumber size_factor "$sf" -3 -nt 1 -format msh41 $bin -o "$tmp" >"$log" 2>&1 \
     || grep -q '^Error' "$log"; then
    echo "generate.sh: gmsh failed on $geo (size_factor $sf); log:" >&2
    grep -E '^(Error|Warning)' "$log" >&2 || tail -20 "$log" >&2
    rm -f "$tmp" "$log"
    exit 1
  fi
  t1=$(date +%s.%N)
  mv "$tmp" "$out"
  rm -f "$log"
  printf '%-24s size_factor %-7s %6.1f s  ' "$out" "$sf" "$(awk "BEGIN{print $t1 - $t0}")"
  if [ -n "$PY" ]; then
    "$PY" mshstat.py "$out" | awk 'NR==2{printf "%s tets, %s nodes", $2, $4} NR==4{printf ", min dihedral %s deg, max aspect %s\n", $3, $16}'
  else
    echo
  fi
}

# meshp GEO OUT NAME VALUE ...: a structured mesh with its -setnumber parameters (issue 19's rod and beam)
meshp() {
  geo=$1; out=$2; shift 2
  args=""
  while [ $# -ge 2 ]; do args="$args -setnumber $1 $2"; shift 2; done
  tmp="$out.tmp.$$"
  if ! "$GMSH" "$geo" $args -3 -nt 1 -format msh41 -o "$tmp" >/dev/null 2>&1; then
    echo "generate.sh: gmsh failed on $geo ($args)" >&2; rm -f "$tmp"; exit 1
  fi
  mv "$tmp" "$out"
  echo "$out ($args)"
}

small() {
  meshp flex_rod.geo  flex_rod_n1.msh  n 1 nl 40
  meshp flex_rod.geo  flex_rod_n2.msh  n 2 nl 80
  meshp flex_rod.geo  flex_rod_n3.msh  n 3 nl 120
  meshp flex_rod.geo  flex_rod_n4.msh  n 4 nl 160
  meshp fourbar_bar.geo fourbar_bar_n1.msh n 1 nl 20
  meshp fourbar_bar.geo fourbar_bar_n2.msh n 2 nl 40
  meshp kane_beam.geo kane_beam_c.msh  ny 3 nz 1 nl 100
  meshp kane_beam.geo kane_beam_f.msh  ny 4 nz 1 nl 800
  mesh lug.geo   lug.msh         1.0
  mesh hinge.geo hinge.msh       1.0
  mesh beam.geo  beam_coarse.msh 1.0
  mesh beam_o2.geo beam_o2.msh   1.43
  # quadratic (10-node, straight-edged) members of the issue 30 comparisons and mechanism tests
  mesh lug_o2.geo lug_o2.msh     1.6
  mesh hinge_o2.geo hinge_o2.msh 1.6
  meshp flex_rod_o2.geo flex_rod_o2_n1_20.msh n 1 nl 20
  meshp flex_rod_o2.geo flex_rod_o2_n1_40.msh n 1 nl 40
  meshp flex_rod_o2.geo flex_rod_o2_n1_80.msh n 1 nl 80
  meshp flex_rod_o2.geo flex_rod_o2_n2_40.msh n 2 nl 40
  meshp kane_beam_o2.geo kane_beam_o2_20.msh nl 20
  meshp kane_beam_o2.geo kane_beam_o2_40.msh nl 40
  meshp kane_beam_o2.geo kane_beam_o2_80.msh nl 80
  mesh beam.geo  beam_medium.msh 0.5
  mesh strip.geo strip.msh       1.0
}

# name size_factor; ~1.5k / 10k / 100k / 1M tetrahedra (lug.msh is the lug's ~1.5k member)
FAMILY="lug_10k:0.43 lug_100k:0.19 lug_1m:0.0855
hinge_1k5:1.6 hinge_10k:0.68 hinge_100k:0.307 hinge_1m:0.14"

family() {
  mkdir -p cache
  for item in $FAMILY; do
    name=${item%%:*}; sf=${item#*:}
    geo=${name%%_*}.geo
    if [ -s "cache/$name.msh" ]; then
      echo "cache/$name.msh exists (cached; delete it to regenerate)"
    else
      mesh "$geo" "cache/$name.msh" "$sf"
    fi
  done
}

stats() {
  [ -n "$PY" ] || { echo "generate.sh: stats need a python3 with numpy (set PYTHON)" >&2; exit 1; }
  files=""
  for f in lug.msh hinge.msh beam_coarse.msh beam_medium.msh strip.msh cache/lug_10k.msh \
      cache/lug_100k.msh cache/lug_1m.msh cache/hinge_1k5.msh cache/hinge_10k.msh \
      cache/hinge_100k.msh cache/hinge_1m.msh; do
    [ -s "$f" ] && files="$files $f"
  done
  "$PY" mshstat.py --md $files
}

render() {
  [ -n "$PY" ] || { echo "generate.sh: render needs a python3 with numpy and matplotlib" >&2; exit 1; }
  "$PY" render.py lug.msh lug.png "lug (meshes/lug.msh)"
  "$PY" render.py hinge.msh hinge.png "hinge (meshes/hinge.msh)"
}

case "${1:-small}" in
  small)  small ;;
  family) family ;;
  all)    small; family ;;
  stats)  stats ;;
  render) render ;;
  *) echo "usage: $0 [small|family|all|stats|render]" >&2; exit 2 ;;
esac
