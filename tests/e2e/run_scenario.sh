#!/bin/bash
# tests/e2e/run_scenario.sh — runs one ifc batch scenario against a target and compares
# the normalised output (stdout and stderr, then the exit status) with a golden file.
#
#   run_scenario.sh MODE IFC SCENARIO GOLDEN [OPTIONS...]
#
# MODE: kernel   — `ifc --kernel -n NS` in a fresh network namespace made for the run
#       ip       — the real `ip -n NS` in a fresh namespace (keeps the golden files honest)
#       embedded — `ifc --embedded` (a fresh engine in the ifc process)
#       daemon   — `ifc --socket $IFCORED_SOCKET` (a daemon the caller started)
# Random MAC addresses are replaced by xx:xx:xx:xx:xx:xx (bridge ids keep their priority).
# UPDATE_GOLDEN=1 writes the golden file instead of comparing.
# Exit 77 (ctest SKIP_RETURN_CODE) when the environment cannot run the mode.
set -u
mode=$1 ifc=$(realpath "$2") scenario=$3 golden=$(realpath -m "$4")
shift 4
cd "$(dirname "$scenario")" || exit 1
file=$(basename "$scenario")

ns=""
cleanup() { [ -n "$ns" ] && ip netns delete "$ns" 2>/dev/null; }
trap cleanup EXIT
make_ns() {
  if ! command -v ip >/dev/null; then echo "SKIP: iproute2's ip is not installed"; exit 77; fi
  ns="ifc-e2e-$$-$RANDOM"
  if ! ip netns add "$ns" 2>/dev/null; then
    ns=""
    echo "SKIP: network namespaces are not permitted here"
    exit 77
  fi
  # No duplicate address detection: IPv6 addresses are not "tentative" for a random while.
  ip netns exec "$ns" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad; echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad' 2>/dev/null
}

out=$(mktemp)
chunks=$(mktemp -d)
trap 'cleanup; rm -rf "$out" "$out.n" "$chunks"' EXIT

# The kernel applies carrier and operstate changes asynchronously (linkwatch): a line
# "#settle" in a scenario splits it, and the kernel modes pause there. Each piece keeps
# the file's name and line numbers (other lines blanked), so errors read the same.
run_kernel() {
  local n total rc status=0
  total=$(grep -c '^#settle' "$file")
  for ((n = 0; n <= total; n++)); do
    mkdir -p "$chunks/$n"
    awk -v want="$n" '/^#settle/ { piece++; print ""; next } { print (piece == want ? $0 : "") }' \
      "$file" >"$chunks/$n/$file"
    (cd "$chunks/$n" && "$@" -force -batch "$file")
    rc=$?
    [ $rc != 0 ] && status=$rc
    [ $rc = 255 ] && break  # a syntax error ends the batch
    [ "$n" -lt "$total" ] && sleep 1.2
  done
  return $status
}

case $mode in
  kernel) make_ns; run_kernel "$ifc" --kernel -n "$ns" "$@" >"$out" 2>&1 ;;
  ip) make_ns; run_kernel ip -n "$ns" "$@" >"$out" 2>&1 ;;
  embedded) "$ifc" --embedded "$@" -force -batch "$file" >"$out" 2>&1 ;;
  daemon)
    if [ -z "${IFCORED_SOCKET:-}" ]; then echo "SKIP: no ifcored (IFCORED_SOCKET unset)"; exit 77; fi
    "$ifc" --socket "$IFCORED_SOCKET" "$@" -force -batch "$file" >"$out" 2>&1 ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
echo "exit $?" >>"$out"

# Normalise: random MACs (not all-zero, not broadcast, not the bridge group address).
sed -E \
  -e 's/00:00:00:00:00:00/@ZERO@/g; s/ff:ff:ff:ff:ff:ff/@BCAST@/g; s/01:80:c2:00:00:00/@GROUP@/g' \
  -e 's/([0-9a-f]{2}:){5}[0-9a-f]{2}/xx:xx:xx:xx:xx:xx/g' \
  -e 's/([0-9a-f]{4})\.([0-9a-f]{1,2}:){5}[0-9a-f]{1,2}/\1.xx:xx:xx:xx:xx:xx/g' \
  -e 's/@ZERO@/00:00:00:00:00:00/g; s/@BCAST@/ff:ff:ff:ff:ff:ff/g; s/@GROUP@/01:80:c2:00:00:00/g' \
  "$out" >"$out.n"

if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$out.n" "$golden"
  echo "wrote $golden"
  exit 0
fi
if ! diff -u "$golden" "$out.n"; then
  echo "FAIL: $mode $file $* differs from $(basename "$golden")"
  exit 1
fi
echo "PASS: $mode $file $*"
