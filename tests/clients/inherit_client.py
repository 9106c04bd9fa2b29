"""A netlink socket that outlives fork and exec: the parent opens it, a forked child dumps
links on it, then the program exec's itself and the new image dumps again on the
inherited descriptor (the preload library adopts it when it starts)."""
import os
import socket
import struct
import sys

NLMSG_DONE, RTM_GETLINK, RTM_NEWLINK = 3, 18, 16
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300


def dump_names(s, seq):
    s.send(struct.pack('=LHHLL', 32, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) +
           struct.pack('=BxHiII', 0, 0, 0, 0, 0))
    names = []
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            length, kind, _, rseq, _ = struct.unpack_from('=LHHLL', data, off)
            assert rseq == seq, (rseq, seq)
            if kind == NLMSG_DONE:
                return names
            if kind == RTM_NEWLINK:
                a = off + 16 + 16
                while a + 4 <= off + length:
                    alen, atype = struct.unpack_from('=HH', data, a)
                    if atype == 3:  # IFLA_IFNAME
                        names.append(data[a + 4:a + alen].rstrip(b'\0').decode())
                    a += (alen + 3) & ~3
            off += (length + 3) & ~3


if len(sys.argv) > 1:  # the exec'd image
    s = socket.socket(fileno=int(sys.argv[1]))
    assert s.family == socket.AF_NETLINK, s.family
    print('exec:', dump_names(s, 3))
    sys.exit(0)

s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
s.bind((0, 0))
port = s.getsockname()[0]
assert port != 0
pid = os.fork()
if pid == 0:
    print('child:', dump_names(s, 2), flush=True)
    os._exit(0)
_, status = os.waitpid(pid, 0)
assert status == 0
print('parent:', dump_names(s, 1), flush=True)
os.set_inheritable(s.fileno(), True)
os.execv(sys.executable, [sys.executable, __file__, str(s.fileno())])
