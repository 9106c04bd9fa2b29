// cli/netns_cmd.cc — `ifc netns add|delete|list`. ifcore names its namespaces: against
// the daemon or the embedded engine the names travel in RTM_NEWNSID / RTM_DELNSID /
// RTM_GETNSID with IFCORE_NETNSA_NAME. Against the kernel, `ip`'s convention: a network
// namespace kept alive by a bind mount at /var/run/netns/NAME.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "cli/commands.h"
#include "rtnl/wire/nsid.h"

namespace ifcore::cli {
namespace {

constexpr const char* kNetnsDir = "/var/run/netns";

bool kernel(Ctx& c) {
  return std::string_view(c.client->transport().target()) == "kernel";
}

Result<void> kernel_add(const std::string& name) {
  ::mkdir(kNetnsDir, 0755);
  std::string path = std::string(kNetnsDir) + "/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (fd < 0) return die(1, "Cannot create namespace file \"{}\": {}", path, std::strerror(errno));
  ::close(fd);
  // A child makes the namespace and pins it with a bind mount; this process stays put.
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNET) < 0) _exit(10);
    if (::mount("/proc/self/ns/net", path.c_str(), "none", MS_BIND, nullptr) < 0) _exit(11);
    _exit(0);
  }
  int st = 0;
  if (pid < 0 || ::waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    ::unlink(path.c_str());
    return die(1, "Failed to create a new network namespace \"{}\": {}", name,
               WEXITSTATUS(st) == 10 ? "Operation not permitted" : "bind mount failed");
  }
  return ok();
}

Result<void> kernel_del(const std::string& name) {
  std::string path = std::string(kNetnsDir) + "/" + name;
  ::umount2(path.c_str(), MNT_DETACH);
  if (::unlink(path.c_str()) < 0)
    return die(1, "Cannot remove namespace file \"{}\": {}", path, std::strerror(errno));
  return ok();
}

Result<void> kernel_list(Ctx& c) {
  DIR* d = ::opendir(kNetnsDir);
  c.out->open_array();
  if (d) {
    while (auto* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      c.out->open_object();
      c.out->kv("name", e->d_name, std::string(e->d_name) + "\n");
      c.out->close();
    }
    ::closedir(d);
  }
  c.out->close();
  return ok();
}

Result<void> ifcore_modify(Ctx& c, std::uint16_t type, const std::string& name) {
  wire::NsidMessage n;
  n.name = name;
  wire::MessageBuilder b;
  std::uint16_t flags = NLM_F_REQUEST | (type == RTM_NEWNSID ? NLM_F_CREATE | NLM_F_EXCL : 0);
  if (auto e = wire::encode_nsid(b, {type, flags, c.client->next_seq(), 0}, n); !e)
    return die(2, "{}", e.error().message);
  return c.client->talk(b);
}

Result<void> ifcore_list(Ctx& c) {
  wire::MessageBuilder b;
  wire::NsidMessage all;
  all.name = "";  // ifcore: every namespace, not only those the session's has given an id
  if (auto e = wire::encode_nsid(
          b, {RTM_GETNSID, NLM_F_REQUEST | NLM_F_DUMP, c.client->next_seq(), 0}, all);
      !e)
    return die(2, "{}", e.error().message);
  std::vector<std::pair<std::string, std::optional<std::int32_t>>> names;
  IFCORE_TRY(c.client->dump(b, [&](const wire::Message& m) {
    auto n = wire::decode_nsid(m);
    if (n && n->name) names.emplace_back(*n->name, n->nsid);
  }));
  c.out->open_array();
  for (const auto& [name, id] : names) {
    c.out->open_object();
    c.out->kv("name", name, name);
    if (id && *id >= 0) c.out->kv("id", *id, fmt::format(" (id: {})", *id));
    c.out->text("\n");
    c.out->close();
  }
  c.out->close();
  return ok();
}

}  // namespace

Result<void> do_netns(Ctx& c, Args& a) {
  std::string cmd = a.done() ? "list" : a.take();
  if (matches(cmd, "list") || cmd == "show") return kernel(c) ? kernel_list(c) : ifcore_list(c);
  if (cmd == "add" || matches(cmd, "delete")) {
    if (a.done()) return die(1, "No netns name specified");
    std::string name = a.take();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      return die(1, "Invalid netns name \"{}\"", name);
    bool add = cmd == "add";
    if (kernel(c)) return add ? kernel_add(name) : kernel_del(name);
    return ifcore_modify(c, add ? RTM_NEWNSID : RTM_DELNSID, name);
  }
  return die(255, "Command \"{}\" is unknown, try \"ip netns help\".", cmd);
}

}  // namespace ifcore::cli
