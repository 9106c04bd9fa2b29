#!/bin/sh
# tests/layering/wire_only.sh — the wire library, and the clients that speak only the wire
# (ifc without its embedded backend, the preload shim), need nothing of ifcore's handlers or
# engine: every ifcore symbol their objects leave undefined is defined by the wire or base
# library (or by the objects themselves). Usage: wire_only.sh NM WIRE.a BASE.a OBJ...
# (the objects of a client; none for the wire library alone). Exit 1 names what is missing.
# IFCORE_SEAMS: symbols (one per line) the client may leave to a part it can be built
# without (ifc's embedded backend and state-file reader: transport_none.cc stands in).
set -eu
nm=$1 wire=$2 base=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nm" -C --defined-only "$wire" "$base" "$@" 2>/dev/null |
  awk 'NF >= 3 && $2 ~ /^[TtWwVvDdBbRrUu]$/ { $1 = ""; $2 = ""; sub(/^  /, ""); print }' |
  sort -u > "$tmp/defined"
"$nm" -C --undefined-only "$wire" "$@" 2>/dev/null |
  awk '$1 == "U" || $1 == "w" { $1 = ""; sub(/^ /, ""); print }' |
  grep '^ifcore::' | sort -u > "$tmp/undefined" || true
printf '%s\n' "${IFCORE_SEAMS:-}" | sed '/^$/d' | sort -u > "$tmp/seams"
comm -23 "$tmp/undefined" "$tmp/defined" | comm -23 - "$tmp/seams" > "$tmp/missing"
if [ -s "$tmp/missing" ]; then
  echo "needs more than the wire and base libraries:"
  cat "$tmp/missing"
  exit 1
fi
echo "only the wire and base libraries: $(wc -l < "$tmp/undefined") ifcore symbols, all defined there"
