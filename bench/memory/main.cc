// bench/memory/main.cc — ifcore-idle-memory: what one idle device costs (docs/MEMORY.md).
// Makes an engine, then N dummies (down, no address) in its default namespace with
// create_link, and prints the growth of the resident set (VmRSS) over the empty engine,
// divided by N. Built twice: with the programs' allocator (tcmalloc) and with glibc's
// malloc (-glibc), an embedder's default.
//
//   ifcore-idle-memory [N]   (default 1000000)
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "ifcore/ifcore.h"

namespace {

// The resident set now (VmRSS), in bytes.
std::size_t rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

// Makes `n` idle dummies; false (and a message) at the first failure.
bool make_dummies(ifcore::Engine& engine, long n) {
  auto ctl = engine.control();
  ifcore::Namespace& ns = *ctl.find_namespace("default");
  ifcore::LinkRequest req;
  req.kind = "dummy";
  for (long i = 0; i < n; ++i) {
    std::string name = fmt::format("idle{}", i);
    req.name = name;
    if (auto dev = ctl.create_link(ns, req); !dev) {
      fmt::print(stderr, "ifcore-idle-memory: create {}: {}\n", name, dev.error().message);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  if (n <= 0) {
    fmt::print(stderr, "usage: ifcore-idle-memory [COUNT > 0]\n");
    return 2;
  }
  auto engine = ifcore::make_engine();
  const std::size_t empty = rss();
  if (!make_dummies(*engine, n)) return 1;
  const std::size_t full = rss();
  fmt::print("{} idle dummies: RSS {:.1f} MiB over the empty engine, {:.0f} bytes per device\n", n,
             static_cast<double>(full - empty) / (1 << 20),
             static_cast<double>(full - empty) / static_cast<double>(n));
  return 0;
}
