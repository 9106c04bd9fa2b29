# net-tools' ifconfig after setup_devices.sh (clients.ifconfig): list, one device, set an
# address and mask, up/down, mtu, a mask on a peer address (the peer stays), a mask that
# makes an address the duplicate of another (Linux drops it and answers 0), then list again. Run against the kernel and through the shim.
ifconfig
ifconfig -a
ifconfig v0
ifconfig br0 198.51.100.1 netmask 255.255.255.0 up
ifconfig br0
ifconfig v1 mtu 1400
ifconfig v1 down
sleep 1.5  # the kernel's link watch takes v0's RUNNING away within a second
ifconfig v1
ifconfig nosuch0
echo "exit $?"
ifconfig v0:x
ifconfig v1 netmask 255.255.0.0
ip -4 addr show dev v1
ip link add v2 type veth peer name v3
ip addr add 10.9.0.1/8 dev v2
ip addr add 10.9.0.1/16 dev v2
ifconfig v2 netmask 255.255.0.0
echo "exit $?"
ifconfig v2 netmask 255.0.255.0
echo "exit $?"
ip -4 addr show dev v2
ifconfig -a
