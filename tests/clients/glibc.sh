#!/bin/bash
# tests/clients/glibc.sh — what the C library says about the network devices
# (if_nameindex, if_nametoindex, if_indextoname, getifaddrs: list_interfaces) and what
# net-tools' ifconfig prints, against the kernel in a fresh namespace and through the shim
# against the ifcored of $IFCORED_SOCKET, after the same setup (setup_devices.sh, run with
# the real ip on each side). The outputs must be equal once random MACs and EUI-64
# link-local addresses are normalised. Exit 77 (skip) where namespaces cannot be made.
#   glibc.sh list IFCORE-RUN LIST-INTERFACES  |  glibc.sh ifconfig IFCORE-RUN
set -u
what=$1 run=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
export IFCORE_SOCKET=${IFCORED_SOCKET:?no ifcored}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
ns=ifcglibc$$
tmp=$(mktemp -d)
trap 'ip netns del $ns 2>/dev/null; rm -rf "$tmp"' EXIT
if ! ip netns add $ns 2>/dev/null; then echo "SKIP: cannot make a network namespace"; exit 77; fi
case $what in
  list) probe=("$(realpath "$3")") ;;
  ifconfig)
    command -v ifconfig >/dev/null || { echo "SKIP: net-tools' ifconfig is not installed"; exit 77; }
    probe=(sh "$here/ifconfig_steps.sh") ;;
  *) echo "unknown probe $what"; exit 2 ;;
esac
ip netns exec $ns sh -c 'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad'
ip netns exec $ns sh "$here/setup_devices.sh" || exit 1
sleep 1.5  # the kernel's link watch and addrconf
ip netns exec $ns "${probe[@]}" >"$tmp/kernel" 2>&1
"$run" -- sh "$here/setup_devices.sh" || exit 1
"$run" -- "${probe[@]}" >"$tmp/ifcore" 2>&1
# The kernel lists a device's IPv6 addresses in /proc/net/if_inet6 in the order of a hash
# salted per namespace (inet6_addr_hash), so ifconfig's `inet6` lines of one device are
# sorted before the comparison.
norm() {
  sed -E 's/([0-9a-f]{2}:){5}[0-9a-f]{2}/MAC/g; s/fe80::[0-9a-f:]+/fe80::EUI/g; s/\b(RX|TX) packets [0-9]+ +bytes [0-9]+ \([^)]*\)/\1 packets N bytes N/' "$1" |
    /usr/bin/python3 -c '
import itertools, sys
for inet6, lines in itertools.groupby(sys.stdin, lambda l: l.lstrip().startswith("inet6 ")):
    sys.stdout.writelines(sorted(lines) if inet6 else lines)'
}
if diff -u <(norm "$tmp/kernel") <(norm "$tmp/ifcore"); then
  echo "1 passed, 0 failed"
  exit 0
fi
echo "FAIL: $what through the shim differs from the kernel's"
echo "0 passed, 1 failed"
exit 1
