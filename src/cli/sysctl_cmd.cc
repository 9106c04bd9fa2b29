// cli/sysctl_cmd.cc — `ifc sysctl [-n] KEY...` and `ifc sysctl [-n] -w KEY=VALUE...`: the
// per-device protocol settings (net.ipv{4,6}.conf.*), printed and worded as sysctl(8)
// prints them. Against the kernel the file under /proc/sys is read or written, as Linux
// has it; against ifcored and the embedded engine, ifcore's sysctl message
// (rtnl/wire/sysctl_msg.h) carries the same name and text.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/commands.h"

#include "rtnl/wire/sysctl_msg.h"

namespace ifcore::cli {
namespace {

// sysctl(8)'s two spellings: dotted (a device's dots written as slashes) and the path
// under /proc/sys. The first separator tells which one a name uses; the other one is the
// same name with dots and slashes swapped.
bool is_dotted(const std::string& name) {
  return name.find('.') < name.find('/');
}
std::string swapped(std::string s) {
  for (char& ch : s) ch = ch == '.' ? '/' : ch == '/' ? '.' : ch;
  return s;
}
std::string dotted(const std::string& name) {
  return is_dotted(name) ? name : swapped(name);
}
std::string proc_path(const std::string& name) {
  return "/proc/sys/" + (is_dotted(name) ? swapped(name) : name);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// What sysctl(8) prints when reading or writing `name` failed with `err` (the text after
// "sysctl: ").
std::string error_text(const std::string& name, int err, bool write) {
  if (err == ENOENT)
    return fmt::format("cannot stat {}: {}", proc_path(name), std::strerror(ENOENT));
  if (err == EACCES) return fmt::format("permission denied on key \"{}\"", dotted(name));
  return fmt::format("{} key \"{}\": {}", write ? "setting" : "reading", dotted(name),
                     std::strerror(err));
}

// The machine's kernel: the file under /proc/sys, opened in the namespace `netns` names
// (`ifc -n NAME --kernel`), as `ip netns exec NAME sysctl` would.
// Returns the value read (for a write, `value`), or errno.
Result<std::string> kernel_sysctl(const std::string& netns, const std::string& name,
                                  const std::optional<std::string>& value) {
  // /proc/sys/net resolves against the namespace of the task that opens the file.
  std::string path = proc_path(name);
  int fd = -1, err = 0;
  IFCORE_TRY(in_netns(netns, [&] {
    struct stat st {};
    if (::stat(path.c_str(), &st) < 0)
      err = ENOENT;
    else if ((fd = ::open(path.c_str(), (value ? O_WRONLY : O_RDONLY) | O_CLOEXEC)) < 0)
      err = errno;
  }));
  if (err) return fail(err);
  std::string out;
  if (value) {
    std::string line = *value + "\n";
    if (::write(fd, line.data(), line.size()) < 0) err = errno;
    out = *value;
  } else {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, std::size_t(n));
    if (n < 0) err = errno;
  }
  ::close(fd);
  if (err) return fail(err);
  return trimmed(out);
}

// ifcored or the embedded engine: one IFCORE_NLMSG_SYSCTL exchange. Returns the value the
// reply carries, or errno (with the server's message); a failure to talk at all goes to
// `lost` (exit status and text) instead.
Result<std::string> message_sysctl(Ctx& c, const std::string& name,
                                   const std::optional<std::string>& value,
                                   std::optional<Error>& lost) {
  wire::MessageBuilder b;
  if (auto e = rtnl::encode_sysctl_request(b, c.client->next_seq(), {name, value}); !e)
    return fail(e.error().code == ERANGE ? ENOENT : e.error().code, "{}", e.error().message);
  std::optional<std::string> got;
  int err = 0;
  std::string ext;
  auto t = c.client->talk_raw(
      b,
      [&](const wire::Message& m) {
        if (auto r = rtnl::decode_sysctl_reply(m)) got = r->value;
      },
      err, ext);
  if (!t) {
    lost = t.error();
    return fail(EIO);
  }
  if (err) return fail(err, "{}", ext);
  if (!got) return fail(EIO, "no reply");
  return *got;
}

}  // namespace

Result<void> do_sysctl(Ctx& c, Args& a) {
  bool write = false, values_only = false;
  std::vector<std::string> items;
  while (!a.done()) {
    std::string w = a.take();
    if (w == "-w" || w == "--write")
      write = true;
    else if (w == "-n" || w == "--values")
      values_only = true;
    else if (!w.empty() && w[0] == '-')
      return die(1, "sysctl: invalid option -- '{}'", w.substr(1));
    else
      items.push_back(std::move(w));
  }
  if (items.empty()) return die(1, "sysctl: no variables specified");
  bool kernel = std::string_view(c.client->transport().target()) == "kernel";
  int failed = 0;
  for (const std::string& item : items) {
    // As sysctl(8): a word with '=' is a write, with or without -w.
    std::size_t eq = item.find('=');
    if (write && eq == std::string::npos) {
      std::fprintf(stderr, "sysctl: \"%s\" must be of the form name=value\n", item.c_str());
      ++failed;
      continue;
    }
    std::string name = trimmed(item.substr(0, eq));
    std::optional<std::string> value;
    if (eq != std::string::npos) value = item.substr(eq + 1);
    Result<std::string> r = fail(EOPNOTSUPP);
    if (kernel) {
      r = kernel_sysctl(c.netns, name, value);
    } else {
      std::optional<Error> lost;
      r = message_sysctl(c, name, value, lost);
      if (lost) return fail(*lost);
    }
    if (!r) {
      std::fprintf(stderr, "sysctl: %s\n", error_text(name, r.error().code, bool(value)).c_str());
      ++failed;
      continue;
    }
    std::string shown = value ? *value : *r;
    if (values_only)
      std::printf("%s\n", shown.c_str());
    else
      std::printf("%s = %s\n", dotted(name).c_str(), shown.c_str());
  }
  std::fflush(stdout);
  if (failed) return die(1, "");
  return ok();
}

}  // namespace ifcore::cli
