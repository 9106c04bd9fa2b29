#!/bin/sh
# deb.sh BUILD — cpack makes the three Debian packages from this (already built) tree;
# dpkg-deb shows their metadata and the files each must hold.
set -eu
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "deb.sh: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "deb.sh: SKIP: no dpkg-deb"; exit 0; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out") >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack failed"; }
deb() { ls "$tmp"/out/$1_"$version"_*.deb 2>/dev/null | head -1; }
lib=$(deb 'libifcore[0-9]*'); dev=$(deb libifcore-dev); tools=$(deb ifcore)
[ -n "$lib" ] && [ -n "$dev" ] && [ -n "$tools" ] || { ls "$tmp/out"; fail "missing packages"; }

field() { dpkg-deb -f "$1" "$2"; }
for d in "$lib" "$dev" "$tools"; do
  [ "$(field "$d" Version)" = "$version" ] || fail "$(basename "$d"): version"
  [ -n "$(field "$d" Maintainer)" ] && [ -n "$(field "$d" Description)" ] || fail "$(basename "$d"): metadata"
done
field "$lib" Depends | grep -q 'libc6' || fail "libifcore: no shared-library dependencies"
field "$lib" Depends | grep -q 'liburcu' || fail "libifcore: liburcu not a dependency"
field "$dev" Depends | grep -q "$(field "$lib" Package) (= $version)" || fail "libifcore-dev does not depend on the library"
field "$dev" Depends | grep -q 'libfmt-dev' || fail "libifcore-dev: libfmt-dev"
field "$tools" Depends | grep -q 'libsystemd0' || fail "ifcore: libsystemd0 not a dependency"
dpkg-deb -I "$tools" postinst | grep -q sysusers || fail "ifcore: no postinst making the group"

# contents PACKAGE PATTERN...: each pattern (an extended regex on ./path) matches a file.
contents() {
  d=$1; shift
  dpkg-deb -c "$d" | awk '{ print $6 }' >"$tmp/list"
  for pat in "$@"; do
    grep -Eq "^\.$prefix/$pat\$" "$tmp/list" || { cat "$tmp/list"; fail "$(basename "$d") lacks $pat"; }
  done
}
contents "$lib" 'lib/([^/]+/)?libifcore\.so\.[0-9]+\.[0-9]+\.[0-9]+'
dpkg-deb -c "$lib" | grep -Eq "libifcore\.so\.[0-9]+ -> libifcore\.so\.$version" || fail "libifcore: no soname link"
! dpkg-deb -c "$lib" | grep -Eq 'include/|\.a$|libifcore\.so ->' || fail "libifcore holds development files"
contents "$dev" 'include/ifcore/ifcore\.h' 'include/ifcore/version\.h' 'lib/([^/]+/)?libifcore\.a' \
  'lib/([^/]+/)?cmake/ifcore/ifcoreConfig\.cmake' 'lib/([^/]+/)?cmake/ifcore/ifcoreTargets\.cmake' \
  'lib/([^/]+/)?pkgconfig/ifcore\.pc'
dpkg-deb -c "$dev" | grep -Eq 'libifcore\.so -> libifcore\.so\.[0-9]+$' || fail "libifcore-dev: no libifcore.so link"
contents "$tools" bin/ifc bin/ifcored bin/ifcore-run bin/ifcore-bench lib/ifcore/libifcore-preload\.so \
  share/man/man8/ifc\.8 share/man/man8/ifcored\.8 share/man/man1/ifcore-run\.1 \
  share/man/man1/ifcore-bench\.1 share/bash-completion/completions/ifc \
  lib/systemd/system/ifcored\.socket lib/systemd/system/ifcored\.service lib/sysusers\.d/ifcore\.conf
echo "deb.sh: $(basename "$lib") $(basename "$dev") $(basename "$tools")"
