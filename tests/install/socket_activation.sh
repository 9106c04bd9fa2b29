#!/bin/sh
# socket_activation.sh BUILD — ifcored started the way ifcored.socket starts it: by
# systemd-socket-activate, which listens on a SOCK_SEQPACKET socket and starts the daemon
# with it on the first connection (sd_listen_fds). The daemon answers ifc there, leaves
# the socket file (not its own) at exit, and refuses an inherited socket of another type.
# The installed units pass `systemd-analyze verify`.
set -eu
build=$1
bin=$(cd "$build/bin" && pwd)
command -v systemd-socket-activate >/dev/null || { echo "socket_activation.sh: SKIP: no systemd-socket-activate (package systemd)"; exit 0; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "socket_activation.sh: $*" >&2; [ ! -e "$tmp/d.log" ] || cat "$tmp/d.log" >&2; exit 1; }
sock=$tmp/ifcore.sock

systemd-socket-activate --seqpacket -l "$sock" "$bin/ifcored" --reserve 0 >"$tmp/d.log" 2>&1 &
pid=$!
i=0
while [ ! -S "$sock" ]; do
  i=$((i + 1)); [ $i -lt 500 ] || fail "no socket at $sock"; sleep 0.01
done
# The first connection starts the daemon; it is served once the daemon runs.
"$bin/ifc" --socket "$sock" link add act0 type dummy || fail "ifc link add through the activated daemon"
"$bin/ifc" --socket "$sock" -br link show >"$tmp/links" || fail "ifc link show"
grep -q '^act0 ' "$tmp/links" || { cat "$tmp/links"; fail "act0 not listed"; }
grep -q "listening on $sock" "$tmp/d.log" || fail "the daemon did not name the inherited socket"
kill -TERM "$pid"
st=0; wait "$pid" || st=$?
pid=
[ $st -eq 0 ] || fail "ifcored exited $st on SIGTERM"

# A stream socket is not ifcored's: refused, with a message, exit status 2.
rm -f "$sock"
systemd-socket-activate -l "$sock" "$bin/ifcored" --reserve 0 >"$tmp/d.log" 2>&1 &
pid=$!
i=0
while [ ! -S "$sock" ]; do
  i=$((i + 1)); [ $i -lt 500 ] || fail "no stream socket at $sock"; sleep 0.01
done
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1]); s.recv(1)' "$sock" 2>/dev/null || true
st=0; wait "$pid" || st=$?
pid=
[ $st -eq 2 ] || fail "ifcored on a stream socket exited $st, not 2"
grep -q "not a listening AF_UNIX SOCK_SEQPACKET socket" "$tmp/d.log" || fail "no message for the stream socket"

# The units: ExecStart pointed at this build's ifcored.
if command -v systemd-analyze >/dev/null; then
  mkdir "$tmp/units"
  sed "s|^ExecStart=[^ ]*|ExecStart=$bin/ifcored|" "$build/packaging/ifcored.service" >"$tmp/units/ifcored.service"
  cp "$(dirname "$0")/../../packaging/systemd/ifcored.socket" "$tmp/units/"
  out=$(cd "$tmp/units" && systemd-analyze verify --man=no ./ifcored.socket ./ifcored.service 2>&1) ||
    fail "systemd-analyze verify: $out"
  [ -z "$out" ] || fail "systemd-analyze verify: $out"
fi
echo "socket_activation.sh: the activated ifcored answered ifc"
