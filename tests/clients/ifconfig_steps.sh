# net-tools' ifconfig after setup_devices.sh (clients.ifconfig): list, one device, set an
# address and mask, up/down, mtu, then list again. Run against the kernel and through the shim.
ifconfig
ifconfig -a
ifconfig v0
ifconfig br0 198.51.100.1 netmask 255.255.255.0 up
ifconfig br0
ifconfig v1 mtu 1400
ifconfig v1 down
ifconfig v1
ifconfig nosuch0
echo "exit $?"
ifconfig v0:x
ifconfig -a
