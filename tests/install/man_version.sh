#!/bin/sh
# man_version.sh BUILD — every manual page renders with man(1) without a warning and names
# the project's version; ifc -V and each program's --version print that version.
set -eu
build=$1
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || { echo "man_version.sh: no project version in the cache" >&2; exit 1; }
fail() { echo "man_version.sh: $*" >&2; exit 1; }

for page in ifc.8 ifcored.8 ifcore-run.1 ifcore-bench.1; do
  f=$build/packaging/man/$page
  [ -e "$f" ] || fail "no $page"
  warnings=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "$page: $warnings"
  out=$(MANWIDTH=80 man -l "$f" 2>/dev/null)
  echo "$out" | grep -q "ifcore $version" || fail "$page does not name version $version"
  echo "$out" | grep -q "^NAME" && echo "$out" | grep -q "^SYNOPSIS" || fail "$page lacks NAME or SYNOPSIS"
done

bin=$build/bin
[ "$("$bin/ifc" -V)" = "ifc utility, ifcore-$version" ] || fail "ifc -V: $("$bin/ifc" -V)"
[ "$("$bin/ifc" -Version)" = "ifc utility, ifcore-$version" ] || fail "ifc -Version"
for p in ifcored ifcore-bench ifcore-run; do
  for opt in --version -V; do
    got=$("$bin/$p" $opt) || fail "$p $opt failed"
    [ "$got" = "$p $version" ] || fail "$p $opt printed \"$got\""
  done
done
echo "man_version.sh: 4 pages, 4 programs at $version"
