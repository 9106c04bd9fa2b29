#!/usr/bin/env python3
"""Cuts what ifcored --record wrote into the seed corpus of each fuzz target.

    corpus_from_record.py RECORD_DIR CORPUS_DIR SCENARIO...

RECORD_DIR/SCENARIO/ holds files SERIAL-cCONN-in.bin / -out.bin (one datagram each, see
ifcored --record). CORPUS_DIR/{wire,engine,ring,shim}/ are replaced; each file is named
by the SHA-1 of its content, as libFuzzer names its own. Input formats: the comment at
the top of each tests/fuzz/fuzz_*.cc.
"""
import hashlib
import os
import re
import shutil
import struct
import sys
from collections import defaultdict

CONTROL = 0x3FF0          # IFCORE_NLMSG_CONTROL (src/rtnl/wire/control_msg.h)
SHIM_FIRST_SEQ = 0xC1F00001  # the shim's first control exchange (src/shim/sockets.h)
MAX_RECORDS = 60          # fuzz_engine.cc reads 64 records of an input at most
NAME = re.compile(r"(\d+)-c(\d+)-(in|out)\.bin$")


def msg_type(dg):
    return struct.unpack_from("<H", dg, 4)[0] if len(dg) >= 16 else None


def read_scenario(path):
    """{conn: [(serial, direction, bytes)]} in the order they were recorded."""
    conns = defaultdict(list)
    for name in sorted(os.listdir(path)):
        m = NAME.match(name)
        if not m:
            continue
        with open(os.path.join(path, name), "rb") as f:
            conns[int(m.group(2))].append((int(m.group(1)), m.group(3), f.read()))
    return conns


def framed16(dg):
    return struct.pack("<H", len(dg)) + dg


def engine_record(op, payload):
    return bytes([op]) + struct.pack("<H", len(payload)) + payload


class Corpus:
    def __init__(self, root):
        self.root = root
        self.seen = set()

    def add(self, target, data):
        if not data:
            return
        digest = hashlib.sha1(data).hexdigest()
        if (target, digest) in self.seen:
            return
        self.seen.add((target, digest))
        with open(os.path.join(self.root, target, digest), "wb") as f:
            f.write(data)


def main():
    record, out, scenarios = sys.argv[1], sys.argv[2], sys.argv[3:]
    for t in ("wire", "engine", "ring", "shim"):
        shutil.rmtree(os.path.join(out, t), ignore_errors=True)
        os.makedirs(os.path.join(out, t))
    corpus = Corpus(out)
    out_types = defaultdict(int)
    # Socket options a client sets (NETLINK_CAP_ACK 10, NETLINK_EXT_ACK 11,
    # NETLINK_GET_STRICT_CHK 12) and groups it joins (RTNLGRP_LINK 1, RTNLGRP_IPV4_IFADDR 5,
    # RTNLGRP_IPV4_ROUTE 7, RTNLGRP_IPV6_IFADDR 9), as engine records.
    prelude = b"".join(
        [engine_record(0x10, struct.pack("<II", o, 1)) for o in (10, 11, 12)]
        + [engine_record(0x20, struct.pack("<I", g)) for g in (1, 5, 7, 9)])
    for scenario in scenarios:
        conns = read_scenario(os.path.join(record, scenario))
        requests = []  # the scenario's requests, in order
        for conn, items in sorted(conns.items()):
            ins = [d for _, way, d in items if way == "in" and msg_type(d) != CONTROL]
            outs = [d for _, way, d in items if way == "out"]
            requests += ins
            for d in ins:
                corpus.add("wire", d)
            for d in outs:
                t = msg_type(d)
                if out_types[t] < 3:
                    out_types[t] += 1
                    corpus.add("wire", d)
            if ins:
                corpus.add("engine", b"".join(engine_record(0, d) for d in ins[:MAX_RECORDS]))
                ring = b""
                for d in ins[:40]:
                    ring += b"\x05" + framed16(d)
                corpus.add("ring", ring + b"\x03\x04\x40\x00\x08")
            # The shim reads the daemon's side: its first control reply carries the
            # sequence number the shim's first exchange uses.
            shim, patched = b"", False
            for d in outs[:24]:
                if msg_type(d) == CONTROL and not patched and len(d) >= 16:
                    d = d[:8] + struct.pack("<I", SHIM_FIRST_SEQ) + d[12:]
                    patched = True
                shim += framed16(d)
            # Mode 1 (a control exchange first); every fifth connection also with peeks
            # and a 16-byte buffer (mode 6).
            if outs:
                corpus.add("shim", b"\x01" + shim)
                if conn % 5 == 0:
                    corpus.add("shim", b"\x06" + shim)
        # The whole scenario as sequences: on "default", and with options and groups set;
        # every fourth chunk again in namespace "a" (session 1).
        for i in range(0, len(requests), MAX_RECORDS - 8):
            chunk = requests[i:i + MAX_RECORDS - 8]
            corpus.add("engine", b"".join(engine_record(0, d) for d in chunk))
            corpus.add("engine", prelude + b"".join(engine_record(0, d) for d in chunk))
            if (i // (MAX_RECORDS - 8)) % 4 == 0:
                corpus.add("engine", b"".join(engine_record(1, d) for d in chunk))
    # Hostile rings: heads that are no record boundary, past the ring, and a record whose
    # length runs past the head.
    corpus.add("ring", b"\x01" + struct.pack("<Q", 12) + b"\x03")
    corpus.add("ring", b"\x01" + struct.pack("<Q", 1 << 40) + b"\x03")
    corpus.add("ring", b"\x00" + struct.pack("<H", 4096) + b"\x08" + struct.pack("<II", 4000, 0)
               + b"\x01" + struct.pack("<Q", 16) + b"\x03")
    corpus.add("ring", b"\x02" + struct.pack("<Q", 1 << 63) + b"\x04\x10\x00")
    corpus.add("ring", b"\x07" + struct.pack("<Q", 24) + b"\x08\x06")
    for target in ("wire", "engine", "ring", "shim"):
        print(f"{target}: {len(os.listdir(os.path.join(out, target)))} inputs")


if __name__ == "__main__":
    main()
