#!/bin/bash
# tests/clients/clients.sh — unmodified Linux clients through the preload shim against a
# fresh ifcored (started by tests/e2e/with_daemon.sh, socket in $IFCORED_SOCKET).
#
#   clients.sh CASE IFCORE-RUN
#
# CASE: ip        the real `ip`: links, addresses, routes, errors, -batch, `ip monitor`
#       pyroute2  pyroute2's IPRoute (pyroute2_client.py), notifications included
#       libnl     nl-link-list, nl-addr-list, nl-route-list, nl-monitor
#       netns     ip netns add/exec/-n/del, a veth across namespaces, link set netns,
#                 `unshare -rn` as an unprivileged user (a namespace of its own)
#       inherit   a netlink socket across fork and exec (inherit_client.py)
#       unprivileged  every changing ip and bridge command as uid 65534: EPERM, nothing changes
# Exit 77 (skip) when a client is not installed or the case needs what the machine
# does not allow (root, namespaces).
set -u
case_=$1
run=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
export IFCORE_SOCKET=${IFCORED_SOCKET:?no ifcored (IFCORED_SOCKET unset)}
py=/usr/bin/python3
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME EXPECTED-STATUS EXPECTED-OUTPUT-REGEX COMMAND...: runs COMMAND through the shim.
check() {
  local name=$1 want=$2 re=$3
  shift 3
  local out rc
  out=$("$run" -- "$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ] || ! grep -Eq -- "$re" <<<"$out"; then
    echo "FAIL $name: exit $rc (want $want), output:"
    sed 's/^/    /' <<<"$out"
    echo "    (wanted a line matching: $re)"
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
need() { command -v "$1" >/dev/null || { echo "SKIP: $1 is not installed"; exit 77; }; }

case $case_ in
  ip)
    check link-add 0 '^$' ip link add v0 type veth peer name v1
    check link-show 0 '^3: v0@v1: <BROADCAST,MULTICAST,M-DOWN> mtu 1500 qdisc noop state DOWN mode DEFAULT group default qlen 1000$' ip link show v0
    check link-up 0 '^$' ip link set v0 up
    check addr-add 0 '^$' ip addr add 192.0.2.1/24 dev v0
    check addr-show 0 '^    inet 192.0.2.1/24 scope global v0$' ip addr show dev v0
    check route-show 0 '^192.0.2.0/24 dev v0 proto kernel scope link src 192.0.2.1 linkdown $' ip route show
    check route-add 0 '^$' ip route add 198.51.100.0/24 via 192.0.2.254
    check route-get 0 '^198.51.100.7 via 192.0.2.254 dev v0 src 192.0.2.1 uid 0 $' ip route get 198.51.100.7
    check json 0 '"ifname":"v1"' ip -j link show v1
    check exists 2 '^RTNETLINK answers: File exists$' ip link add v0 type veth peer name v2
    check nodev 1 '^Cannot find device "nosuch"$' ip link set nosuch up
    printf 'link add b0 type bridge\nlink set v1 master b0\nlink show master b0\n' >"$tmp/batch"
    check batch 0 '^2: v1@v0: .* master b0 ' ip -batch "$tmp/batch"
    # ip monitor: a socket bound to the link group hears another client's change.
    "$run" -- ip monitor link >"$tmp/mon" 2>&1 &
    mon=$!
    sleep 0.5
    check monitor-change 0 '^$' ip link add m0 type veth peer name m1
    sleep 0.5
    kill "$mon"
    wait "$mon" 2>/dev/null
    if grep -q ': m0@m1: <BROADCAST,MULTICAST,M-DOWN>' "$tmp/mon"; then echo "ok   monitor-heard"
    else echo "FAIL monitor-heard:"; sed 's/^/    /' "$tmp/mon"; fails=$((fails + 1)); fi
    check link-del 0 '^$' ip link del v0
    check gone 1 'Device "v1" does not exist' ip link show v1
    ;;
  pyroute2)
    [ -x "$py" ] && "$py" -c 'import pyroute2' 2>/dev/null || { echo "SKIP: python3-pyroute2 is not installed"; exit 77; }
    check pyroute2 0 '^pyroute2: ok$' "$py" "$here/pyroute2_client.py"
    ;;
  libnl)
    need nl-link-list
    check link-add 0 '^$' ip link add b7 type bridge
    check addr-add 0 '^$' ip addr add 192.0.2.7/24 dev b7
    check nl-link-list 0 '^bridge b7 ether ..:..:..:..:..:.. <broadcast,multicast> group 0 $' nl-link-list
    check nl-addr-list 0 '^192.0.2.7/24 inet dev b7 scope global <permanent>$' nl-addr-list
    check nl-route-list 0 '^inet 192.0.2.7 table local type local via dev b7 ' nl-route-list
    timeout 3 "$run" -- nl-monitor link >"$tmp/mon" 2>&1 &
    mon=$!
    sleep 0.7
    check link-add-2 0 '^$' ip link add b8 type bridge
    wait "$mon" 2>/dev/null
    if grep -q '^bridge b8 ether' "$tmp/mon"; then echo "ok   nl-monitor"
    else echo "FAIL nl-monitor:"; sed 's/^/    /' "$tmp/mon"; fails=$((fails + 1)); fi
    ;;
  netns)
    if [ "$(id -u)" != 0 ]; then echo "SKIP: ip netns needs root"; exit 77; fi
    ns=ifcshim$$
    trap 'ip netns del $ns 2>/dev/null; rm -rf "$tmp"' EXIT
    check netns-add 0 '^$' ip netns add $ns
    check netns-lo 0 '^1: lo: <LOOPBACK> mtu 65536 qdisc noop state DOWN ' ip -n $ns link show
    check peer-netns 0 '^$' ip link add a0 type veth peer name a1 netns $ns
    check peer-there 0 '^a1@if[0-9]+ +DOWN ' ip -n $ns -br link show a1
    check peer-not-here 1 'Device "a1" does not exist' ip link show a1
    check set-netns 0 '^$' ip link set a0 netns $ns
    check moved 0 '^a0@a1 +DOWN ' ip -n $ns -br link show a0
    check exec 0 '^a1@a0 +DOWN ' ip netns exec $ns ip -br link show a1
    check list-id 0 "^nsid [0-9]+ \\(iproute2 netns name: $ns\\)\$" ip netns list-id
    check netns-del 0 '^$' ip netns del $ns
    check gone 0 "^$" sh -c "ip netns list-id | grep -w $ns || true"
    # pyroute2's netns.remove() unmounts and unlinks /var/run/netns/NAME (/var/run is /run):
    # the namespace goes, and the veth end it held takes its peer with it.
    check var-run-add 0 '^$' ip netns add $ns
    check var-run-peer 0 '^$' ip link add b0 type veth peer name b1 netns $ns
    check var-run-remove 0 '^$' python3 -c "import ctypes, os
ctypes.CDLL('libc.so.6').umount2(b'/var/run/netns/$ns', 2)
os.unlink('/var/run/netns/$ns')"
    check var-run-gone 1 'Device "b0" does not exist' ip link show b0
    # unshare -rn without root: a namespace of its own, which its maker may change.
    if command -v setpriv >/dev/null && command -v unshare >/dev/null; then
      chmod 755 "$(dirname "$IFCORE_SOCKET")"
      check unshare-rn 0 '^x0 +DOWN ' setpriv --reuid 65534 --regid 65534 --clear-groups \
        unshare -rn sh -c 'ip link add x0 type bridge && ip -br link show x0'
      check unshare-default-readonly 2 'Operation not permitted' setpriv --reuid 65534 --regid 65534 \
        --clear-groups ip link add x1 type bridge
    fi
    ;;
  unprivileged)
    # Every changing command of an unprivileged user is refused as Linux refuses it (checked
    # in a fresh namespace of Linux 6.18: `RTNETLINK answers: Operation not permitted`, exit
    # 2, no extack; `bridge` exits 255), reading works, and nothing changes. Not here: `ip
    # addr flush`, which looks for the error of its batch with a non-blocking peek right
    # after sending it (Linux has answered by then; through the shim the answer may come
    # later, and ip retries); ifcored's EPERM to each RTM_DELADDR is checked in
    # tests/rtnl/daemon_permission_test.cc.
    if [ "$(id -u)" != 0 ]; then echo "SKIP: needs root to run as another uid"; exit 77; fi
    command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }
    chmod 755 "$(dirname "$IFCORE_SOCKET")"
    check setup 0 '^$' sh -c 'ip link set lo up && ip link add k0 type bridge &&
      ip addr add 10.7.0.1/24 dev k0 &&
      ip link set k0 up && ip route add 10.6.0.0/16 dev k0 &&
      ip neigh add 10.7.0.9 lladdr 02:00:00:00:00:09 dev k0 && ip rule add pref 1000 table 100 &&
      ip nexthop add id 7 blackhole'
    snapshot() {
      "$run" -- sh -c 'ip -d link | sed "s/gc_timer *[0-9.]*//"; ip addr; ip route show table all; ip -6 route show table all;
        ip neigh; ip rule; ip nexthop; bridge fdb show; ip netconf' 2>&1
    }
    before=$(snapshot)
    nobody=(setpriv --reuid 65534 --regid 65534 --clear-groups)
    eperm='^RTNETLINK answers: Operation not permitted$'
    check ro-link-add 2 "$eperm" "${nobody[@]}" ip link add x0 type dummy
    check ro-link-set 2 "$eperm" "${nobody[@]}" ip link set k0 mtu 1400
    check ro-link-del 2 "$eperm" "${nobody[@]}" ip link del k0
    check ro-link-group-del 2 "$eperm" "${nobody[@]}" ip link del group 0
    check ro-altname 2 "$eperm" "${nobody[@]}" ip link property add dev k0 altname kk0
    check ro-addr-add 2 "$eperm" "${nobody[@]}" ip addr add 10.7.0.3/24 dev k0
    check ro-addr-del 2 "$eperm" "${nobody[@]}" ip addr del 10.7.0.1/24 dev k0
    check ro-route-add 2 "$eperm" "${nobody[@]}" ip route add 10.5.0.0/16 dev k0
    check ro-route-del 2 "$eperm" "${nobody[@]}" ip route del 10.6.0.0/16
    check ro-neigh-add 2 "$eperm" "${nobody[@]}" ip neigh add 10.7.0.8 lladdr 02:00:00:00:00:08 dev k0
    check ro-neigh-del 2 "$eperm" "${nobody[@]}" ip neigh del 10.7.0.9 dev k0
    check ro-fdb-add 255 "$eperm" "${nobody[@]}" bridge fdb add 02:00:00:00:00:07 dev k0 self
    check ro-fdb-flush 255 "$eperm" "${nobody[@]}" bridge fdb flush dev k0 self
    check ro-rule-add 2 "$eperm" "${nobody[@]}" ip rule add pref 2000 table 200
    check ro-rule-del 2 "$eperm" "${nobody[@]}" ip rule del pref 1000
    check ro-nexthop-add 2 "$eperm" "${nobody[@]}" ip nexthop add id 8 blackhole
    check ro-nexthop-del 2 "$eperm" "${nobody[@]}" ip nexthop del id 7
    check ro-read 0 '^k0 +[A-Z]+ ' "${nobody[@]}" ip -br link show k0
    after=$(snapshot)
    if [ "$before" = "$after" ]; then
      echo "ok   unchanged"
    else
      echo "FAIL unchanged: the state changed:"
      diff <(echo "$before") <(echo "$after") | sed 's/^/    /'
      fails=$((fails + 1))
    fi
    ;;
  inherit)
    [ -x "$py" ] || { echo "SKIP: no $py"; exit 77; }
    "$run" -- ip link add i0 type bridge
    check fork-exec 0 "^exec: \\['lo', 'i0'\\]\$" "$py" "$here/inherit_client.py"
    ;;
  *) echo "unknown case $case_"; exit 2 ;;
esac
echo "$((fails == 0 ? 1 : 0)) passed, $((fails > 0 ? 1 : 0)) failed"
[ $fails = 0 ]
