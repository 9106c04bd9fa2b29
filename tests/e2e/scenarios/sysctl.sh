# tests/e2e/scenarios/sysctl.sh — `ifc sysctl` lines, sourced by daemon_cases.sh with
# `run` set to the target's ifc; expects a veth pair v0/v1. The golden file is what the
# kernel answers (--kernel in a namespace of its own), the daemon must answer the same.
run sysctl net.ipv6.conf.all.forwarding
run sysctl -w net.ipv6.conf.all.keep_addr_on_down=1
run sysctl net.ipv6.conf.all.keep_addr_on_down
run sysctl -w net.ipv6.conf.v0.forwarding=1
run sysctl net.ipv6.conf.v0.forwarding net.ipv6.conf.v1.forwarding
run sysctl -w net.ipv6.conf.default.forwarding=1
run sysctl net/ipv6/conf/default/forwarding
run sysctl -w net.ipv4.conf.all.forwarding=0 net.ipv4.conf.all.forwarding=1
run sysctl net.ipv4.conf.v1.forwarding net.ipv4.conf.default.forwarding
run sysctl -w net.ipv4.conf.v0.promote_secondaries=1
run sysctl -n net.ipv4.conf.v0.promote_secondaries
run sysctl net.ipv6.conf.nope.forwarding
run sysctl -w net.ipv6.conf.nope.forwarding=1
run sysctl -w net.ipv6.conf.all.forwarding=x
run sysctl -w net.ipv6.conf.v0.addr_gen_mode=2
run sysctl net.ipv6.conf.all.forwarding net.ipv6.conf.v0.addr_gen_mode
run sysctl -w net.ipv6.conf.v1.disable_ipv6=1
run sysctl net.ipv6.conf.v1.disable_ipv6 net.ipv6.conf.v0.disable_ipv6
run sysctl net.ipv4.fib_multipath_hash_policy net.ipv4.fib_multipath_hash_fields net.ipv4.fib_multipath_hash_seed
run sysctl net.ipv6.fib_multipath_hash_policy net.ipv6.fib_multipath_hash_fields
run sysctl -w net.ipv4.fib_multipath_hash_policy=1
run sysctl -w net.ipv4.fib_multipath_hash_policy=4
run sysctl -w net.ipv6.fib_multipath_hash_policy=3
run sysctl -w net.ipv6.fib_multipath_hash_fields=0
run sysctl -w net.ipv6.fib_multipath_hash_fields=4096
run sysctl -w net.ipv6.fib_multipath_hash_fields=4095
run sysctl -w net.ipv4.fib_multipath_hash_fields=55
run sysctl -w net.ipv4.fib_multipath_hash_seed=4294967295
run sysctl -w net.ipv4.fib_multipath_hash_seed=-1
run sysctl -w net.ipv4.fib_multipath_hash_seed=4294967296
run sysctl net/ipv4/fib_multipath_hash_policy net.ipv4.fib_multipath_hash_seed net.ipv6.fib_multipath_hash_fields
run sysctl net.ipv6.fib_multipath_hash_seed
run sysctl net.ipv4.nexthop_compat_mode
run sysctl -w net.ipv4.nexthop_compat_mode=2
run sysctl -w net.ipv4.nexthop_compat_mode=0
run sysctl net.ipv4.nexthop_compat_mode
run sysctl net.ipv6.nexthop_compat_mode
run sysctl net.ipv4.fib_multipath_use_neigh
run sysctl -w net.ipv4.fib_multipath_use_neigh=1
run sysctl -w net.ipv4.fib_multipath_use_neigh=3
run sysctl net.ipv4.fib_multipath_use_neigh
run sysctl net.ipv6.fib_multipath_use_neigh
