// tests/rtnl/fixture.h — an engine, a Server and sessions; request builders and reply
// readers for raw rtnetlink exchanges.
#pragma once

#include <net/if.h>  // before any <linux/if*.h>

#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include <memory>
#include <string>
#include <vector>

#include "ifcore/rtnl.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/netlink.h"
#include "support/engine_fixture.h"
#include "wire/fixture.h"

namespace ifcore::rtnl::test {

using wire::test::Bytes;

// Reply datagrams and the messages split from them (spans into `dgs`).
struct Replies {
  std::vector<Datagram> dgs;
  std::vector<wire::Message> msgs;

  void split() {
    msgs.clear();
    for (const auto& d : dgs) {
      auto r = wire::split_messages(d);
      EXPECT_TRUE(r) << (r ? "" : r.error().message);
      if (r) msgs.insert(msgs.end(), r->begin(), r->end());
    }
  }
  // The errno of the last message if it is an NLMSG_ERROR (0 = ACK); -1 otherwise.
  int last_error() const {
    if (msgs.empty() || msgs.back().hdr.nlmsg_type != NLMSG_ERROR) return -1;
    auto e = wire::decode_error(msgs.back());
    return e ? e->error : -1;
  }
  wire::ErrorReply last_error_reply() const {
    auto e = wire::decode_error(msgs.back());
    return e ? *e : wire::ErrorReply{};
  }
};

inline Replies roundtrip(Session& s, const Bytes& datagram) {
  Replies r;
  s.handle(datagram, [&](Datagram&& d) { r.dgs.push_back(std::move(d)); });
  r.split();
  return r;
}

// The types of the notifications `s` has queued, in order (they are taken off the queue).
inline std::vector<std::uint16_t> notification_types(Session& s) {
  std::vector<std::uint16_t> out;
  Datagram d;
  while (s.pop_notification(d)) {
    auto msgs = wire::split_messages(d);
    EXPECT_TRUE(msgs);
    if (msgs)
      for (const auto& m : *msgs) out.push_back(m.hdr.nlmsg_type);
  }
  return out;
}

inline Bytes link_msg(std::uint16_t type, std::uint16_t flags, std::uint32_t seq,
                      const LinkRequest& req) {
  wire::MessageBuilder b;
  auto r = wire::encode_link_request(
      b, {type, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), seq, 0}, req);
  EXPECT_TRUE(r);
  return b.take();
}

inline LinkRequest named(std::string name, std::optional<std::string> kind = {}) {
  LinkRequest r;
  r.name = std::move(name);
  r.kind = std::move(kind);
  return r;
}

// A veth pair NAME / PEER to create; `up` sets IFF_UP on both ends.
// (Linux refuses a peer asked to come up with the pair: ENOTCONN; set it up afterwards.)
inline LinkRequest veth_pair(std::string name, std::string peer) {
  auto p = std::make_shared<LinkRequest>();
  p->name = std::move(peer);
  LinkRequest r = named(std::move(name), "veth");
  Attr a{VETH_INFO_PEER, AttrShape::LinkMsg};
  a.link = std::move(p);
  r.has_info_data = true;
  r.info_data = {a};
  return r;
}

// A link dump with no filter.
inline wire::GetLinkRequest dump_req() {
  wire::GetLinkRequest g;
  g.dump = true;
  return g;
}

inline Bytes getlink(std::uint32_t seq, const wire::GetLinkRequest& g, std::uint16_t flags = 0) {
  wire::MessageBuilder b;
  auto r = wire::encode_getlink(
      b, {RTM_GETLINK, static_cast<std::uint16_t>(NLM_F_REQUEST | flags), seq, 0}, g);
  EXPECT_TRUE(r);
  return b.take();
}

inline constexpr std::uint16_t kCreate = NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;

class RtnlTest : public ifcore::test::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    server = std::make_unique<Server>(*engine);
    SessionOptions o;
    o.port_id = 4242;
    session = open(o);
  }
  void TearDown() override {
    session.reset();
    server.reset();
    EngineTest::TearDown();
  }
  std::unique_ptr<Session> open(SessionOptions o = {}) {
    auto s = server->open_session(std::move(o));
    EXPECT_TRUE(s);
    return s ? std::move(*s) : nullptr;
  }
  Replies send(const Bytes& datagram) { return roundtrip(*session, datagram); }
  // Creates a dummy through the session; returns the reply's errno.
  int create(const std::string& name, std::uint16_t extra = 0) {
    return send(link_msg(RTM_NEWLINK, kCreate | extra, 1, named(name, "dummy"))).last_error();
  }
  Device* find(const std::string& name, std::string_view ns = "default") {
    auto ctl = engine->control();
    Namespace* n = ctl.find_namespace(ns);
    return n ? ctl.find(*n, name) : nullptr;
  }
  void set_group(const std::string& name, std::uint32_t group) {
    Device* d = find(name);
    ASSERT_NE(d, nullptr);
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.set_group(*d, group));
  }
  std::size_t device_count(std::string_view ns = "default") {
    auto ctl = engine->control();
    return ctl.find_namespace(ns)->device_count();
  }

  std::unique_ptr<Server> server;
  std::unique_ptr<Session> session;
};

// A bridge br0 with the veth end v0 as its port (v1 the other end), the session asking for
// extack messages.
class BridgePortTest : public RtnlTest {
 protected:
  void SetUp() override {
    RtnlTest::SetUp();
    session->set_option(NETLINK_EXT_ACK, 1);
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 1, named("br0", "bridge"))).last_error(), 0);
    ASSERT_EQ(send(link_msg(RTM_NEWLINK, kCreate, 2, veth_pair("v0", "v1"))).last_error(), 0);
    Device* v0 = find("v0");
    Device* br = find("br0");
    auto ctl = engine->control();
    ASSERT_TRUE(ctl.set_master(*v0, br));
  }
};

}  // namespace ifcore::rtnl::test
