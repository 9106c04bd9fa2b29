#!/usr/bin/python3
"""`ip monitor all-nsid` against the live kernel and through ifcore, side by side.

NETLINK_LISTEN_ALL_NSID (Linux: do_one_broadcast, netlink_cmsg_listen_all_nsid): a monitor
in namespace L hears the namespaces L gives an id, and prints each message behind
"[nsid N]" (the id, from the recvmsg control data), or "[nsid current]" for L's own.
On each side a monitor runs in the background in L while the same commands run in L, in E
(L's id 100) and in F (no id at first, then 5); then the monitors' outputs are compared
after the differential suite's normalisation (run_diff.normalise: random MACs and the
link-local addresses made from them).

  all_nsid.py --ifcored BIN --ifcore-run BIN [--ip ip] [--verbose]

Exit 0 when both print the same, 1 when they differ, 77 (skip) where network namespaces
cannot be made.
"""
import argparse
import difflib
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_diff import Ifcored, normalise  # noqa: E402

MONITOR = ['monitor', 'all-nsid']
# (namespace word, ip words): L listens; E has L's id 100; F has none until L gives it 5.
STEPS = [
    ('E', 'link add rx type veth peer name ry'),
    ('F', 'link add fx type veth peer name fy'),
    ('L', 'link add lx type veth peer name ly'),
    ('E', 'link set rx up'),
    ('E', 'addr add 10.1.1.1/24 dev rx'),
    ('E', 'link add qx type veth peer name qy netns @L'),
    ('L', 'netns set @F 5'),
    ('F', 'link set fx up'),
    ('E', 'link del rx'),
]


def side(ip, prefix, tag, wrap):
    """Runs the scenario; returns the monitor's output with the namespaces' names as words."""
    names = {w: '%s-%s-%s' % (prefix, w, tag) for w in 'LEF'}

    def words(text):
        return [names[w[1:]] if w.startswith('@') else w for w in text.split()]

    def run(argv):
        return subprocess.run(wrap + [ip] + argv, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=30)
    for n in names.values():
        run(['netns', 'add', n])
    try:
        run(['-n', names['L'], 'netns', 'set', names['E'], '100'])
        out = open('/tmp/%s-%s.mon' % (prefix, tag), 'w+')
        mon = subprocess.Popen(wrap + [ip, '-n', names['L']] + MONITOR, stdout=out,
                               stderr=subprocess.STDOUT)
        time.sleep(0.5)
        for ns, step in STEPS:
            run(['-n', names[ns]] + words(step))
        time.sleep(1.0)
        mon.send_signal(signal.SIGTERM)
        mon.wait(10)
        out.seek(0)
        text = out.read()
        out.close()
        os.unlink(out.name)
    finally:
        for n in names.values():
            run(['netns', 'del', n])
    for w, n in names.items():
        text = text.replace(n, '@' + w)
    return normalise(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ifcored', required=True)
    ap.add_argument('--ifcore-run', required=True)
    ap.add_argument('--ip', default='ip')
    ap.add_argument('--verbose', action='store_true')
    a = ap.parse_args()
    prefix = 'ifcnsid-%d' % os.getpid()
    if subprocess.run([a.ip, 'netns', 'add', prefix], stderr=subprocess.DEVNULL).returncode:
        print('SKIP: network namespaces cannot be made here')
        return 77
    subprocess.run([a.ip, 'netns', 'del', prefix])
    kernel = side(a.ip, prefix, 'k', [])
    daemon = Ifcored(a.ifcored)
    try:
        ifcore = side(a.ip, prefix, 'f', [a.ifcore_run, '--socket', daemon.sock, '--'])
    finally:
        daemon.stop()
    if a.verbose:
        print(kernel)
    if kernel == ifcore:
        print('same: %d lines of `ip monitor all-nsid`' % len(kernel.splitlines()))
        return 0
    for d in difflib.unified_diff(kernel.splitlines(), ifcore.splitlines(), 'kernel', 'ifcore',
                                  lineterm=''):
        print(d)
    return 1


if __name__ == '__main__':
    sys.exit(main())
