// Test helpers for the kinds: request builders, attribute readers, and a state summary
// to compare before and after a refused request.
#pragma once

#include <arpa/inet.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "ifcore/ifcore.h"
#include "support/engine_fixture.h"

namespace ifcore::test {

class KindsTest : public EngineTest {
 protected:
  Namespace& def(Control& ctl) { return *ctl.find_namespace("default"); }

  // Every device of every namespace, one line each: what a refused request must not change.
  std::string summary(Control& ctl) {
    std::string out;
    for (Namespace* n : ctl.namespaces())
      for (Device* d : n->devices_locked()) {
        auto s = d->snapshot_locked();
        out += fmt::format("{}/{} {} {} mtu={} flags={:#x} master={} link={} carrier={} {}\n",
                           n->name(), s.ifindex, s.name, s.kind, s.mtu, s.flags, s.master_ifindex,
                           s.link_ifindex, s.carrier, s.address.to_string());
        for (const Attr& a : d->kind().fill_info(*d))
          out += fmt::format("  {}={}/{}\n", a.type, a.num, a.bin.size());
      }
    return out;
  }

  Device* must(Result<Device*> r) {
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : nullptr;
  }

  static std::uint64_t num(const AttrList& l, std::uint16_t type) {
    auto v = attr_num(l, type);
    EXPECT_TRUE(v.has_value()) << "attribute " << type << " missing";
    return v.value_or(~0ull);
  }

  static LinkRequest with_data(std::string kind, std::string name, AttrList data) {
    LinkRequest r = link_req(std::move(kind), std::move(name));
    r.has_info_data = true;
    r.info_data = std::move(data);
    return r;
  }

  // A nested list that repeats one type, as raw netlink bytes (Nested without a policy).
  static Attr raw_list(std::uint16_t type, std::uint16_t item_type,
                       const std::vector<std::vector<std::uint8_t>>& items) {
    Attr a{type, AttrShape::Binary};
    for (const auto& it : items) {
      std::uint16_t len = static_cast<std::uint16_t>(4 + it.size());
      a.bin.push_back(len & 0xff);
      a.bin.push_back(len >> 8);
      a.bin.push_back(item_type & 0xff);
      a.bin.push_back(item_type >> 8);
      a.bin.insert(a.bin.end(), it.begin(), it.end());
      while (a.bin.size() % 4) a.bin.push_back(0);
    }
    return a;
  }

  static std::uint32_t ip(const char* text) { return ntohl(inet_addr(text)); }

  std::uint64_t batches() { return engine->stats().batches; }
};

// Expects `r` to fail with `code` and a message containing `text`.
#define EXPECT_FAILS(r, want_errno, text)                                                          \
  do {                                                                                             \
    auto fails_r_ = (r);                                                                           \
    ASSERT_FALSE(fails_r_) << "expected " << errno_name(want_errno);                               \
    EXPECT_EQ(errno_name(fails_r_.error().code), std::string(errno_name(want_errno)))              \
        << fails_r_.error().message;                                                               \
    EXPECT_NE(fails_r_.error().message.find(text), std::string::npos) << fails_r_.error().message; \
  } while (0)

}  // namespace ifcore::test
