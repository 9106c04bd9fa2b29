#!/bin/bash
# tests/clients/kinds.sh — the real `ip` through the shim for the kinds this kernel lacks
# (dummy, vlan, ipip, gre): the steps of kinds.ip, each printed as `$ ip ARGS`, its output
# and its exit status, normalised (random MACs, EUI-64 link-local addresses) and compared
# with tests/golden/shim_kinds.txt. UPDATE_GOLDEN=1 rewrites the golden file.
# With IFC, the steps after `#ifc` (ip tunnel's) then run again through `ifc` against the
# same ifcored, and must print what ip printed (ifindexes aside).
#   kinds.sh IFCORE-RUN GOLDEN [IFC]  (with $IFCORED_SOCKET from with_daemon.sh)
set -u
run=$(realpath "$1")
golden=$(realpath -m "$2")
ifc=${3:+$(realpath "$3")}
here=$(dirname "$(realpath "$0")")
. "$here/../e2e/lib.sh"
export IFCORE_SOCKET=${IFCORED_SOCKET:?no ifcored}
out=$(mktemp)
trap 'rm -f "$out" "$out".*' EXIT
# steps WHO: the steps of kinds.ip through ip (all) or ifc (those after `#ifc`); each
# step's transcript goes to standard output, and from `#ifc` on also to "$out.WHO".
steps() {
  local line from=0
  : >"$out.$1"
  while IFS= read -r line; do
    case $line in
      '#settle') sleep 0.2; continue ;;  # carrier and operstate arrive from the link watch
      '#ifc') from=1; continue ;;
      '#'* | '') continue ;;
    esac
    [ "$1" = ifc ] && [ $from = 0 ] && continue
    {
      echo "\$ ip $line"
      # shellcheck disable=SC2086  # the step's words
      if [ "$1" = ip ]; then "$run" -- ip $line 2>&1; else "$ifc" --socket "$IFCORE_SOCKET" $line 2>&1; fi
      echo "exit $?"
    } | if [ $from = 1 ]; then tee -a "$out.$1"; else cat; fi
  done <"$here/kinds.ip"
}
steps ip >"$out"
normalise "$out" "$out.m"
sed -E 's/fe80::[0-9a-f:]+\/64/fe80::X\/64/g' "$out.m" >"$out.n"
if [ -n "$ifc" ] && [ "${UPDATE_GOLDEN:-0}" != 1 ]; then
  diff -u "$golden" "$out.n" || { echo "FAIL: ip through the shim: kinds.ip differs from $(basename "$golden")"; exit 1; }
  steps ifc >/dev/null
  # The devices ifc makes come after those ip made: ifindexes differ.
  for who in ip ifc; do sed -E 's/^[0-9]+: /N: /' "$out.$who" >"$out.$who.n"; done
  if ! diff -u "$out.ip.n" "$out.ifc.n"; then
    echo "FAIL: ifc differs from ip through the shim on the steps after #ifc of kinds.ip"
    exit 1
  fi
  echo "PASS: ifc agrees with ip through the shim on the steps after #ifc"
fi
compare "$golden" "$out.n" "ip through the shim: kinds.ip"
