// Test helpers for the protocols: request builders and a listener that records events.
#pragma once

#include <net/if.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "ifcore/inet.h"
#include "support/engine_fixture.h"

namespace ifcore::test {

inline IpAddr ip(std::string_view s) {
  return *IpAddr::parse(s);
}

inline inet::AddrRequest addr_req(Device& d, std::string_view a, int plen,
                                  std::uint32_t flags = 0) {
  inet::AddrRequest r;
  r.local = ip(a);
  r.family = r.local->family();
  r.address = r.local;
  r.ifindex = d.ifindex();
  r.prefixlen = static_cast<std::uint8_t>(plen);
  r.flags = flags;
  return r;
}

inline inet::RouteRequest route_req(std::string_view dst, int len) {
  inet::RouteRequest r;
  r.dst = ip(dst);
  r.family = r.dst.family();
  r.dst_len = static_cast<std::uint8_t>(len);
  return r;
}

// A route's gateway, or its hops' joined by commas ("gw1,gw2"); "-" for none.
inline std::string gateways_of(const inet::RouteInfo& r) {
  if (r.nexthops.empty()) return r.gateway.empty() ? "-" : r.gateway.to_string();
  std::string out;
  for (const inet::NextHop& h : r.nexthops) out += (out.empty() ? "" : ",") + h.gateway.to_string();
  return out;
}

// Records notifications as "+addr 10.0.0.1/24" / "-route 10.0.0.0/24 t254".
struct Recorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_addr(Namespace&, inet::ProtoEvent ev, const inet::AddrInfo& a) override {
    events.push_back(fmt::format("{}addr {}/{}", ev == inet::ProtoEvent::New ? '+' : '-',
                                 a.local.to_string(), a.prefixlen));
  }
  void on_route(Namespace&, inet::ProtoEvent ev, const inet::RouteInfo& r) override {
    events.push_back(fmt::format("{}route {}/{} t{}", ev == inet::ProtoEvent::New ? '+' : '-',
                                 r.dst.to_string(), r.dst_len, r.table));
  }
};

// An engine test that hears the protocols' notifications in `rec` once it calls listen(),
// and stops listening before the engine goes.
template <class R>
class ListeningTest : public EngineTest {
 protected:
  void TearDown() override {
    if (listening) {
      auto ctl = engine->control();
      inet::remove_listener(ctl, rec);
    }
    EngineTest::TearDown();
  }
  void listen(Control& ctl) {
    inet::add_listener(ctl, rec);
    listening = true;
  }
  R rec;
  bool listening = false;
};

// "type dst/len table" strings of a namespace's routes of `family` through `ifindex`.
inline std::vector<std::string> routes_of(Control& ctl, Namespace& ns, int family, int ifindex) {
  std::vector<std::string> out;
  for (auto& r : inet::list_routes(ctl, ns, family))
    if (r.oif == ifindex)
      out.push_back(fmt::format("{} {}/{} t{}", r.type, r.dst.to_string(), r.dst_len, r.table));
  return out;
}

}  // namespace ifcore::test
