#!/bin/bash
# completion.sh BUILD — packaging/completion/ifc sourced in bash: objects, commands,
# options, kinds, and device names asked of a running ifcored (the --socket on the line).
set -eu
build=$1
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bin
tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "completion.sh: $*" >&2; exit 1; }
sock=$tmp/ifcore.sock
"$bin/ifcored" --socket "$sock" --reserve 0 2>"$tmp/d.log" &
pid=$!
i=0
until "$bin/ifc" --socket "$sock" link show >/dev/null 2>&1; do
  i=$((i + 1)); [ $i -lt 500 ] || { cat "$tmp/d.log"; fail "ifcored did not start"; }; sleep 0.01
done
"$bin/ifc" --socket "$sock" link add comp0 type dummy
"$bin/ifc" --socket "$sock" link add comp1 type veth peer name other1

export PATH=$bin:$PATH
source "$here/../../packaging/completion/ifc"
# complete LINE: the candidates for the last word of LINE (empty when LINE ends in a space).
complete_line() {
  read -ra COMP_WORDS <<<"$1"
  [[ $1 == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _ifc
  printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() {
  local got
  got=$(complete_line "$1")
  [[ $got == "$2" ]] || fail "\"$1\": got \"$got\", expected \"$2\""
}
expect "ifc li" "link"
expect "ifc ne" "neighbour netconf netns nexthop"
expect "ifc -x" ""
expect "ifc -j" "-json"
expect "ifc --so" "--socket"
expect "ifc link " "add change delete help list property set show"
expect "ifc -j addr fl" "flush"
expect "ifc --socket $sock link set " "comp0 comp1 dev lo other1"
expect "ifc --socket $sock link set c" "comp0 comp1"
expect "ifc --socket $sock address show dev o" "other1"
expect "ifc --socket $sock link add x type v" "veth vlan vrf vxlan"
expect "ifc --socket $sock link set comp0 master " "comp0 comp1 lo other1"
expect "ifc -family i" "inet inet6"
# With no daemon there, device names are none (and no error reaches the terminal).
expect "ifc --socket $tmp/none.sock link set dev " ""
echo "completion.sh: 14 completions"
