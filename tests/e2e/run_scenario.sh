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
# Random MAC addresses and probe times are normalised (lib.sh).
# UPDATE_GOLDEN=1 writes the golden file instead of comparing.
# Exit 77 (ctest SKIP_RETURN_CODE) when the environment cannot run the mode.
set -u
here=$(dirname "$(realpath "$0")")
mode=$1 ifc=$(realpath "$2") scenario=$3 golden=$(realpath -m "$4")
shift 4
cd "$(dirname "$scenario")" || exit 1
file=$(basename "$scenario")

. "$here/lib.sh"

out=$(mktemp)
chunks=$(mktemp -d)
trap 'delete_ns; rm -rf "$out" "$out.n" "$chunks"' EXIT

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

normalise "$out" "$out.n"
compare "$golden" "$out.n" "$mode $file $*"
