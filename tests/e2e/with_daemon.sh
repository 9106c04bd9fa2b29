#!/bin/bash
# tests/e2e/with_daemon.sh — runs a command against an ifcored of its own: starts the
# daemon on a socket in a fresh temporary directory, exports IFCORED_SOCKET (and the
# daemon's process id as IFCORED_PID), runs the command, then stops the daemon with SIGTERM
# and checks that it exited 0 and removed its socket.
#
#   with_daemon.sh IFCORED [IFCORED-OPTIONS...] -- COMMAND [ARGS...]
#
# The exit status is the command's (77 = skip passes through); 1 if the command passed
# but the daemon did not start or stop cleanly.
set -u
ifcored=$1
shift
dopts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do dopts+=("$1"); shift; done
[ $# -gt 0 ] && shift
if [ $# = 0 ]; then echo "usage: with_daemon.sh IFCORED [OPTIONS...] -- COMMAND..."; exit 2; fi

dir=$(mktemp -d /tmp/ifc-e2e-daemon.XXXXXX)
chmod 755 "$dir"  # peers of other uids (the unauthorised-peer test) reach the socket
sock=$dir/ifcore.sock
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

"$ifcored" --socket "$sock" "${dopts[@]}" 2>"$dir/ifcored.log" &
pid=$!
# Listening: /proc/net/unix shows the socket with __SO_ACCEPTCON (flags 00010000).
listening() { awk -v p="$sock" '$4 == "00010000" && $NF == p { found = 1 } END { exit !found }' /proc/net/unix; }
for _ in $(seq 500); do
  listening && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "FAIL: ifcored exited before listening:"; cat "$dir/ifcored.log"
    pid=""
    exit 1
  fi
  sleep 0.01
done
if ! listening; then echo "FAIL: ifcored is not listening on $sock"; exit 1; fi

IFCORED_SOCKET=$sock IFCORED_PID=$pid "$@"
status=$?

kill -TERM "$pid"
for _ in $(seq 500); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
if kill -0 "$pid" 2>/dev/null; then
  echo "FAIL: ifcored still runs 5 s after SIGTERM"
  kill -KILL "$pid"
fi
wait "$pid"
drc=$?
pid=""
if [ $drc != 0 ]; then
  echo "FAIL: ifcored exited $drc after SIGTERM:"; cat "$dir/ifcored.log"
  [ $status = 0 ] && status=1
fi
if [ -e "$sock" ]; then
  echo "FAIL: ifcored left its socket $sock behind"
  [ $status = 0 ] && status=1
fi
exit $status
