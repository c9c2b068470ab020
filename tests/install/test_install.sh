#!/usr/bin/env bash
# The installed package: `cmake --install` into a prefix that is then moved elsewhere (the
# pkg-config file, the CMake package and cf_data_dir() must follow), examples/pull_lug.c built
# against it through pkg-config and find_package(cofem), shared and static, and run on the
# installed scene. Checks: only cf_* symbols exported, the SONAME, every build prints the same
# numbers as the in-tree build/pull_lug, and the pulled node moves along the force by the linear
# static estimate (within 2%; 0.6% measured at 1e5 N). Skipped (77) without cmake, pkg-config, cc.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=${COFEM_BUILD:-$SRC/build}
CC=${CC:-cc}
for tool in cmake pkg-config "$CC" nm readelf; do
  command -v "$tool" >/dev/null || { echo "test_install: skipped, $tool not found"; exit 77; }
done
[ -x "$BUILD/pull_lug" ] || { echo "test_install: $BUILD/pull_lug not built"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "test_install: FAIL: $*"; exit 1; }

cmake --install "$BUILD" --prefix "$T/stage" >"$T/install.log" || { cat "$T/install.log"; fail "cmake --install"; }
mv "$T/stage" "$T/p"   # relocated: nothing may point at the staging prefix
P=$T/p
pc=$(find "$P" -name cofem.pc); [ -n "$pc" ] || fail "no cofem.pc"
LIBDIR=$(dirname "$(dirname "$pc")")
for f in "$LIBDIR/libcofem.a" "$LIBDIR/libcofem.so" "$P/include/cofem/cofem.h" "$P/include/cofem/session.h" \
         "$P/bin/cofem" "$P/share/cofem/scenes/lug_pull.json" "$P/share/cofem/meshes/lug.msh" \
         "$LIBDIR/cmake/cofem/cofemConfig.cmake"; do
  [ -e "$f" ] || fail "not installed: ${f#$P/}"
done
grep -rq "$T/stage" "$LIBDIR/pkgconfig" "$LIBDIR/cmake" && fail "the staging prefix is written into the package files"

# shared-library hygiene
version=$(pkg-config --modversion "$pc")
soname=$(readelf -d "$LIBDIR/libcofem.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
case "$version" in 0.*) want=libcofem.so.${version%.*} ;; *) want=libcofem.so.${version%%.*} ;; esac
[ "$soname" = "$want" ] || fail "SONAME '$soname', expected '$want' for version $version"
nm -D --defined-only "$LIBDIR/libcofem.so" | awk '{print $3}' | sed 's/@.*//' | grep -v '^COFEM_' >"$T/syms" || true
nexp=$(wc -l <"$T/syms")
other=$(grep -v '^cf_' "$T/syms" || true)
[ -z "$other" ] || fail "exported beside cf_*: $(echo $other | head -c 300)"
[ "$nexp" -gt 50 ] || fail "only $nexp symbols exported"
grep -qx cf_session_open "$T/syms" || fail "cf_session_open not exported"
grep -qx cf_pcg_warm_start "$T/syms" && fail "an internal function (cf_pcg_warm_start) is exported"
echo "installed $version: $soname, $nexp cf_* symbols exported, nothing else"

# the example, four ways
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig
EX=$SRC/examples/pull_lug.c
$CC -std=c11 -Wall -Wextra -Werror "$EX" $(pkg-config --cflags --libs cofem) -Wl,-rpath,"$LIBDIR" -o "$T/pc_shared"
$CC -std=c11 -Wall -Wextra -Werror "$EX" $(pkg-config --cflags cofem) "$LIBDIR/libcofem.a" \
    $(pkg-config --static --libs cofem | sed 's/-lcofem\b//') -o "$T/pc_static"
for mode in OFF ON; do
  cmake -S "$SRC/examples" -B "$T/cm_$mode" -DCMAKE_PREFIX_PATH="$P" -DCOFEM_STATIC=$mode \
        -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$T/cm_$mode.log" 2>&1 || { cat "$T/cm_$mode.log"; fail "find_package (COFEM_STATIC=$mode)"; }
  cmake --build "$T/cm_$mode" >>"$T/cm_$mode.log" 2>&1 || { cat "$T/cm_$mode.log"; fail "build against the package (COFEM_STATIC=$mode)"; }
done
cp "$T/cm_OFF/pull_lug" "$T/cm_shared"; cp "$T/cm_ON/pull_lug" "$T/cm_static"
ldd "$T/pc_shared" >"$T/ldd1"; ldd "$T/cm_shared" >"$T/ldd2"; ldd "$T/pc_static" "$T/cm_static" >"$T/ldd3"
grep -q "$LIBDIR/libcofem.so" "$T/ldd1" || fail "pkg-config build does not use the installed libcofem.so"
grep -q "$LIBDIR/libcofem.so" "$T/ldd2" || fail "find_package build does not use the installed libcofem.so"
grep -q libcofem "$T/ldd3" && fail "a static build needs libcofem.so"

# the data folder is found beside the moved library
"$T/pc_shared" >"$T/usage.txt" 2>&1 && fail "no scene: exit 0"
grep -q "demo scenes in $P/share/cofem/scenes" "$T/usage.txt" || fail "cf_data_dir: $(cat "$T/usage.txt")"

F=1e5
"$BUILD/pull_lug" "$SRC/scenes/lug_pull.json" $F >"$T/ref.txt"
for b in pc_shared pc_static cm_shared cm_static; do
  "$T/$b" "$P/share/cofem/scenes/lug_pull.json" $F >"$T/$b.txt" || fail "$b failed"
  cmp -s "$T/ref.txt" "$T/$b.txt" || { diff "$T/ref.txt" "$T/$b.txt"; fail "$b prints other numbers than the in-tree build"; }
done
cat "$T/ref.txt"
awk '/^pulled node u/ {u = $5} /^linear static u/ {l = $5}
     END { if (!(u > 0 && l > 0)) { print "test_install: FAIL: pulled node did not move along +y: " u; exit 1 }
           r = u / l - 1; printf "pulled node u_y %.6g m, linear static %.6g m: %+.2f%%\n", u, l, 100 * r
           if (r < -0.02 || r > 0.02) { print "test_install: FAIL: more than 2% from the linear estimate"; exit 1 } }' "$T/ref.txt"
"$P/bin/cofem" info "$P/share/cofem/meshes/lug.msh" >/dev/null || fail "installed cofem info"

# the Python package in the prefix's Python path (issue 32): it loads the prefix's libcofem.so and
# runs the prefix's cofem program, wherever the prefix was moved (checked where a python3 has numpy)
pyinit=$(find "$P/lib" -path '*/python3*/*-packages/cofem/__init__.py' | head -1)
[ -n "$pyinit" ] || fail "cmake --install did not install the Python package (PREFIX/lib/python3*/*-packages/cofem)"
if /usr/bin/python3 -c "import numpy" 2>/dev/null; then
  (cd "$T" && env -u COFEM_BUILD -u COFEM_LIB -u COFEM_BIN -u COFEM_DATA PYTHONPATH="$(dirname "$(dirname "$pyinit")")"      /usr/bin/python3 - "$P" <<'PY') || fail "the installed Python package"
import os, sys
import cofem
p = os.path.realpath(sys.argv[1])
for what, f in [("library", cofem.library_path()), ("program", cofem.program()), ("data", cofem.data_dir())]:
    if not os.path.realpath(f).startswith(p + os.sep):
        sys.exit(f"the installed package's {what} {f} is not the prefix's")
with cofem.Scene(os.path.join(cofem.data_dir(), "scenes", "lug_pull.json")) as s:
    s.step(3)
print("installed Python package:", os.path.dirname(cofem.__file__), "->", cofem.library_path())
PY
  (cd "$T" && env -u COFEM_BUILD -u COFEM_BIN PYTHONPATH="$(dirname "$(dirname "$pyinit")")" /usr/bin/python3 -m cofem --version) \
    | grep -q "^cofem $version" || fail "python3 -m cofem --version (the installed program)"
fi
echo "test_install: OK (pkg-config and find_package, shared and static)"
