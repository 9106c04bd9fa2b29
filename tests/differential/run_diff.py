#!/usr/bin/python3
"""The differential suite: the real `ip` against the live kernel and through ifcore.

Each steps file (steps/*.ip) is a scenario: one `ip` command line per line (the words after
`ip`), run twice from a fresh state:
  - kernel: `ip -n NS WORDS` in a fresh network namespace (IPv6 duplicate address detection
    off, accept_dad 0 in "default" and "all", so that addresses are not "tentative" for a
    random while);
  - ifcore: `ifcore-run --socket SOCK -- ip WORDS` against a fresh ifcored, given the same
    accept_dad by `ifc --socket SOCK sysctl -w` (`--ifc`, default: the ifc beside ifcored).
A line starting with `bridge ` runs iproute2's `bridge` tool instead (`--bridge`, default
`bridge`): `bridge -n NS WORDS` on the kernel and `ifcore-run --socket SOCK -- bridge WORDS`
through the shim (WORDS: the rest of the line, e.g. `bridge fdb show br br0`).
Standard output, standard error and the exit status of every step are compared after this
normalisation, which both sides get:
  - MAC addresses (random) become MAC, except the all-zero, broadcast and bridge group ones,
    the fixed multicast groups 33:33:00:00:00:XX and 01:00:5e:00:00:XX, and the
    02:00:00:00:00:XX addresses steps write themselves;
    bridge ids (PRIO.MAC, printed without zero padding) become PRIO.MAC;
  - EUI-64 link-local addresses (made from the random MACs) become fe80::EUI;
  - counters of real traffic (`-s`: the kernel's IPv6 sends router and neighbour
    solicitations; ifcore's devices carry no traffic unless probed) become N;
  - the bridge's gc_timer (a countdown) becomes N.
  - a resilient nexthop bucket's idle time (`idle_time 0.12`, clock ticks that run on from
    the bucket's last move or use) becomes N;
  - neighbour cache times (`used A/B/C` of `-s neigh`, clock ticks that run on) become N;
  - a neighbour table's reachable time (`reachable 28156` of `ip ntable`: Linux draws it
    at random between half and one and a half times base_reachable) becomes N;
  - lifetimes counted down (`valid_lft 29sec`, `expires 99sec`) may differ by one second
    (a second's boundary may pass between the two sides' reads).
A word `@NAME` (a letter, then letters, digits or `_`) is a named network namespace of the
scenario's own, one per side (`ip netns add @A` on both sides would otherwise make the same
/run/netns entry twice): IFCDIFF-@NAME-k on the kernel's, IFCDIFF-@NAME-f on ifcore's
(IFCDIFF: the scenario's namespace's name); both read `@NAME` again in the outputs, and
whatever of them is left is deleted after the scenario. `netns add` and `netns del` run on
the kernel without `-n NS` (ip's `-n` gives itself a mount namespace, which would keep the
bind mount of a namespace it adds).
A line `#settle` pauses both sides (the kernel applies carrier and operstate changes in
its link watch, a little later); other lines starting with `#` are comments. A step
written `sorted: WORDS` compares its output lines sorted: Linux dumps its neighbour tables
in the order of a hash seeded at random for each table, which no other run repeats.

A step that differs fails the run unless `known.txt` lists it ("FILE:LINE reason"); a listed
step that no longer differs fails it too, so the list stays true. The closing line is
"N passed, M failed" (known differences count as passed and are reported).

  run_diff.py --ifcored BIN --ifcore-run BIN [--ifc BIN] [--ip ip] [--bridge bridge]
              [--only FILE[:LINE]] [--verbose] STEPS...

Exit 77 (ctest's skip) where network namespaces cannot be made.
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

MAC = re.compile(r'\b(?:[0-9a-f]{1,2}:){5}[0-9a-f]{1,2}\b')
KEEP_MACS = {'00:00:00:00:00:00', 'ff:ff:ff:ff:ff:ff', '01:80:c2:00:00:00'}
KEEP_MAC = re.compile(r'^(33:33:00:00:00|01:00:5e:00:00|02:00:00:00:00):[0-9a-f]{2}$')
EUI64 = re.compile(r'fe80::[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}')
COUNTER_ROW = re.compile(r'^(\s+)([0-9 ]+[0-9])\s*$')
IDLE_TIME = re.compile(r'idle_time [0-9]+(?:\.[0-9]+)?|"idle_time": ?[0-9]+(?:\.[0-9]+)?')
REACHABLE = re.compile(r'(?<![_a-z])reachable [0-9]+|"reachable": ?[0-9]+')
GC_TIMER = re.compile(r'gc_timer +[0-9]+\.[0-9]+|"gc_timer":[0-9.]+')


def normalise(text):
    def mac(m):
        return m.group(0) if m.group(0) in KEEP_MACS or KEEP_MAC.match(m.group(0)) else 'MAC'
    out = []
    after_counter_header = False
    for line in text.splitlines():
        line = MAC.sub(mac, line)
        line = EUI64.sub('fe80::EUI', line)
        line = GC_TIMER.sub(lambda m: '"gc_timer":N' if m.group(0)[0] == '"' else 'gc_timer N', line)
        line = re.sub(r'"(rx|tx)":\{[^}]*\}', r'"\1":{N}', line)
        line = re.sub(r'used [0-9]+/[0-9]+/[0-9]+', 'used N/N/N', line)
        line = REACHABLE.sub(lambda m: '"reachable":N' if m.group(0)[0] == '"' else 'reachable N', line)
        line = IDLE_TIME.sub(lambda m: '"idle_time":N' if m.group(0)[0] == '"' else 'idle_time N', line)
        if after_counter_header and COUNTER_ROW.match(line):
            line = re.sub(r'[0-9]+', 'N', line)
        after_counter_header = bool(re.match(r'^\s+(RX|TX):', line))
        out.append(line)
    return '\n'.join(out)


LIFETIME = re.compile(r'((?:valid|preferred)_lft |"(?:valid|preferred)_life_time":|expires )(\d+)')


def same_but_a_second(a, b):
    """Whether two outputs differ only in lifetimes counted down (`valid_lft 29sec`,
    `expires 99sec`) by one second: the two sides read them a moment apart, and a second's
    boundary may pass between."""
    pa, pb = LIFETIME.split(a), LIFETIME.split(b)
    if len(pa) != len(pb):
        return False
    for i, (x, y) in enumerate(zip(pa, pb)):
        if i % 3 == 2:
            if abs(int(x) - int(y)) > 1:
                return False
        elif x != y:
            return False
    return True


def shown(line):
    """A step as a command line: `ip WORDS`, or the `bridge WORDS` it is."""
    words = line.split()
    if words and words[0] == 'sorted:':
        words = words[1:]
    return line if words and words[0] == 'bridge' else 'ip ' + line


def steps_of(path):
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip():
                continue
            yield n, line


class Ifcored:
    def __init__(self, binary):
        self.dir = tempfile.mkdtemp(prefix='ifc-diff.')
        self.sock = os.path.join(self.dir, 'ifcore.sock')
        self.log = open(os.path.join(self.dir, 'ifcored.log'), 'w')
        self.proc = subprocess.Popen([binary, '--socket', self.sock], stderr=self.log)
        deadline = time.time() + 10
        while time.time() < deadline:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                s.connect(self.sock)
                s.close()
                return
            except OSError:
                s.close()
                if self.proc.poll() is not None:
                    break
                time.sleep(0.01)
        raise RuntimeError('ifcored did not start: ' + open(self.log.name).read())

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = -9
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return rc


def run(argv, env=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=30)
    return p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace'), p.returncode


def load_known(path):
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith('#'):
                    continue
                key, _, reason = line.partition(' ')
                known[key] = reason
    return known


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ifcored', required=True)
    ap.add_argument('--ifcore-run', required=True)
    ap.add_argument('--ifc')
    ap.add_argument('--ip', default='ip')
    ap.add_argument('--bridge', default='bridge')
    ap.add_argument('--known', default=os.path.join(HERE, 'known.txt'))
    ap.add_argument('--only')
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('steps', nargs='+')
    a = ap.parse_args()

    probe = 'ifcdiff-probe-%d' % os.getpid()
    if subprocess.run([a.ip, 'netns', 'add', probe], stderr=subprocess.DEVNULL).returncode != 0:
        print('SKIP: network namespaces cannot be made here')
        return 77
    subprocess.run([a.ip, 'netns', 'del', probe])
    named = re.compile(r'^@[A-Za-z][A-Za-z0-9_]*$')

    known = load_known(a.known)
    passed = failed = errors = 0
    known_seen = []
    for path in a.steps:
        name = os.path.basename(path)
        if a.only and a.only.split(':')[0] != name:
            continue
        ns = 'ifcdiff-%d-%s' % (os.getpid(), name.split('.')[0])
        subprocess.run([a.ip, 'netns', 'add', ns], check=True)
        daemon = None
        own = set()  # the scenario's own namespaces (@NAME) on both sides

        def side(word, tag):
            if not named.match(word):
                return word
            own.add('%s-%s-%s' % (ns, word[1:], tag))
            return '%s-%s-%s' % (ns, word[1:], tag)

        def unside(text):
            return re.sub(re.escape(ns) + r'-([A-Za-z][A-Za-z0-9_]*)-[kf]\b', r'@\1', text)
        try:
            subprocess.run([a.ip, 'netns', 'exec', ns, 'sh', '-c',
                            'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad; '
                            'echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad'], check=True)
            daemon = Ifcored(a.ifcored)
            subprocess.run([a.ifc or os.path.join(os.path.dirname(a.ifcored), 'ifc'),
                            '--socket', daemon.sock, 'sysctl', '-w',
                            'net.ipv6.conf.default.accept_dad=0',
                            'net.ipv6.conf.all.accept_dad=0'],
                           stdout=subprocess.DEVNULL, check=True)
            env = dict(os.environ, IFCORE_SOCKET=daemon.sock)
            for n, line in steps_of(path):
                if line.strip() == '#settle':
                    time.sleep(1.2)
                    continue
                if line.lstrip().startswith('#'):
                    continue
                key = '%s:%d' % (name, n)
                if a.only and ':' in a.only and a.only != key:
                    continue
                words = line.split()
                ordered = True
                if words and words[0] == 'sorted:':
                    ordered = False
                    words = words[1:]
                tool = a.ip
                if words and words[0] == 'bridge':
                    tool = a.bridge
                    words = words[1:]
                # `ip -n NS netns add X` would bind-mount X inside the mount namespace `-n`
                # makes for itself, lost when ip exits: adding and deleting run outside NS.
                outside = words[:1] == ['netns'] and words[1:2] in (['add'], ['del'], ['delete'])
                k = run([tool] + ([] if outside else ['-n', ns]) + [side(w, 'k') for w in words])
                errors += k[2] != 0
                f = run([a.ifcore_run, '--socket', daemon.sock, '--', tool] +
                        [side(w, 'f') for w in words], env)

                def text(r):
                    out = unside(r[0])
                    out = out if ordered else ''.join(sorted(out.splitlines(True)))
                    return normalise('%s%s\nexit %d' % (out, unside(r[1]), r[2]))
                kt, ft = text(k), text(f)
                same = kt == ft or same_but_a_second(kt, ft)
                if key in known:
                    if same:
                        failed += 1
                        print('STALE %s: listed in known.txt but no longer differs: %s' % (key, shown(line)))
                    else:
                        passed += 1
                        known_seen.append(key)
                        if a.verbose:
                            print('KNOWN %s: %s (%s)' % (key, shown(line), known[key]))
                    continue
                if same:
                    passed += 1
                    if a.verbose:
                        print('PASS  %s: %s' % (key, shown(line)))
                    continue
                failed += 1
                print('DIFF  %s: %s' % (key, shown(line)))
                import difflib
                for d in difflib.unified_diff(kt.splitlines(), ft.splitlines(), 'kernel', 'ifcore',
                                              lineterm='', n=1):
                    print('      ' + d)
        finally:
            if daemon:
                rc = daemon.stop()
                if rc != 0:
                    failed += 1
                    print('FAIL  %s: ifcored exited %d on SIGTERM' % (name, rc))
            for name in sorted(own):
                if os.path.exists('/run/netns/' + name):
                    subprocess.run([a.ip, 'netns', 'del', name])
            subprocess.run([a.ip, 'netns', 'del', ns])
    if known_seen:
        print('known differences (known.txt): %d' % len(known_seen))
        for key in known_seen:
            print('  %s %s' % (key, known[key]))
    print('%d steps, %d of them errors on the kernel' % (passed + failed, errors))
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
