#!/bin/bash
# tests/clients/kinds.sh — the real `ip` through the shim for the kinds this kernel lacks
# (dummy, vlan, ipip, gre): the steps of kinds.ip, each printed as `$ ip ARGS`, its output
# and its exit status, normalised (random MACs, EUI-64 link-local addresses) and compared
# with tests/golden/shim_kinds.txt. UPDATE_GOLDEN=1 rewrites the golden file.
#   kinds.sh IFCORE-RUN GOLDEN        (with $IFCORED_SOCKET from with_daemon.sh)
set -u
run=$(realpath "$1")
golden=$(realpath -m "$2")
here=$(dirname "$(realpath "$0")")
. "$here/../e2e/lib.sh"
export IFCORE_SOCKET=${IFCORED_SOCKET:?no ifcored}
out=$(mktemp)
trap 'rm -f "$out" "$out.n" "$out.m"' EXIT
while IFS= read -r line; do
  case $line in
    '#settle') sleep 0.2; continue ;;  # carrier and operstate arrive from the link watch
    '#'* | '') continue ;;
  esac
  echo "\$ ip $line"
  # shellcheck disable=SC2086  # the step's words
  "$run" -- ip $line 2>&1
  echo "exit $?"
done <"$here/kinds.ip" >"$out"
normalise "$out" "$out.m"
sed -E 's/fe80::[0-9a-f:]+\/64/fe80::X\/64/g' "$out.m" >"$out.n"
compare "$golden" "$out.n" "ip through the shim: kinds.ip"
