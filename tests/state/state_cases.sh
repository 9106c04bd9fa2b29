#!/bin/bash
# tests/state/state_cases.sh — ifcored --state through the real ifcored and ifc.
#   state_cases.sh roundtrip IFCORED IFC   every object type: configure, SIGTERM, start,
#                                          and the full dumps are equal (lifetimes aside)
#   state_cases.sh corrupt IFCORED IFC     a truncated or garbage file: an error, no start;
#                                          --state-recover starts with what it can read
#   state_cases.sh unapplied IFCORED IFC   a record that cannot be applied: an error, no
#                                          start; --state-recover applies the rest and keeps
#                                          it in the table `lost`
set -u
case_=$1 ifcored=$2 ifc=$3
dir=$(mktemp -d /tmp/ifc-state.XXXXXX)
sock=$dir/ifcore.sock
state=$dir/state.db
pid=""
group=()
[ "$(id -u)" = 0 ] || group=(--group "$(id -gn)")
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$dir/log" ] && tail -20 "$dir/log"; exit 1; }

start() {  # start [OPTIONS...]: ifcored on $sock with $state; fails the test if it does not listen
  "$ifcored" --socket "$sock" --state "$state" --sync full --reserve 0 "${group[@]}" "$@" 2>>"$dir/log" &
  pid=$!
  for _ in $(seq 500); do
    "$ifc" --socket "$sock" link show lo >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || fail "ifcored did not start: $(tail -3 "$dir/log")"
    sleep 0.01
  done
  fail "ifcored does not answer"
}
stop() {  # SIGTERM, and it must exit 0
  kill -TERM "$pid"
  wait "$pid" || fail "ifcored exited $? on SIGTERM"
  pid=""
}
refused() {  # refused PATTERN [OPTIONS...]: ifcored must exit non-zero with PATTERN in its error
  local pat=$1
  shift
  timeout 10 "$ifcored" --socket "$sock" --state "$state" --reserve 0 "${group[@]}" "$@" >"$dir/err" 2>&1
  local st=$?
  [ $st != 0 ] && [ $st != 124 ] || fail "ifcored started (status $st) on: $pat"
  grep -q -- "$pat" "$dir/err" || fail "no \"$pat\" in: $(cat "$dir/err")"
  [ -S "$sock" ] && fail "the socket exists after a refused start"
  return 0
}
I() { "$ifc" --socket "$sock" "$@"; }

configure() {
  set -e
  I link add d0 type dummy
  I link set d0 up mtu 1400 alias "first dummy"
  I link property add dev d0 altname dummyzero
  I addr add 10.0.0.1/24 dev d0
  I addr add 10.0.0.2/24 dev d0
  I addr add 2001:db8::1/64 dev d0 valid_lft 1000 preferred_lft 500
  I link add v0 type veth peer name v1
  # An address of its own (br0), and one taken from its ports (br1: it keeps following them)
  I link add br0 address 02:00:00:00:01:00 type bridge
  I link add br1 type bridge
  I link add p1 address 02:00:00:00:02:02 type dummy
  I link add p2 address 02:00:00:00:02:01 type dummy
  I link set p1 master br1
  I link set p2 master br1
  I link set v0 master br0
  I link set v0 type bridge_slave cost 7 priority 3 hairpin on learning off isolated on
  # Offload limits: a port's, and a bridge's above 64 KiB (allowed once it has a port)
  I link set v0 gso_max_size 30000 gso_max_segs 100 gro_max_size 200000
  I link set br0 gso_max_size 300000
  I link set br0 up
  I link set v0 up
  I link add link d0 name vl10 type vlan id 10
  I link add link d0 name mv0 type macvlan mode bridge
  I link set dev d0 group 7
  I link add vrf1 type vrf table 10
  # Forwarding entries: a port's static one, the bridge's own, a VXLAN's remotes
  I fdb add 02:00:00:00:00:aa dev v0 master static
  I fdb add 02:00:00:00:00:cc dev br0 self permanent
  I link add v2 type veth peer name v3
  I link set v2 master br0
  I link set v2 type bridge_slave cost 9 guard on  # a port that stays down: no RTM_NEWLINK
  I fdb add 02:00:00:00:00:bb dev v2 master static
  I link add vxl0 type vxlan id 42 dstport 4789 remote 10.1.1.1
  I fdb add 02:00:00:00:00:dd dev vxl0 dst 10.2.2.2
  I fdb append 00:00:00:00:00:00 dev vxl0 dst 10.2.2.3
  I link add d1 type dummy
  I link set d1 master vrf1
  I link set vrf1 up
  I link set d1 up
  I route add 10.1.0.0/16 via 10.0.0.254 dev d0
  I route add 10.3.0.0/16 via 10.0.0.254 dev d0 table 100 metric 5
  I -6 route add 2001:db8:1::/48 via 2001:db8::fe dev d0
  I -6 route add 2001:db8:7::/64 from 2001:db8:8::/64 dev d0
  I -6 route add 2001:db8:7::/64 from 2001:db8:9::/64 dev d0 metric 7
  # Routes that share a key keep their order: IPv4's aliases, IPv6's siblings.
  I route add 10.4.0.0/16 via 10.0.0.251 dev d0
  I route append 10.4.0.0/16 via 10.0.0.252 dev d0
  I route prepend 10.4.0.0/16 via 10.0.0.253 dev d0
  I route prepend 10.4.0.0/16 via 10.0.0.249 dev d0
  I route replace 10.4.0.0/16 via 10.0.0.250 dev d0
  I route del 10.4.0.0/16 via 10.0.0.251
  I route append 10.4.0.0/16 via 10.0.0.251 dev d0 metric 3
  I route add 10.5.0.0/16 nexthop via 10.0.0.251 weight 2 nexthop via 10.0.0.252
  I -6 route add 2001:db8:5::/64 via 2001:db8::a dev d0
  I -6 route append 2001:db8:5::/64 nexthop via 2001:db8::b dev d0 weight 3 nexthop via 2001:db8::c dev d0
  I -6 route prepend 2001:db8:5::/64 via 2001:db8::d dev d0
  I -6 route del 2001:db8:5::/64 via 2001:db8::c
  I -6 route prepend 2001:db8:5::/64 dev d1
  I -6 route append 2001:db8:5::/64 via 2001:db8::e dev d0 metric 9
  # A sibling with metrics of its own keeps them (seen when the first sibling goes).
  I -6 route add 2001:db8:6::/64 via 2001:db8::a dev d0
  I -6 route append 2001:db8:6::/64 via 2001:db8::b dev d0 mtu 1400
  I rule add from 10.9.0.0/16 table 100 priority 100
  I neigh add 10.0.0.7 lladdr 02:00:00:00:00:07 dev d0
  I nexthop add id 1 via 10.0.0.253 dev d0
  I nexthop add id 2 via 10.0.0.252 dev d0
  I nexthop add id 3 group 1/2
  I route add 10.2.0.0/16 nhid 3
  I netns add ns1
  I link add vx0 type veth peer name vx1 netns ns1
  I -n ns1 link set vx1 up
  I -n ns1 addr add 192.168.5.1/24 dev vx1
  I -n ns1 route add 192.168.6.0/24 via 192.168.5.254
  # A namespace whose id is not the next one (another made before it went): its id, which
  # the veth end in the default namespace shows as its link-netnsid, is kept.
  I netns add ns2
  I netns add ns3
  I netns del ns2
  I link add vy0 type veth peer name vy1 netns ns3
  I sysctl -w net.ipv6.conf.default.forwarding=1 >/dev/null
  I link add d2 type dummy
  # IPv6 address generation: none (no link-local when it comes up), random
  I link add d3 type dummy
  I link set d3 addrgenmode none
  I link set d3 up
  I link add d4 type dummy
  I link set d4 addrgenmode random
  # IPv6 defaults reach a device only when it is made: d0 keeps 0 (made before the first
  # write), d2 and d3 keep 1 (made between the writes).
  I sysctl -w net.ipv6.conf.default.forwarding=0 >/dev/null
  I sysctl -w net.ipv4.conf.d0.rp_filter=2 net.ipv4.conf.all.forwarding=1 >/dev/null
  I sysctl -w net.ipv4.conf.d0.forwarding=0 net.ipv4.fib_multipath_hash_policy=1 >/dev/null
  I link set d2 name d2renamed
  I sysctl -w net.ipv6.conf.d2renamed.proxy_ndp=1 >/dev/null
  I -n ns1 sysctl -w net.ipv4.conf.vx1.proxy_arp=1 >/dev/null
  # IPv6 address labels: added, a default replaced (delete, add), a default deleted, one of
  # a device, and another namespace's table
  I addrlabel add prefix 2001:db8::/32 label 100
  I addrlabel add prefix 2001:db8:1::/48 dev d0 label 101
  I addrlabel del prefix 2002::/16 label 2
  I addrlabel add prefix 2002::/16 label 20
  I addrlabel del prefix fc00::/7 label 5
  I -n ns1 addrlabel add prefix 2001:db8:7::/48 label 7
  set +e
}
snapshot() {  # the full dumps, the lifetimes that count down taken out
  for n in "" "-n ns1" "-n ns3"; do
    # shellcheck disable=SC2086
    { I $n -d link show; I $n -d addr show; I $n route show table all; I $n -6 route show table all
      I $n rule show; I $n -6 rule show; I $n neigh show; I $n nexthop show; I $n fdb show
      I $n addrlabel list; } 2>&1
  done | sed -E 's/(valid_lft|preferred_lft|expires) [0-9]+sec/\1 Nsec/g'
  I netns list
  local keys=(net.ipv6.conf.default.forwarding net.ipv6.conf.d2renamed.forwarding
    net.ipv6.conf.d0.forwarding net.ipv6.conf.d3.forwarding
    net.ipv4.conf.d0.rp_filter net.ipv4.conf.all.forwarding net.ipv4.conf.d0.forwarding
    net.ipv4.conf.d1.forwarding net.ipv4.fib_multipath_hash_policy net.ipv6.conf.d2renamed.proxy_ndp)
  I sysctl "${keys[@]}"
  I -n ns1 sysctl net.ipv4.conf.vx1.proxy_arp 2>&1
}

case $case_ in
roundtrip)
  start
  configure || fail "configuring"
  snapshot >"$dir/before"
  stop
  start
  snapshot >"$dir/after"
  diff -u "$dir/before" "$dir/after" || fail "the dumps differ after a restart"
  grep -q "restored 3 namespaces" "$dir/log" || fail "no restore report in the log"
  # A second restart, and the changes made after the first are kept too.
  I link del vx0 && I link del vl10 && I link set v2 nomaster && I fdb del 02:00:00:00:00:aa dev v0 master && I addr del 10.0.0.2/24 dev d0 && I link set d0 mtu 1300 &&
    I rule del priority 32767 && I -6 rule del priority 32766 && I link set p2 nomaster &&
    I -6 route del 2001:db8:6::/64 via 2001:db8::a && I addrlabel add prefix fc00::/7 label 55 &&
    I addrlabel del prefix 2001:db8::/32 label 0 && I addrlabel del prefix ::/0 label 1 ||
    fail "changing"
  I -6 route show 2001:db8:6::/64 | grep -q "via 2001:db8::b dev d0 metric 1024 mtu 1400" ||
    fail "a sibling lost its mtu: $(I -6 route show 2001:db8:6::/64)"
  I link show br1 | grep -q "link/ether 02:00:00:00:02:02 " || fail "br1 does not follow its ports after a restart"
  snapshot >"$dir/before"
  stop
  start
  snapshot >"$dir/after"
  diff -u "$dir/before" "$dir/after" || fail "the dumps differ after the second restart"
  # An address label of a device that goes: the engine keeps it (as Linux), the file does
  # not (a restore could not make it again), and the restart goes on without it.
  I link add d9 type dummy && I addrlabel add prefix 2001:db8:9::/48 dev d9 label 9 &&
    I link del d9 || fail "an address label of a device"
  I addrlabel list | grep -q "prefix 2001:db8:9::/48 dev if" || fail "the label went with d9"
  stop
  start
  I addrlabel list | grep -q "2001:db8:9::" && fail "a gone device's address label came back"
  stop
  "$ifc" state dump "$state" >"$dir/dump" || fail "ifc state dump"
  for want in "namespace ns1" "default link d0 ifindex 2 kind dummy" "default link v1" \
    "default route 10.2.0.0/16 table 254" "default nexthop id 3 group" "default neigh 10.0.0.7" "default fdb 02:00:00:00:00:cc" \
    "default rule family 2 priority 100" "valid_until" "net.ipv6.conf.d2renamed.proxy_ndp = 1" \
    "default addrlabel fc00::/7 dev 0 label 55" "default addrlabel ::/0 dev 0 label 1 (deleted)" \
    "ns1 addrlabel 2001:db8:7::/48 dev 0 label 7"; do
    grep -q "$want" "$dir/dump" || fail "ifc state dump lacks \"$want\": $(cat "$dir/dump")"
  done
  grep -q "link vx0 " "$dir/dump" && fail "a deleted veth is still kept"
  grep -q "link vx1 " "$dir/dump" && fail "a deleted veth's peer (in another namespace) is still kept"
  grep -q "link vl10 " "$dir/dump" && fail "a deleted vlan is still kept"
  grep -q "addrlabel 2001:db8::/32" "$dir/dump" && fail "a deleted address label is still kept"
  echo "roundtrip: ok ($(grep -c . "$dir/dump") rows kept)"
  ;;
corrupt)
  start
  I link add d0 type dummy && I addr add 10.0.0.1/24 dev d0 || fail "configuring"
  for i in $(seq 1 200); do echo "link add x$i type dummy"; done | I -batch - || fail "batch"
  stop
  cp "$state" "$dir/good.db"
  size=$(stat -c %s "$state")
  truncate -s $((size / 2)) "$state"
  refused "state file" 
  grep -Eq "malformed|integrity" "$dir/err" || fail "no integrity error: $(cat "$dir/err")"
  head -c 65536 /dev/urandom >"$state"
  refused "state file"
  echo "hello" >"$state"
  refused "state file"
  # --state-recover: starts, sets the damaged file aside, restores what it could read.
  cp "$dir/good.db" "$state"
  truncate -s $((size / 2)) "$state"
  start --state-recover
  grep -q "state-recover" "$dir/log" || fail "no recovery report"
  [ -f "$state.corrupt" ] || fail "the damaged file was not kept aside"
  I link add after0 type dummy || fail "the recovered daemon takes changes"
  stop
  start
  I link show after0 >/dev/null || fail "a change after recovery is not kept"
  stop
  echo "corrupt: ok"
  ;;
unapplied)
  command -v sqlite3 >/dev/null || { echo "SKIP: no sqlite3 client"; exit 77; }
  start
  I link add d0 type dummy && I link add d1 type dummy && I addr add 10.0.0.1/24 dev d0 &&
    I addr add 10.0.1.1/24 dev d1 || fail "configuring"
  stop
  # d1's device record goes: its address can no longer be applied (no such device).
  sqlite3 "$state" "DELETE FROM objects WHERE type='link' AND summary LIKE 'd1 %'" || fail "sqlite3"
  refused "cannot restore"
  grep -q "10.0.1.1/24" "$dir/err" || fail "the error does not name the record: $(cat "$dir/err")"
  start --state-recover
  I addr show dev d0 | grep -q 10.0.0.1/24 || fail "what could be applied was not"
  grep -q "not restored" "$dir/log" || fail "the record not applied is not reported"
  stop
  "$ifc" state dump "$state" | grep -q "^lost default addr 10.0.1.1/24" ||
    fail "the record is not kept aside: $("$ifc" state dump "$state")"
  # Kept aside, it no longer stops a start.
  start
  stop
  echo "unapplied: ok"
  ;;
*)
  echo "unknown case $case_"
  exit 2
  ;;
esac
