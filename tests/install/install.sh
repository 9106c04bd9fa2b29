#!/bin/sh
# install.sh BUILD SOURCE — `cmake --install` with DESTDIR into a temporary directory, then:
# every installed header compiles on its own against the installed tree only; nothing
# installed names the build or source tree; examples/ is built against the installed
# files with CMake's find_package and with pkg-config, and both programs run (they create
# and delete devices with libifcore.so, whose soname is checked).
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
fail() { echo "install.sh: $*" >&2; exit 1; }

DESTDIR=$dest cmake --install "$build" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
root=$dest$prefix
pc=$(find "$root" -name ifcore.pc)
[ -n "$pc" ] || fail "no ifcore.pc installed"
libdir=$(dirname "$(dirname "$pc")")

# The shared library: versioned file, soname link, development link; and the static one.
ls "$libdir"/libifcore.so.*.*.* >/dev/null || fail "no versioned libifcore.so"
soname=$(objdump -p "$libdir/libifcore.so" | awk '/SONAME/ {print $2}')
case $soname in libifcore.so.[0-9]*) ;; *) fail "soname is \"$soname\"" ;; esac
[ -e "$libdir/$soname" ] || fail "no $soname link"
ar t "$libdir/libifcore.a" | grep -q '^engine.cc.o$' || fail "libifcore.a lacks the engine"
ar t "$libdir/libifcore.a" | grep -q '^builtin.cc.o$' || fail "libifcore.a lacks the built-ins"
for p in ifc ifcored ifcore-run ifcore-bench; do
  [ -x "$root/bin/$p" ] || fail "no $p installed"
done
[ -e "$root/lib/ifcore/libifcore-preload.so" ] || fail "no preload library for ifcore-run"

# Each header alone, with the installed include directory and the system's only.
n=0
for h in "$root"/include/ifcore/*.h; do
  echo "#include <ifcore/$(basename "$h")>" >"$tmp/one.cc"
  c++ -std=c++20 -fsyntax-only -I"$root/include" "$tmp/one.cc" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "installed header $(basename "$h") does not compile alone"; }
  n=$((n + 1))
done
[ "$n" -ge 20 ] || fail "only $n headers installed"
[ -e "$root/include/ifcore/version.h" ] || fail "ifcore/version.h not installed"
if grep -rlF -e "$build" -e "$src" "$root/include" "$libdir/cmake" "$pc"; then
  fail "installed files name the build or source tree"
fi

export LD_LIBRARY_PATH="$libdir"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")

# CMake's find_package.
cmake -S "$src/examples" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$root" >"$tmp/cm.log" 2>&1 &&
  cmake --build "$tmp/cm" >>"$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; fail "find_package build failed"; }
"$tmp/cm/create_delete" 4 >"$tmp/cm.out" || { cat "$tmp/cm.out"; fail "find_package example failed"; }
objdump -p "$tmp/cm/create_delete" | grep -q "NEEDED *$soname" || fail "find_package example does not need $soname"

# pkg-config (its paths are the prefix's: the sysroot puts them under DESTDIR).
PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest \
  sh -c 'c++ -std=c++20 -o "$1/pc" "$2" $(pkg-config --cflags --libs ifcore)' sh "$tmp" \
  "$src/examples/create_delete.cc" 2>"$tmp/pc.log" || { cat "$tmp/pc.log"; fail "pkg-config build failed"; }
[ "$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion ifcore)" = "$version" ] || fail "ifcore.pc version"
"$tmp/pc" 2 >"$tmp/pc.out" || { cat "$tmp/pc.out"; fail "pkg-config example failed"; }

for out in cm pc; do
  grep -qx "ifcore $version (headers $version)" "$tmp/$out.out" || { cat "$tmp/$out.out"; fail "$out: version"; }
done
[ "$(grep -c '^created example' "$tmp/cm.out")" = 4 ] && grep -qx 'deleted 4' "$tmp/cm.out" || fail "cm: devices"
[ "$(grep -c '^created example' "$tmp/pc.out")" = 2 ] && grep -qx 'deleted 2' "$tmp/pc.out" || fail "pc: devices"
echo "install.sh: $n headers, $soname, find_package and pkg-config examples ran"
