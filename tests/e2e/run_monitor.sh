#!/bin/bash
# tests/e2e/run_monitor.sh — `monitor OBJECT` as another client sees a scenario: runs the
# scenario's lines before "#monitor" as a batch, starts `monitor OBJECT` in the background,
# runs the rest as a second batch from another process, waits for the notifications to
# settle, stops the monitor and compares the normalised monitor output (then the batches'
# output and exit statuses) with a golden file.
#
#   run_monitor.sh MODE IFC SCENARIO GOLDEN [OBJECT]
#
# OBJECT: what to monitor (link when not given).
# MODE: kernel — `ifc --kernel -n NS` in a fresh namespace; ip — the real `ip -n NS`;
#       daemon — `ifc --socket $IFCORED_SOCKET` (with_daemon.sh starts one).
# UPDATE_GOLDEN=1 writes the golden file instead of comparing. Exit 77: cannot run here.
set -u
here=$(dirname "$(realpath "$0")")
mode=$1 ifc=$(realpath "$2") scenario=$(realpath "$3") golden=$(realpath -m "$4") object=${5:-link}
. "$here/lib.sh"

work=$(mktemp -d)
mon=""
trap '[ -n "$mon" ] && kill -KILL $mon 2>/dev/null; delete_ns; rm -rf "$work"' EXIT

case $mode in
  kernel) make_ns; tool=("$ifc" --kernel -n "$ns") ;;
  ip) make_ns; tool=(ip -n "$ns") ;;
  daemon)
    if [ -z "${IFCORED_SOCKET:-}" ]; then echo "SKIP: no ifcored (IFCORED_SOCKET unset)"; exit 77; fi
    tool=("$ifc" --socket "$IFCORED_SOCKET") ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac

# The two halves, keeping the scenario's line numbers (other lines blanked).
awk '/^#monitor/ { half = 1; print ""; next } { print (half ? "" : $0) }' "$scenario" >"$work/before.ifc"
awk '/^#monitor/ { half = 1; print ""; next } { print (half ? $0 : "") }' "$scenario" >"$work/after.ifc"
cd "$work" || exit 1

(cd "$work" && "${tool[@]}" -force -batch before.ifc) >"$work/batch" 2>&1
echo "exit $?" >>"$work/batch"
timeout 10 "${tool[@]}" monitor "$object" >"$work/monitor" 2>&1 &
mon=$!
sleep 0.5  # the monitor has read the device names and joined its groups
"${tool[@]}" -force -batch after.ifc >>"$work/batch" 2>&1
echo "exit $?" >>"$work/batch"

# Settle: the kernel's link watch may take a second; then wait until the output is still.
[ "$mode" != daemon ] && sleep 1.2
last=-1
for _ in $(seq 30); do
  size=$(stat -c %s "$work/monitor")
  [ "$size" = "$last" ] && break
  last=$size
  sleep 0.2
done
if ! kill -0 $mon 2>/dev/null; then
  echo "FAIL: the monitor ended early:"; cat "$work/monitor"; exit 1
fi
kill -TERM $mon
wait $mon 2>/dev/null
mon=""

{ cat "$work/monitor"; echo "--"; cat "$work/batch"; } >"$work/out"
normalise "$work/out" "$work/out.n"
compare "$golden" "$work/out.n" "$mode monitor $(basename "$scenario")"
