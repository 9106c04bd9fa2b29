// shim/run.cc — ifcore-run: starts a command with libifcore-preload.so preloaded, so that
// its NETLINK_ROUTE sockets talk to ifcored instead of the kernel.
//
//   ifcore-run [--socket PATH] [--] COMMAND [ARG...]
//
// The library is looked for in $IFCORE_PRELOAD, then beside this program
// (../lib/libifcore-preload.so, as in the build tree and an installed prefix); when it is
// not there, ifcore-run refuses to start the command (the dynamic linker would only warn
// and run it against the kernel, where its changes would be real). The socket goes to the
// command as $IFCORE_SOCKET. Exit status: the command's, 127 when
// it cannot be started, 125 for ifcore-run's own errors (as env(1) and chroot(1)).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "ifcore/version.h"

namespace {

int usage(FILE* out, int status) {
  std::fputs(
      "Usage: ifcore-run [--socket PATH] [--] COMMAND [ARG...]\n"
      "Runs COMMAND with libifcore-preload.so: its rtnetlink sockets go to ifcored.\n",
      out);
  return status;
}

// The preload library's path, or empty when there is none where it is looked for.
std::string library_path() {
  struct stat st {};
  if (const char* p = std::getenv("IFCORE_PRELOAD"); p && *p)
    return stat(p, &st) == 0 ? std::string(p) : std::string();
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    std::string dir(exe);
    dir.resize(dir.rfind('/'));
    std::string lib = dir + "/../lib/libifcore-preload.so";
    if (stat(lib.c_str(), &st) == 0) return lib;
    lib = dir + "/../lib/ifcore/libifcore-preload.so";
    if (stat(lib.c_str(), &st) == 0) return lib;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") return usage(stdout, 0);
    if (a == "-V" || a == "--version") {
      std::printf("ifcore-run %s\n", IFCORE_VERSION_STRING);
      return 0;
    }
    if (a == "--socket" || a == "-s") {
      if (i + 1 >= argc) return usage(stderr, 125);
      setenv("IFCORE_SOCKET", argv[++i], 1);
      continue;
    }
    if (a.rfind("--socket=", 0) == 0) {
      setenv("IFCORE_SOCKET", argv[i] + 9, 1);
      continue;
    }
    if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "ifcore-run: unknown option '%s'\n", argv[i]);
      return usage(stderr, 125);
    }
    break;
  }
  if (i >= argc) return usage(stderr, 125);
  std::string preload = library_path();
  if (preload.empty()) {
    std::fprintf(stderr,
                 "ifcore-run: libifcore-preload.so not found (IFCORE_PRELOAD, or ../lib beside "
                 "ifcore-run): %s is not started, as it would talk to the kernel\n",
                 argv[i]);
    return 125;
  }
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  execvp(argv[i], argv + i);
  int e = errno;
  std::fprintf(stderr, "ifcore-run: %s: %s\n", argv[i], std::strerror(e));
  return e == ENOENT ? 127 : 126;
}
