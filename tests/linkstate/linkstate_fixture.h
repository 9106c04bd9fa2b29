// Test helpers for link state and frames: request builders, a Change recorder and frames.
#pragma once

#include <net/if.h>

#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/veth.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ifcore/frame.h"
#include "ifcore/linkwatch.h"
#include "support/engine_fixture.h"

namespace ifcore::test {

// Records every Change notification with the operstate and carrier it carried.
struct ChangeRecorder : Subscriber {
  struct Seen {
    std::string dev;
    std::uint8_t operstate;
    bool carrier;
  };
  std::vector<Seen> seen;
  Result<void> on_event(Control&, const EventInfo& ev) override {
    if (ev.event == NetdevEvent::Change)
      seen.push_back({ev.dev.name(), ev.dev.reported_operstate(), ev.dev.carrier()});
    return ok();
  }
  std::size_t count(const std::string& name) const {
    std::size_t n = 0;
    for (auto& s : seen) n += s.dev == name;
    return n;
  }
  const Seen* last(const std::string& name) const {
    for (auto it = seen.rbegin(); it != seen.rend(); ++it)
      if (it->dev == name) return &*it;
    return nullptr;
  }
};

class LinkStateTest : public CoreTest {
 protected:
  Namespace& def(Control& ctl) { return *ctl.find_namespace("default"); }
  Device* must(Result<Device*> r) {
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : nullptr;
  }
  static LinkRequest with_data(std::string kind, std::string name, AttrList data) {
    LinkRequest r = link_req(std::move(kind), std::move(name));
    r.has_info_data = true;
    r.info_data = std::move(data);
    return r;
  }
  static LinkRequest veth(std::string name, std::string peer) {
    auto p = std::make_shared<LinkRequest>();
    p->name = std::move(peer);
    Attr a{VETH_INFO_PEER, AttrShape::LinkMsg};
    a.link = std::move(p);
    return with_data("veth", std::move(name), {a});
  }
  // Creates the veth pair a/b (both down) in the default namespace; returns {a, b}.
  std::pair<Device*, Device*> veth_ab(Control& ctl) {
    Device* a = must(ctl.create_link(def(ctl), veth("a", "b")));
    return {a, ctl.find(def(ctl), "b")};
  }
  static LinkRequest vlan(std::string name, int link, std::uint16_t id) {
    LinkRequest r = with_data("vlan", std::move(name), {Attr::u16(IFLA_VLAN_ID, id)});
    r.link = static_cast<std::uint32_t>(link);
    return r;
  }
  static LinkRequest macvlan(std::string name, int link) {
    LinkRequest r =
        with_data("macvlan", std::move(name), {Attr::u32(IFLA_MACVLAN_MODE, MACVLAN_MODE_BRIDGE)});
    r.link = static_cast<std::uint32_t>(link);
    return r;
  }
  // An Ethernet frame from `src` to `dst` of `len` bytes.
  static std::vector<std::uint8_t> frame(const HwAddr& dst, const HwAddr& src,
                                         std::size_t len = 60) {
    std::vector<std::uint8_t> b(len, 0);
    auto d = dst.bytes(), s = src.bytes();
    std::copy(d.begin(), d.end(), b.begin());
    std::copy(s.begin(), s.end(), b.begin() + 6);
    b[12] = 0x08;  // IPv4
    return b;
  }
  static HwAddr broadcast() { return HwAddr::ethernet({0xff, 0xff, 0xff, 0xff, 0xff, 0xff}); }
  static std::uint64_t rx(const Device* d) { return d->counters().rx_packets.load(); }
  static std::uint64_t tx(const Device* d) { return d->counters().tx_packets.load(); }
  static std::uint64_t tx_dropped(const Device* d) { return d->counters().tx_dropped.load(); }
};

}  // namespace ifcore::test
