// examples/create_delete.cc — a program that embeds ifcore: it creates N dummy devices
// (default 3) in the engine's default namespace, lists them, deletes them in one batch,
// and checks that none is left. Built against an installed ifcore (README, "Install"):
//
//   cmake -S examples -B build-example -DCMAKE_PREFIX_PATH=PREFIX   (find_package)
//   g++ -std=c++20 create_delete.cc $(pkg-config --cflags --libs ifcore)
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ifcore/ifcore.h"

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 3;
  if (n <= 0) {
    std::fprintf(stderr, "usage: create_delete [COUNT > 0]\n");
    return 2;
  }
  std::printf("ifcore %.*s (headers %s)\n", static_cast<int>(ifcore::version().size()),
              ifcore::version().data(), IFCORE_VERSION_STRING);
  auto engine = ifcore::make_engine();
  {
    auto ctl = engine->control();
    ifcore::Namespace& ns = *ctl.find_namespace("default");
    ifcore::LinkRequest req;
    req.kind = "dummy";
    req.name = "example%d";
    std::vector<ifcore::Device*> made;
    for (int i = 0; i < n; ++i) {
      auto dev = ctl.create_link(ns, req);
      if (!dev) {
        std::fprintf(stderr, "create: %s\n", dev.error().message.c_str());
        return 1;
      }
      std::printf("created %s ifindex %d\n", (*dev)->name().c_str(), (*dev)->ifindex());
      made.push_back(*dev);
    }
    if (auto r = ctl.delete_links(made); !r) {
      std::fprintf(stderr, "delete: %s\n", r.error().message.c_str());
      return 1;
    }
    for (ifcore::Device* d : ns.devices_locked())
      if (d->kind().name() == "dummy") {
        std::fprintf(stderr, "device %s is still there\n", d->name().c_str());
        return 1;
      }
    std::printf("deleted %d\n", n);
  }
  engine->drain();
  return 0;
}
