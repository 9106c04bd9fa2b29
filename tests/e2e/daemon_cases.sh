#!/bin/bash
# tests/e2e/daemon_cases.sh — end-to-end cases that are more than one batch: peers without
# the right to write, `-batch` from standard input with and without -force, `ifc stats`,
# the probe under both link-watch policies, and probe against the kernel.
#
#   daemon_cases.sh CASE IFC [ARGS...]
#
#   unauthorised GOLDEN     a peer running as uid 65534 (root only, else skip)
#   batch GOLDEN            -batch - with -force, then without
#   stats                   ifc stats: keys present, devices_registered grows
#   probe_policy POLICY     first arrival of probes after a veth pair's second end comes up
#                           (POLICY: kernel — from the end opened first ~1 s; adaptive — at once)
#   probe_kernel            ifc --kernel probe: not supported, exit 2 (needs no daemon)
#   sysctl GOLDEN           ifc sysctl (scenarios/sysctl.sh) against the daemon
#   sysctl_kernel GOLDEN    the same against the kernel in a namespace of its own (needs no
#                           daemon), and ifc --embedded sysctl
#   huge_pages HEAP         after 5000 dummies, ifcored's heap lies in mappings advised for
#                           huge pages when HEAP is tcmalloc and IFCORE_HUGE_PAGES is not 0,
#                           and in none otherwise (HEAP: tcmalloc or system)
# All but probe_kernel and sysctl_kernel talk to $IFCORED_SOCKET (with_daemon.sh starts one).
set -u
here=$(dirname "$(realpath "$0")")
. "$here/lib.sh"
case=$1 ifc=$(realpath "$2") arg=${3:-}
# A golden file's path, before the cd below.
[ -n "$arg" ] && [ "$case" != probe_policy ] && [ "$case" != huge_pages ] && arg=$(realpath -m "$arg")

work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

if [ "$case" != probe_kernel ] && [ "$case" != sysctl_kernel ] && [ -z "${IFCORED_SOCKET:-}" ]; then
  echo "SKIP: no ifcored (IFCORED_SOCKET unset)"
  exit 77
fi
ifc() { "$ifc" --socket "$IFCORED_SOCKET" "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
# A statistic from `ifc stats`.
stat() { ifc stats | awk -v k="$1" '$1 == k { print $2 }'; }

case $case in
  unauthorised)
    golden=$arg
    if [ "$(id -u)" != 0 ]; then echo "SKIP: running ifc as another uid needs root"; exit 77; fi
    if ! command -v setpriv >/dev/null; then echo "SKIP: setpriv is not installed"; exit 77; fi
    nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$ifc" --socket "$IFCORED_SOCKET" "$@"; }
    ifc link add v0 type veth peer name v1 || fail "root could not add a device"
    before=$(ifc -d link show)
    registered=$(stat devices_registered)
    {
      echo "# uid 65534 changes"
      nobody link add d0 type dummy; echo "exit $?"
      nobody link set v0 up; echo "exit $?"
      nobody link set v0 mtu 1400; echo "exit $?"
      nobody link delete v1; echo "exit $?"
      nobody address add 10.0.0.1/24 dev v0; echo "exit $?"
      nobody probe v0 v1; echo "exit $?"
      printf 'link add x0 type dummy\nlink set v1 up\n' | nobody -force -batch -; echo "exit $?"
      echo "# uid 65534 reads"
      nobody link show v1 >/dev/null; echo "exit $?"
      nobody stats >/dev/null; echo "exit $?"
    } >"$work/out" 2>&1
    [ "$(ifc -d link show)" = "$before" ] || fail "an unauthorised peer changed the devices"
    [ "$(stat devices_registered)" = "$registered" ] || fail "an unauthorised peer registered a device"
    normalise "$work/out" "$work/out.n"
    compare "$golden" "$work/out.n" "unauthorised peer"
    ;;
  batch)
    golden=$arg
    lines='link add v0 type veth peer name v1\nlink add v0 type veth peer name v9\nlink set v0 mtu 1400\nlink show v0\nlink delete nosuch\nlink show v1\n'
    {
      echo "# -force"
      printf "$lines" | ifc -force -batch -; echo "exit $?"
      echo "# without -force: the first failure ends the batch"
      printf "$lines" | ifc -batch -; echo "exit $?"
    } >"$work/out" 2>&1
    normalise "$work/out" "$work/out.n"
    compare "$golden" "$work/out.n" "batch from standard input"
    ;;
  create_batch)
    # A run of `link add` lines goes as one create batch: one Register pass for a thousand
    # dummies (a line at a time would make a thousand). Without -force the first failed line
    # ends the batch and the lines before it stay made, as with ip -batch.
    golden=$arg
    for i in $(seq 0 999); do echo "link add b$i type dummy"; done >"$work/many.ifc"
    p1=$(stat notifier_passes)
    ifc -batch "$work/many.ifc" >"$work/many.out" 2>&1 || fail "batch: $(cat "$work/many.out")"
    p2=$(stat notifier_passes)
    [ "$(ifc -br link show | grep -c '^b[0-9]')" = 1000 ] || fail "not 1000 devices after the batch"
    [ $((p2 - p1)) -le 2 ] || fail "1000 link add lines took $((p2 - p1)) notifier passes"
    printf 'link add c0 type dummy\nlink add c1 type dummy\nlink add c0 type dummy\nlink add c2 type dummy\nlink show c1\n' >"$work/stop.ifc"
    {
      echo "# without -force: line 3 ends the batch, c0 and c1 stay, c2 is not made"
      (cd "$work" && ifc -batch stop.ifc); echo "exit $?"
      ifc -br link show c1
      ifc -br link show c2; echo "exit $?"
    } >"$work/out" 2>&1
    normalise "$work/out" "$work/out.n"
    compare "$golden" "$work/out.n" "create batch of $((p2 - p1)) notifier passes; stop at a failed line"
    ;;
  huge_pages)
    heap=$arg
    [ -d /sys/kernel/mm/transparent_hugepage ] || { echo "SKIP: no transparent huge pages here"; exit 77; }
    [ -n "${IFCORED_PID:-}" ] || fail "IFCORED_PID unset"
    for i in $(seq 0 4999); do echo "link add h$i type dummy"; done >"$work/many.ifc"
    ifc -batch "$work/many.ifc" >"$work/many.out" 2>&1 || fail "batch: $(cat "$work/many.out")"
    # madvise(MADV_HUGEPAGE) marks a mapping "hg" in its VmFlags.
    advised=$(awk '/^VmFlags:/ && / hg( |$)/ { n++ } END { print n + 0 }' "/proc/$IFCORED_PID/smaps")
    if [ "$heap" = tcmalloc ] && [ "${IFCORE_HUGE_PAGES:-1}" != 0 ]; then
      [ "$advised" -gt 0 ] || fail "no mapping of ifcored is advised for huge pages"
    else
      [ "$advised" = 0 ] || fail "$advised mappings advised for huge pages (heap $heap, IFCORE_HUGE_PAGES=${IFCORE_HUGE_PAGES:-unset})"
    fi
    [ "$(ifc -br link show | grep -c '^h[0-9]')" = 5000 ] || fail "not 5000 devices after the batch"
    ;;
  stats)
    ifc stats >"$work/s1" 2>&1 || fail "ifc stats: $(cat "$work/s1")"
    for k in devices_registered devices_unregistered batches notifier_calls grace_periods \
      notifier_time_ns pending_finalization; do
      grep -q "^$k [0-9][0-9]*$" "$work/s1" || fail "no \"$k N\" line in: $(cat "$work/s1")"
    done
    r1=$(awk '$1 == "devices_registered" { print $2 }' "$work/s1")
    ifc link add v0 type veth peer name v1 || fail "link add"
    r2=$(stat devices_registered)
    [ "$r2" -eq $((r1 + 2)) ] || fail "devices_registered went from $r1 to $r2 (want +2)"
    ifc link delete v0 || fail "link delete"
    [ "$(stat devices_unregistered)" -ge 2 ] || fail "devices_unregistered did not grow"
    ifc -j stats | grep -q '"devices_registered":[0-9]' || fail "ifc -j stats: $(ifc -j stats)"
    echo "PASS: ifc stats (devices_registered $r1 -> $r2)"
    ;;
  probe_policy)
    policy=$arg
    # The pair's creation opens the link watch's window once its thread has run; on a
    # loaded machine that thread may run late, and see the carrier come on in the same run
    # (as Linux's linkwatch work would). So the second end comes up a moment later.
    printf 'link add v0 type veth peer name v1\nlink set v0 up\n' >"$work/make.ifc"
    printf 'link set v1 up\nprobe v1 v0 count 1 timeout 1400\nprobe v0 v1 count 1 timeout 1400\n' >"$work/p.ifc"
    made=$(date +%s%N)
    ifc -batch "$work/make.ifc" >"$work/out" 2>&1 || fail "batch: $(cat "$work/out")"
    sleep 0.1
    start=$(date +%s%N)
    ifc -batch "$work/p.ifc" >"$work/out" 2>&1 || fail "batch: $(cat "$work/out")"
    took=$((($(date +%s%N) - start) / 1000000))
    cat "$work/out"
    us() { sed -n "$1p" "$work/out" | sed -nE 's/.*first arrival after ([0-9]+) us.*/\1/p'; }
    back=$(us 1) first=$(us 2)
    [ -n "$back" ] || fail "the probe from the second end saw nothing arrive"
    [ -n "$first" ] || fail "the probe from the first end saw nothing arrive within 1.4 s"
    [ "$back" -lt 200000 ] || fail "from the second end the first arrival took $back us"
    case $policy in
      kernel)
        # The window opened when the pair was made; on a loaded machine (or under ASan)
        # part of it has passed before the probe starts, so ask for the clear majority, or,
        # where the probe from the first end started after the second (ms since the pair
        # was made), that the window was over by then.
        late=$(((start - made) / 1000000 + back / 1000))
        [ "$first" -ge 300000 ] || [ "$late" -ge 900 ] ||
          fail "kernel link watch: first arrival after $first us, $late ms after the pair was made (want ~1 s)" ;;
      adaptive)
        [ "$first" -lt 200000 ] || fail "adaptive link watch: first arrival after $first us" ;;
      *) fail "unknown policy $policy" ;;
    esac
    echo "PASS: probe under linkwatch=$policy: $back us from the second end, $first us from the first ($took ms)"
    ;;
  probe_kernel)
    "$ifc" --kernel probe lo lo >"$work/out" 2>&1
    rc=$?
    [ $rc = 2 ] || fail "exit $rc (want 2): $(cat "$work/out")"
    [ "$(cat "$work/out")" = "probe: not supported by this target" ] || fail "said: $(cat "$work/out")"
    echo "PASS: ifc --kernel probe is not supported (exit 2)"
    ;;
  sysctl | sysctl_kernel)
    golden=$arg
    # Each line: the command, its output and errors, its exit status.
    run() { echo "# $*"; target "$@" 2>&1; echo "exit $?"; }
    if [ "$case" = sysctl ]; then
      target() { ifc "$@"; }
      ifc link add v0 type veth peer name v1 || fail "link add"
    else
      make_ns
      trap 'delete_ns; rm -rf "$work"' EXIT
      ip -n "$ns" link add v0 type veth peer name v1 || fail "ip link add"
      target() { "$ifc" --kernel -n "$ns" "$@"; }
      # The embedded engine answers through the same message.
      out=$("$ifc" --embedded sysctl -w net.ipv6.conf.lo.forwarding=1 2>&1) || fail "embedded: $out"
      [ "$out" = "net.ipv6.conf.lo.forwarding = 1" ] || fail "embedded said: $out"
    fi
    . "$here/scenarios/sysctl.sh" >"$work/out"
    compare "$golden" "$work/out" "ifc sysctl ($case)"
    ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
