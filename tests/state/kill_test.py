#!/usr/bin/env python3
"""tests/state/kill_test.py — ifcored --state under SIGKILL: several clients churn (dummies,
veth pairs, addresses) while the daemon is killed at random points; after each restart,
every acknowledged change must be there, nothing half-applied (a veth without its peer, an
address without its device), ifindexes unique and the same as when the device was made.

  kill_test.py IFCORED IFC [--kills N] [--ops N] [--clients N] [--sync full|batch|off]
               [--seed N]

Each client speaks netlink itself over the daemon's socket (SOCK_SEQPACKET), so that it
knows exactly which requests were acknowledged: a request whose ACK never came (the daemon
was killed meanwhile) is "uncertain", and may be found either way, but whole.
Prints the figures; exit 0 when nothing acknowledged was lost."""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

NLM_F_REQUEST, NLM_F_ACK, NLM_F_ECHO = 0x1, 0x4, 0x8
NLM_F_EXCL, NLM_F_CREATE = 0x200, 0x400
NLMSG_ERROR = 2
RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_DELADDR = 16, 17, 20, 21
IFLA_IFNAME, IFLA_LINKINFO, IFLA_INFO_KIND, IFLA_INFO_DATA = 3, 18, 1, 2
VETH_INFO_PEER = 1
IFA_ADDRESS, IFA_LOCAL = 1, 2
AF_INET = 2


def attr(t, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, t) + data + b"\0" * ((4 - n % 4) % 4)


def sattr(t, s):
    return attr(t, s.encode() + b"\0")


def ifinfo(index=0):
    return struct.pack("=BxHiII", 0, 0, index, 0, 0)


def msg(t, flags, seq, body):
    return struct.pack("=IHHII", 16 + len(body), t, flags, seq, 0) + body


class Gone(Exception):
    """The daemon went away before answering."""


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.seq = 0

    def request(self, t, flags, body):
        """Sends one request; returns (errno, echoed messages). Raises Gone."""
        self.seq += 1
        try:
            self.s.send(msg(t, NLM_F_REQUEST | NLM_F_ACK | flags, self.seq, body))
        except OSError:
            raise Gone()
        echoed = []
        while True:
            try:
                d = self.s.recv(65536)
            except OSError:
                raise Gone()
            if not d:
                raise Gone()
            off = 0
            while off + 16 <= len(d):
                ln, typ, fl, seq, pid = struct.unpack_from("=IHHII", d, off)
                if ln < 16:
                    break
                if typ == NLMSG_ERROR and seq == self.seq:
                    (err,) = struct.unpack_from("=i", d, off + 16)
                    return -err, echoed
                if seq == self.seq:
                    echoed.append(d[off : off + ln])
                off += (ln + 3) & ~3

    def close(self):
        self.s.close()


def ifindex_of_echo(echoed):
    for m in echoed:
        ln, typ = struct.unpack_from("=IH", m, 0)
        if typ == RTM_NEWLINK:
            return struct.unpack_from("=i", m, 16 + 4)[0]
    return None


class Model:
    """What the clients know: per device name, per address (name, ip)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.dev = {}  # name -> {"state": present|absent|uncertain, "ifindex", "peer"}
        self.addr = {}  # (name, ip) -> present|absent|uncertain
        self.acked = 0
        self.sent = 0


def churn(path, cid, model, rng, stop, budget):
    try:
        c = Client(path)
    except OSError:
        return
    mine = [f"k{cid}d{i}" for i in range(12)]
    pairs = [(f"k{cid}v{i}", f"k{cid}p{i}") for i in range(6)]
    try:
        while not stop.is_set() and budget[0] > 0:
            budget[0] -= 1
            op = rng.random()
            with model.lock:
                model.sent += 1
            if op < 0.55:
                name = rng.choice(mine)
                with model.lock:
                    st = model.dev.get(name, {}).get("state", "absent")
                if st == "uncertain":
                    continue
                if st == "absent":
                    body = ifinfo() + sattr(IFLA_IFNAME, name) + attr(
                        IFLA_LINKINFO, sattr(IFLA_INFO_KIND, "dummy"))
                    with model.lock:
                        model.dev[name] = {"state": "uncertain", "ifindex": None}
                    err, echoed = c.request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ECHO, body)
                    with model.lock:
                        if err:
                            raise SystemExit(f"create {name}: errno {err}")
                        model.dev[name] = {"state": "present", "ifindex": ifindex_of_echo(echoed)}
                        model.acked += 1
                else:
                    with model.lock:
                        model.dev[name]["state"] = "uncertain"
                        for k in model.addr:
                            if k[0] == name and model.addr[k] != "absent":
                                model.addr[k] = "uncertain-with-dev"
                    err, _ = c.request(RTM_DELLINK, 0, ifinfo() + sattr(IFLA_IFNAME, name))
                    with model.lock:
                        if err:
                            raise SystemExit(f"delete {name}: errno {err}")
                        model.dev[name] = {"state": "absent", "ifindex": None}
                        for k in list(model.addr):
                            if k[0] == name:
                                model.addr[k] = "absent"
                        model.acked += 1
            elif op < 0.75:
                a, b = rng.choice(pairs)
                with model.lock:
                    st = model.dev.get(a, {}).get("state", "absent")
                if st == "uncertain":
                    continue
                if st == "absent":
                    peer = attr(VETH_INFO_PEER, ifinfo() + sattr(IFLA_IFNAME, b))
                    body = ifinfo() + sattr(IFLA_IFNAME, a) + attr(
                        IFLA_LINKINFO, sattr(IFLA_INFO_KIND, "veth") + attr(IFLA_INFO_DATA, peer))
                    with model.lock:
                        model.dev[a] = {"state": "uncertain", "ifindex": None, "peer": b}
                    err, echoed = c.request(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ECHO, body)
                    with model.lock:
                        if err:
                            raise SystemExit(f"create {a}: errno {err}")
                        model.dev[a] = {"state": "present", "ifindex": ifindex_of_echo(echoed), "peer": b}
                        model.acked += 1
                else:
                    with model.lock:
                        model.dev[a]["state"] = "uncertain"
                    err, _ = c.request(RTM_DELLINK, 0, ifinfo() + sattr(IFLA_IFNAME, a))
                    with model.lock:
                        if err:
                            raise SystemExit(f"delete {a}: errno {err}")
                        model.dev[a] = {"state": "absent", "ifindex": None, "peer": b}
                        model.acked += 1
            else:
                name = rng.choice(mine)
                with model.lock:
                    d = model.dev.get(name, {})
                    if d.get("state") != "present" or not d.get("ifindex"):
                        continue
                    idx = d["ifindex"]
                ip = bytes([10, cid, rng.randrange(4), rng.randrange(1, 250)])
                key = (name, ip)
                with model.lock:
                    st = model.addr.get(key, "absent")
                if st.startswith("uncertain"):
                    continue
                add = st == "absent"
                body = struct.pack("=BBBBI", AF_INET, 32, 0, 0, idx) + attr(IFA_LOCAL, ip) + attr(IFA_ADDRESS, ip)
                with model.lock:
                    model.addr[key] = "uncertain"
                err, _ = c.request(RTM_NEWADDR if add else RTM_DELADDR,
                                   (NLM_F_CREATE | NLM_F_EXCL) if add else 0, body)
                with model.lock:
                    if err:
                        raise SystemExit(f"{'add' if add else 'del'} {ip} on {name}: errno {err}")
                    model.addr[key] = "present" if add else "absent"
                    model.acked += 1
    except Gone:
        pass
    finally:
        c.close()


def wait_listening(path, proc, timeout=10):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if proc.poll() is not None:
            return False
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            s.close()
            return True
        except OSError:
            time.sleep(0.005)
    return False


def ifc_json(ifc, sock, *args):
    out = subprocess.run([ifc, "--socket", sock, "-j", *args], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []


def check(model, ifc, sock, seen_ifindex):
    """Compares the daemon with what was acknowledged; resolves the uncertain."""
    lost = []
    links = ifc_json(ifc, sock, "link", "show")
    addrs = ifc_json(ifc, sock, "addr", "show")
    by_name = {l["ifname"]: l for l in links}
    idx = [l["ifindex"] for l in links]
    if len(idx) != len(set(idx)):
        lost.append(f"ifindexes not unique: {sorted(idx)}")
    have_addr = set()
    for a in addrs:
        for ai in a.get("addr_info", []):
            if ai.get("family") == "inet" and ai.get("local", "").startswith("10."):
                have_addr.add((a["ifname"], bytes(int(x) for x in ai["local"].split("."))))
    with model.lock:
        for name, d in model.dev.items():
            present = name in by_name
            st = d["state"]
            if st == "present" and not present:
                lost.append(f"acknowledged device {name} is missing")
            elif st == "absent" and present:
                lost.append(f"acknowledged delete of {name} undone")
            if present and d.get("ifindex") and by_name[name]["ifindex"] != d["ifindex"]:
                lost.append(f"{name}: ifindex {by_name[name]['ifindex']}, made as {d['ifindex']}")
            if present and name in seen_ifindex and st != "absent" and d.get("ifindex") is None:
                d["ifindex"] = by_name[name]["ifindex"]
            peer = d.get("peer")
            if peer and present != (peer in by_name):
                lost.append(f"veth {name} half there (peer {peer}: {peer in by_name})")
            d["state"] = "present" if present else "absent"
            if present and d.get("ifindex") is None:
                d["ifindex"] = by_name[name]["ifindex"]
            if not present:
                d["ifindex"] = None
        for key, st in list(model.addr.items()):
            present = key in have_addr
            if present and key[0] not in by_name:
                lost.append(f"address {key} without its device")
            if st == "present" and not present:
                lost.append(f"acknowledged address {key} is missing")
            elif st == "absent" and present:
                lost.append(f"acknowledged address delete {key} undone")
            model.addr[key] = "present" if present else "absent"
        for name, l in by_name.items():
            seen_ifindex[name] = l["ifindex"]
    return lost


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ifcored")
    ap.add_argument("ifc")
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--sync", default="full")
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="ifc-state-kill.")
    sock, state = os.path.join(tmp, "ifcore.sock"), os.path.join(tmp, "state.db")
    model = Model()
    seen = {}
    failures = []
    kills = 0
    group = []
    if os.geteuid() != 0:
        import grp
        group = ["--group", grp.getgrgid(os.getegid()).gr_name]
    per_round = max(1, a.ops // a.kills)
    started = time.time()
    proc = None
    try:
        for rnd in range(a.kills + 1):
            log = open(os.path.join(tmp, "ifcored.log"), "a")
            proc = subprocess.Popen([a.ifcored, "--socket", sock, "--state", state, "--sync", a.sync,
                                     "--reserve", "0", *group], stderr=log)
            if not wait_listening(sock, proc):
                log.close()
                print(open(os.path.join(tmp, "ifcored.log")).read()[-2000:])
                failures.append(f"round {rnd}: ifcored did not start (status {proc.poll()})")
                break
            lost = check(model, a.ifc, sock, seen)
            if lost:
                failures += [f"after kill {kills}: {x}" for x in lost]
                break
            if rnd == a.kills:
                break
            stop = threading.Event()
            budget = [10 * per_round]
            # Killed at a random point: after a random number of acknowledged changes.
            with model.lock:
                target = model.acked + rng.randint(per_round, per_round * 3 // 2)
            threads = [threading.Thread(target=churn, args=(sock, c + 1, model, random.Random(rng.random()), stop, budget))
                       for c in range(a.clients)]
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                with model.lock:
                    if model.acked >= target:
                        break
                time.sleep(0.0005)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            stop.set()
            for t in threads:
                t.join()
            log.close()
    finally:
        if proc and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
    elapsed = time.time() - started
    print(f"kill test (seed {seed}, sync {a.sync}, {a.clients} clients): {kills} kills, "
          f"{model.sent} operations sent, {model.acked} acknowledged, "
          f"{len(failures)} acknowledged changes lost or half-applied, {elapsed:.1f} s")
    for f in failures[:20]:
        print("FAIL:", f)
    if failures:
        print("state file and log kept in", tmp)
        return 1
    shutil.rmtree(tmp)
    if kills < a.kills:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
