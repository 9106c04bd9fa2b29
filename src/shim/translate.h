// shim/translate.h — rewrites what a program sends so that ifcored can act on it: the
// references to kernel network namespaces that only mean something in the program's
// process (a descriptor of /run/netns/NAME, a pid) become ifcore namespace names.
//
//   RTM_NEWLINK/RTM_SETLINK  IFLA_NET_NS_FD, IFLA_NET_NS_PID  -> IFCORE_IFLA_NET_NS_NAME
//     (also inside a veth's VETH_INFO_PEER)
//   RTM_{NEW,GET,DEL}NSID     NETNSA_FD, NETNSA_PID           -> IFCORE_NETNSA_NAME
//
// A namespace named this way is made in ifcored if it does not exist yet (it stands for
// a kernel namespace that exists). Messages that carry none are left byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ifcore/result.h"

namespace ifcore::shim {

// Rewrites the datagram in place. Errors: EBADF for a descriptor that is not a network
// namespace, ESRCH for a pid without one (as the kernel answers), or the connection's.
Result<void> translate_request(std::vector<std::uint8_t>& datagram, std::uint64_t daemon_netns);

// The ifcore namespace of a namespace descriptor or a process. Errors: EBADF / ESRCH.
Result<std::string> namespace_of_fd(int fd, std::uint64_t daemon_netns);
Result<std::string> namespace_of_pid(std::uint32_t pid, std::uint64_t daemon_netns);

// Makes the namespace in ifcored if it is absent (nothing for "default").
Result<void> ensure_namespace(const std::string& ns);

}  // namespace ifcore::shim
