#!/usr/bin/env bash
# Regenerates the fuzzers' seed corpus (tests/fuzz/corpus/) from what real clients send:
# iproute2's ip and bridge, pyroute2 and libnl's nl-* tools, each run through ifcore-run
# against an ifcored that records every datagram (ifcored --record), then cut into each
# target's input format by corpus_from_record.py.
#
#   tests/fuzz/capture_corpus.sh [BUILD]     (BUILD: a built tree, default build)
#
# Needs iproute2, python3-pyroute2 and libnl-utils (make deps installs them). The corpus
# is replaced whole; commit what changed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
work="$(mktemp -d /tmp/ifcore-capture-XXXXXX)"
trap 'kill "$daemon" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

run_scenario() {  # NAME: starts a fresh ifcored, runs the scenario's commands, stops it
  local name="$1"
  mkdir -p "$work/$name"
  "$build/bin/ifcored" --socket "$work/sock" --record "$work/$name" --namespace a \
    --busy-poll 0 --reserve 0 2>"$work/$name.log" &
  daemon=$!
  for _ in $(seq 100); do [ -S "$work/sock" ] && break; sleep 0.05; done
  "scenario_$name" >"$work/$name.out" 2>&1 || true
  kill -TERM "$daemon"
  wait "$daemon" || true
}

r() { "$build/bin/ifcore-run" --socket "$work/sock" -- "$@" || true; }

scenario_ip() {
  r ip link add d0 type dummy
  r ip link add d0 type dummy                       # EEXIST
  r ip link set d0 up mtu 1400 address 02:00:00:00:00:01
  r ip link set d0 alias "first dummy" group 3 txqueuelen 500
  r ip link property add dev d0 altname dummy-zero
  r ip link add v0 type veth peer name v1
  r ip link set v0 up
  r ip link set v1 up
  r ip link add link d0 name d0.10 type vlan id 10
  r ip link add link d0 name mv0 type macvlan mode bridge
  r ip link add br0 type bridge stp_state 0 vlan_filtering 1
  r ip link set v1 master br0
  r ip link add vx0 type vxlan id 42 dstport 4789 local 10.9.9.9
  r ip link add vrf0 type vrf table 10
  r ip link add gre0 type gre remote 10.0.0.2 local 10.0.0.1 ttl 64
  r ip link add ipip0 type ipip remote 10.0.1.2 local 10.0.1.1
  r ip addr add 10.1.0.1/24 dev d0
  r ip addr add 10.1.0.2/24 dev d0 label d0:1
  r ip -6 addr add 2001:db8::1/64 dev d0 valid_lft 300 preferred_lft 100
  r ip addr add 10.1.0.1/24 dev d0                  # EEXIST
  r ip route add 10.2.0.0/16 via 10.1.0.254
  r ip route add 10.3.0.0/16 dev d0 metric 10 table 100
  r ip -6 route add 2001:db8:1::/48 via 2001:db8::2 dev d0
  r ip route replace 10.2.0.0/16 dev d0 proto static
  r ip neigh add 10.1.0.9 lladdr 02:00:00:00:00:09 dev d0 nud permanent
  r ip -6 neigh add 2001:db8::9 lladdr 02:00:00:00:00:0a dev d0
  r ip rule add from 10.1.0.0/24 table 100 priority 1000
  r ip rule add fwmark 7 lookup 100
  r ip nexthop add id 1 via 10.1.0.254 dev d0
  r ip nexthop add id 2 via 10.1.0.253 dev d0
  r ip nexthop add id 10 group 1/2
  r ip route add 10.4.0.0/16 nhid 10
  r bridge fdb add 02:00:00:00:00:42 dev v1 master
  r ip link show
  r ip -d link show
  r ip -s link show d0
  r ip addr show
  r ip -6 addr show dev d0
  r ip route show table all
  r ip route get 10.2.1.1
  r ip neigh show
  r ip rule show
  r ip nexthop show
  r ip netconf show
  r ip -j -d addr show
  r bridge fdb show
  r ip link set d0 nomaster
  r ip link set v0 netns a
  r ip nexthop del id 10
  r ip rule del priority 1000
  r ip neigh del 10.1.0.9 dev d0
  r ip route del 10.3.0.0/16 table 100
  r ip addr del 10.1.0.2/24 dev d0
  r ip addr flush dev d0
  r ip link del d0.10
  r ip link del nosuch                               # ENODEV
  r ip link set dev lo mtu 70000                      # ERANGE
  r ip link del br0
  r ip link del d0
  printf 'link add b0 type dummy\nlink set b0 up\naddr add 10.5.0.1/24 dev b0\nlink del b0\n' >"$work/batch"
  r ip -batch "$work/batch"
}

scenario_pyroute2() {
  r python3 - <<'PY'
from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError
ipr = IPRoute()
def attempt(f, *a, **kw):
    try:
        return f(*a, **kw)
    except NetlinkError:
        return None
attempt(ipr.link, 'add', ifname='p0', kind='dummy')
attempt(ipr.link, 'add', ifname='p0', kind='dummy')
idx = ipr.link_lookup(ifname='p0')[0]
attempt(ipr.link, 'set', index=idx, state='up', mtu=1300)
attempt(ipr.link, 'add', ifname='pv0', kind='veth', peer='pv1')
attempt(ipr.link, 'add', ifname='pb0', kind='bridge')
attempt(ipr.link, 'add', ifname='p0.5', kind='vlan', link=idx, vlan_id=5)
attempt(ipr.addr, 'add', index=idx, address='10.6.0.1', prefixlen=24)
attempt(ipr.addr, 'add', index=idx, address='2001:db8:6::1', prefixlen=64)
attempt(ipr.route, 'add', dst='10.7.0.0/16', gateway='10.6.0.254')
attempt(ipr.route, 'add', dst='10.8.0.0/16', oif=idx, table=200)
attempt(ipr.neigh, 'add', dst='10.6.0.9', lladdr='02:00:00:00:06:09', ifindex=idx, state=128)
attempt(ipr.rule, 'add', table=200, priority=2000, src='10.6.0.0', src_len=24)
ipr.get_links()
ipr.get_addr()
ipr.get_routes()
ipr.get_neighbours()
attempt(ipr.get_rules)
attempt(ipr.route, 'del', dst='10.7.0.0/16', gateway='10.6.0.254')
attempt(ipr.addr, 'del', index=idx, address='10.6.0.1', prefixlen=24)
attempt(ipr.link, 'del', ifname='pv0')
attempt(ipr.link, 'del', index=idx)
attempt(ipr.link, 'del', ifname='nosuch')
ipr.close()
PY
}

scenario_libnl() {
  r ip link add n0 type dummy
  r nl-link-list
  r nl-link-set --name n0 --mtu 1280
  r nl-link-set --name n0 --state up
  r nl-addr-add --dev n0 --local 10.9.0.1/24
  r nl-addr-add --dev n0 --local 2001:db8:9::1/64
  r nl-addr-list
  r nl-route-add --dst 10.10.0.0/16 --nexthop via=10.9.0.254,dev=n0
  r nl-route-list
  r nl-neigh-add --dev n0 --dst 10.9.0.7 --lladdr 02:00:00:00:09:07
  r nl-neigh-list
  r nl-rule-list
  r nl-addr-delete --dev n0 --local 10.9.0.1/24
  r nl-neigh-delete --dev n0 --dst 10.9.0.7
  r nl-route-delete --dst 10.10.0.0/16
  r nl-link-delete --name n0 2>/dev/null
  r nl-link-delete --name nosuch
}

for s in ip pyroute2 libnl; do run_scenario "$s"; done
python3 "$here/corpus_from_record.py" "$work" "$here/corpus" ip pyroute2 libnl
