"""pyroute2's IPRoute through the preload shim: links, addresses and routes are created,
changed, dumped and deleted, and a socket bound to the groups receives the notifications
of another client's changes. Run by clients.sh under ifcore-run; exits non-zero (with a
message) on the first thing that is not as Linux would answer."""
import subprocess
import sys

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

ip = IPRoute()
ip.link('add', ifname='pv0', kind='veth', peer='pv1')
idx = ip.link_lookup(ifname='pv0')[0]
ip.link('set', index=idx, state='up', mtu=1400)
link = ip.get_links(idx)[0]
assert link.get_attr('IFLA_MTU') == 1400, link
assert link.get_attr('IFLA_IFNAME') == 'pv0'
assert link['flags'] & 1, 'pv0 is not up'

ip.addr('add', index=idx, address='192.0.2.1', mask=24)
addrs = [(a.get_attr('IFA_ADDRESS'), a['prefixlen']) for a in ip.get_addr(family=2, index=idx)]
assert addrs == [('192.0.2.1', 24)], addrs

ip.route('add', dst='198.51.100.0/24', gateway='192.0.2.254', oif=idx)
routes = [(r.get_attr('RTA_DST'), r['dst_len'], r.get_attr('RTA_GATEWAY'))
          for r in ip.get_routes(family=2, table=254)]
assert ('198.51.100.0', 24, '192.0.2.254') in routes, routes
assert ('192.0.2.0', 24, None) in routes, routes

try:
    ip.link('add', ifname='pv0', kind='veth', peer='pv2')
    sys.exit('a second pv0 was made')
except NetlinkError as e:
    assert e.code == 17, e  # EEXIST

ip.route('del', dst='198.51.100.0/24', gateway='192.0.2.254', oif=idx)
ip.addr('del', index=idx, address='192.0.2.1', mask=24)
assert ip.get_addr(family=2, index=idx) == ()  or len(ip.get_addr(family=2, index=idx)) == 0

# Notifications: a socket bound to the groups hears what another client (ip) does.
mon = IPRoute()
mon.bind()
subprocess.run(['ip', 'link', 'add', 'pm0', 'type', 'veth', 'peer', 'name', 'pm1'], check=True)
seen = set()
for _ in range(20):
    for msg in mon.get():
        if msg['event'] == 'RTM_NEWLINK':
            seen.add(msg.get_attr('IFLA_IFNAME'))
    if {'pm0', 'pm1'} <= seen:
        break
assert {'pm0', 'pm1'} <= seen, seen
mon.close()

ip.link('del', index=idx)
ip.link('del', index=ip.link_lookup(ifname='pm0')[0])
names = [l.get_attr('IFLA_IFNAME') for l in ip.get_links()]
assert names == ['lo'], names
ip.close()
print('pyroute2: ok')
