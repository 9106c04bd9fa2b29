#!/bin/bash
# tests/clients/semantics.sh — runs netlink_semantics_tests against the kernel in a fresh
# network namespace (MODE kernel) or through ifcore-run against the ifcored of
# $IFCORED_SOCKET (MODE shim). Exit 77 (skip) where namespaces cannot be made.
#   semantics.sh kernel TESTS | semantics.sh shim TESTS IFCORE-RUN
set -u
mode=$1 tests=$2
case $mode in
  kernel)
    if ! unshare -n true 2>/dev/null; then echo "SKIP: cannot make a network namespace"; exit 77; fi
    exec unshare -n "$tests" ;;
  shim)
    export IFCORE_SOCKET=${IFCORED_SOCKET:?no ifcored}
    # A sanitizer build's test program: its runtime comes after the preloaded library.
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
    exec "$3" -- "$tests" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
