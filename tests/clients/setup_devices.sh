# Devices for clients.glibc and clients.ifconfig: the same steps against the kernel and ifcored.
ip link add v0 type veth peer name v1
ip link set lo up
ip link set v0 up
ip link set v1 up
ip addr add 192.0.2.1/24 brd + dev v0
ip addr add 192.0.2.2/24 dev v0 label v0:x
ip addr add 10.1.1.1 peer 10.1.1.2 dev v1
ip -6 addr add 2001:db8::1/64 dev v0
ip link add br0 type bridge
