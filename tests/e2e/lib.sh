# tests/e2e/lib.sh — shared by the e2e scripts (sourced): a fresh network namespace for the
# kernel modes, and the normalisation of output before it is compared with a golden file.

# make_ns: sets $ns to a new namespace (without IPv6 DAD) or exits 77 (skip).
ns=""
make_ns() {
  if ! command -v ip >/dev/null; then echo "SKIP: iproute2's ip is not installed"; exit 77; fi
  ns="ifc-e2e-$$-$RANDOM"
  if ! ip netns add "$ns" 2>/dev/null; then
    ns=""
    echo "SKIP: network namespaces are not permitted here"
    exit 77
  fi
  # No duplicate address detection: IPv6 addresses are not "tentative" for a random while.
  ip netns exec "$ns" sh -c 'echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad; echo 0 >/proc/sys/net/ipv6/conf/all/accept_dad' 2>/dev/null
}
delete_ns() { [ -n "$ns" ] && ip netns delete "$ns" 2>/dev/null; ns=""; }

# normalise IN OUT: random MACs (not all-zero, not broadcast, not the bridge group address)
# become xx:xx:xx:xx:xx:xx (bridge ids keep their priority); probe times and the bridge's
# gc_timer (a countdown that depends on when the line is printed) and a resilient nexthop
# bucket's idle time (which runs on) become N.
normalise() {
  sed -E \
    -e 's/00:00:00:00:00:00/@ZERO@/g; s/ff:ff:ff:ff:ff:ff/@BCAST@/g; s/01:80:c2:00:00:00/@GROUP@/g' \
    -e 's/([0-9a-f]{2}:){5}[0-9a-f]{2}/xx:xx:xx:xx:xx:xx/g' \
    -e 's/([0-9a-f]{4})\.([0-9a-f]{1,2}:){5}[0-9a-f]{1,2}/\1.xx:xx:xx:xx:xx:xx/g' \
    -e 's/@ZERO@/00:00:00:00:00:00/g; s/@BCAST@/ff:ff:ff:ff:ff:ff/g; s/@GROUP@/01:80:c2:00:00:00/g' \
    -e 's/first arrival after [0-9]+ us/first arrival after N us/g' \
    -e 's/"first_arrival_us":[0-9]+/"first_arrival_us":N/g' \
    -e 's/gc_timer +[0-9]+\.[0-9]+/gc_timer N/g; s/"gc_timer":[0-9]+/"gc_timer":N/g' \
    -e 's/idle_time [0-9]+(\.[0-9]+)?/idle_time N/g; s/"idle_time":[0-9]+(\.[0-9]+)?/"idle_time":N/g' \
    "$1" >"$2"
}

# compare GOLDEN FILE WHAT: diff (or write the golden file with UPDATE_GOLDEN=1); exits.
compare() {
  if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$2" "$1"
    echo "wrote $1"
    exit 0
  fi
  if ! diff -u "$1" "$2"; then
    echo "FAIL: $3 differs from $(basename "$1")"
    exit 1
  fi
  echo "PASS: $3"
  exit 0
}
