#!/bin/bash
# tests/clients/vrf.sh — vrf devices, which this kernel lacks: the steps of vrf.ip through
# the real `ip` and the shim, then the same steps through `ifc`, against a fresh ifcored
# each; every step printed as `$ ip ARGS`, its output and its exit status, normalised
# (random MACs, IPv6 link-local addresses) and compared with tests/golden/shim_vrf.txt.
# UPDATE_GOLDEN=1 rewrites the golden file from the run through ip.
#   vrf.sh IFCORED IFCORE-RUN IFC GOLDEN
set -u
ifcored=$(realpath "$1")
run=$(realpath "$2")
ifc=$(realpath "$3")
golden=$(realpath -m "$4")
here=$(dirname "$(realpath "$0")")
. "$here/../e2e/lib.sh"
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
pid=
# transcript WHO: every step through `ip` (WHO=ip) or `ifc` (WHO=ifc), against a new ifcored.
transcript() {
  local sock="$dir/$1.sock" out="$dir/$1.out" line
  "$ifcored" --socket "$sock" --reserve 0 2>"$dir/$1.log" &
  pid=$!
  # Listening: /proc/net/unix shows the socket with __SO_ACCEPTCON (flags 00010000).
  for _ in $(seq 500); do
    awk -v p="$sock" '$4 == "00010000" && $NF == p { f = 1 } END { exit !f }' /proc/net/unix && break
    sleep 0.01
  done
  while IFS= read -r line; do
    case $line in
      '#settle') sleep 0.2; continue ;;
      '#'* | '') continue ;;
    esac
    echo "\$ ip $line"
    if [ "$1" = ip ]; then
      # shellcheck disable=SC2086  # the step's words
      "$run" --socket "$sock" -- ip $line 2>&1
    else
      # shellcheck disable=SC2086
      "$ifc" --socket "$sock" $line 2>&1
    fi
    echo "exit $?"
  done <"$here/vrf.ip" >"$out"
  kill "$pid"
  wait "$pid"
  pid=
  normalise "$out" "$out.m"
  sed -E 's/fe80::[0-9a-f:]+/fe80::X/g' "$out.m" >"$dir/$1.n"
}
transcript ip
if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then compare "$golden" "$dir/ip.n" "ip through the shim: vrf.ip"; fi
diff -u "$golden" "$dir/ip.n" || { echo "FAIL: ip through the shim differs from $(basename "$golden")"; exit 1; }
transcript ifc
compare "$golden" "$dir/ifc.n" "ip through the shim and ifc: vrf.ip"
