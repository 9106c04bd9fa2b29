// state/store_replay.cc — the state store's rows replayed as requests at start, in an
// order that satisfies every dependency (store.h, docs/STATE.md).
#include "state/store.h"

#include "ifcore/namespace.h"
#include "rtnl/wire/sysctl_msg.h"
#include "state/store_impl.h"

namespace ifcore::state {

using namespace detail;

}  // namespace ifcore::state

namespace ifcore::state::detail {

// Reads the kept rows: namespaces in the order they were made, objects in the order they
// changed. Errors: the file cannot be read; what was read before stays in the vectors.
Result<void> load_rows(sqlite3* db, std::vector<NsRow>& nss, std::vector<ObjRow>& rows) {
  sqlite3_stmt* s = nullptr;
  int rc =
      sqlite3_prepare_v2(db, "SELECT name, id, seq FROM namespaces ORDER BY seq", -1, &s, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    nss.push_back({column_text(s, 0), sqlite3_column_int(s, 1), sqlite3_column_int64(s, 2)});
    rc = SQLITE_OK;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(sql_error(db, "state file: read"));
  rc = sqlite3_prepare_v2(db,
                          "SELECT ns, type, key, dev, seq, valid_until, preferred_until, summary, "
                          "msg FROM objects ORDER BY seq",
                          -1, &s, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    ObjRow r;
    r.ns = column_text(s, 0);
    r.type = column_text(s, 1);
    View k = column_blob(s, 2);
    r.key.assign(k.begin(), k.end());
    r.dev = sqlite3_column_int(s, 3);
    r.seq = sqlite3_column_int64(s, 4);
    if (sqlite3_column_type(s, 5) != SQLITE_NULL) r.valid_until = sqlite3_column_int64(s, 5);
    if (sqlite3_column_type(s, 6) != SQLITE_NULL) r.preferred_until = sqlite3_column_int64(s, 6);
    r.summary = column_text(s, 7);
    View m = column_blob(s, 8);
    r.msg.assign(m.begin(), m.end());
    rows.push_back(std::move(r));
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(sql_error(db, "state file: read"));
  return ok();
}

}  // namespace ifcore::state::detail

namespace ifcore::state {

namespace {

// ---- replay

struct LinkInfo {
  const ObjRow* row = nullptr;
  ifinfomsg ifi{};
  std::vector<RawAttr> as;
  std::string name, kind;
  View info_data;
  std::optional<std::uint32_t> link, master;
  std::optional<std::int32_t> link_netnsid;
  bool done = false;
};

// One request's answer: ok, or the error it got (with the extended ack's message).
Result<void> answer_of(const std::vector<rtnl::Datagram>& replies) {
  for (const auto& d : replies) {
    std::size_t off = 0;
    while (off + sizeof(nlmsghdr) <= d.size()) {
      nlmsghdr h;
      std::memcpy(&h, d.data() + off, sizeof(h));
      if (h.nlmsg_len < sizeof(h) || off + h.nlmsg_len > d.size()) break;
      if (h.nlmsg_type == NLMSG_ERROR && h.nlmsg_len >= sizeof(h) + sizeof(nlmsgerr)) {
        nlmsgerr e;
        std::memcpy(&e, d.data() + off + sizeof(h), sizeof(e));
        if (e.error != 0) {
          std::string msg;
          if (h.nlmsg_flags & NLM_F_ACK_TLVS) {
            std::size_t tl = off + sizeof(h) + sizeof(nlmsgerr);
            if (!(h.nlmsg_flags & NLM_F_CAPPED)) tl += e.msg.nlmsg_len - sizeof(nlmsghdr);
            if (tl <= off + h.nlmsg_len)
              msg =
                  str_of(attrs_of(View(d.data() + tl, off + h.nlmsg_len - tl)), NLMSGERR_ATTR_MSG);
          }
          return fail(-e.error, "{}{}{}", std::strerror(-e.error), msg.empty() ? "" : ": ", msg);
        }
      }
      off += NLMSG_ALIGN(h.nlmsg_len);
    }
  }
  return ok();
}

class Replayer {
 public:
  Replayer(Engine& e, rtnl::Server& s, bool recover) : engine_(e), server_(s), recover_(recover) {}

  Result<rtnl::Session*> session(const std::string& ns) {
    auto it = sessions_.find(ns);
    if (it != sessions_.end()) return it->second.get();
    rtnl::SessionOptions o;
    o.ns = ns;
    o.port_id = 0x7fff0000u + static_cast<std::uint32_t>(sessions_.size());
    auto s = server_.open_session(o);
    if (!s) return fail(s.error());
    (*s)->set_option(NETLINK_EXT_ACK, 1);
    (*s)->set_option(NETLINK_CAP_ACK, 1);
    return sessions_.emplace(ns, std::move(*s)).first->second.get();
  }

  Result<void> send(const std::string& ns, std::uint16_t type, std::uint16_t flags, View body) {
    auto s = session(ns);
    if (!s) return fail(s.error());
    Bytes m =
        message(type, static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), ++seq_, body);
    std::vector<rtnl::Datagram> replies;
    (*s)->handle(m, [&](rtnl::Datagram&& d) { replies.push_back(std::move(d)); });
    return answer_of(replies);
  }

  // A record that could not be applied: an error, or (recovering) a report.
  Result<void> failed(const ObjRow& r, const Error& e) {
    std::string text = fmt::format("namespace {}: {} {}: {}", r.ns, r.type, r.summary, e.message);
    if (!recover_) return fail(e.code, "cannot restore {}", text);
    engine_.log(LogLevel::Error, "ifcored: state: not restored: " + text);
    lost.push_back({&r, e.message});
    return ok();
  }

  struct Lost {
    const ObjRow* row;
    std::string error;
  };
  std::vector<Lost> lost;
  std::map<std::string, std::size_t> restored;

 private:
  Engine& engine_;
  rtnl::Server& server_;
  bool recover_;
  std::uint32_t seq_ = 0;
  std::map<std::string, std::unique_ptr<rtnl::Session>> sessions_;
};

Bytes ifinfo(int index, std::uint32_t flags = 0, std::uint32_t change = 0) {
  ifinfomsg ifi{};
  ifi.ifi_index = index;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  Bytes b(sizeof(ifi));
  std::memcpy(b.data(), &ifi, sizeof(ifi));
  return b;
}

void copy_attr(Bytes& b, const std::vector<RawAttr>& as, std::uint16_t type) {
  if (const RawAttr* a = find(as, type)) put_attr(b, type, a->data);
}

// What a create request says of a device besides its kind: name, index and the generic
// attributes Control::apply_create_attrs takes.
void identity(Bytes& b, const LinkInfo& l) {
  copy_attr(b, l.as, IFLA_IFNAME);
  copy_attr(b, l.as, IFLA_ADDRESS);
  copy_attr(b, l.as, IFLA_MTU);
  copy_attr(b, l.as, IFLA_TXQLEN);
  copy_attr(b, l.as, IFLA_GROUP);
}

}  // namespace

Result<void> Store::replay(Engine& engine, rtnl::Server& server) {
  // Everything is read first: the replay's own announcements rewrite the rows.
  std::vector<NsRow> nss;
  std::vector<ObjRow> rows;
  if (salvaged_) {
    nss = std::move(salvaged_->nss);
    rows = std::move(salvaged_->rows);
    salvaged_.reset();
  } else {
    IFCORE_TRY(load_rows(db_, nss, rows));
  }
  if (nss.empty() && rows.empty()) return ok();

  Replayer rp(engine, server, opts_.recover);
  std::map<int, std::string> ns_by_old_id;
  std::set<std::string> known_ns;
  // 1. Namespaces, in the order they were made.
  for (const auto& n : nss) {
    ns_by_old_id[n.id] = n.name;
    Control ctl = engine.control();
    if (!ctl.find_namespace(n.name)) {
      auto made = ctl.create_namespace(n.name);
      if (!made) {
        if (!opts_.recover)
          return fail(made.error().code, "cannot restore namespace {}: {}", n.name,
                      made.error().message);
        engine.log(LogLevel::Error, fmt::format("ifcored: state: not restored: namespace {}: {}",
                                                n.name, made.error().message));
        continue;
      }
    }
    known_ns.insert(n.name);
  }
  auto ns_ok = [&](const ObjRow& r) -> Result<void> {
    if (known_ns.count(r.ns)) return ok();
    return rp.failed(r, Error{ENOENT, fmt::format("namespace {} is not kept", r.ns)});
  };

  // Sysctls in the order they were written: `default` ones before the devices (a device
  // made after such a write took its values from it), the others after them. A device's
  // setting is written under the device's name now (its ifindex is what is kept).
  auto replay_sysctls = [&](bool defaults) -> Result<void> {
    for (const auto& r : rows) {
      if (r.type != "sysctl") continue;
      auto as = attrs_of(View(r.msg).subspan(std::min<std::size_t>(r.msg.size(), 4)));
      std::string name = str_of(as, rtnl::IFCORE_SYSCTL_NAME);
      if ((name.find(".conf.default.") != std::string::npos) != defaults) continue;
      IFCORE_TRY(ns_ok(r));
      if (!known_ns.count(r.ns)) continue;
      Bytes body = r.msg;
      if (r.dev) {
        std::string dev;
        {
          Control ctl = engine.control();
          Namespace* n = ctl.find_namespace(r.ns);
          Device* d = n ? ctl.find(*n, r.dev) : nullptr;
          if (d) dev = d->name();
        }
        auto conf = name.find(".conf.");
        auto last = name.rfind('.');
        if (dev.empty() || conf == std::string::npos || last <= conf + 5) {
          IFCORE_TRY(rp.failed(r, Error{ENODEV, "its device is not kept"}));
          continue;
        }
        name = name.substr(0, conf + 6) + dev + name.substr(last);
        body.assign(r.msg.begin(), r.msg.begin() + std::min<std::ptrdiff_t>(4, r.msg.size()));
        put_str(body, rtnl::IFCORE_SYSCTL_NAME, name);
        put_str(body, rtnl::IFCORE_SYSCTL_VALUE, str_of(as, rtnl::IFCORE_SYSCTL_VALUE));
      }
      if (auto res = rp.send(r.ns, rtnl::IFCORE_NLMSG_SYSCTL, 0, body); !res)
        IFCORE_TRY(rp.failed(r, res.error()));
      else
        ++rp.restored["sysctl"];
    }
    return ok();
  };
  IFCORE_TRY(replay_sysctls(true));

  // 2. Devices: created lower before upper (IFLA_LINK), a veth with its peer.
  std::map<std::pair<std::string, int>, LinkInfo> links;
  for (const auto& r : rows) {
    if (r.type != "link") continue;
    LinkInfo l;
    l.row = &r;
    if (r.msg.size() < sizeof(ifinfomsg)) {
      IFCORE_TRY(rp.failed(r, Error{EBADMSG, "the record is too short"}));
      continue;
    }
    std::memcpy(&l.ifi, r.msg.data(), sizeof(l.ifi));
    l.as = attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(ifinfomsg))));
    l.name = str_of(l.as, IFLA_IFNAME);
    if (const RawAttr* li = find(l.as, IFLA_LINKINFO)) {
      auto info = attrs_of(li->data);
      l.kind = str_of(info, IFLA_INFO_KIND);
      if (const RawAttr* d = find(info, IFLA_INFO_DATA)) l.info_data = d->data;
    }
    l.link = u32_of(l.as, IFLA_LINK);
    l.master = u32_of(l.as, IFLA_MASTER);
    if (auto n = u32_of(l.as, IFLA_LINK_NETNSID)) l.link_netnsid = static_cast<std::int32_t>(*n);
    links.emplace(std::make_pair(r.ns, l.ifi.ifi_index), std::move(l));
  }
  auto exists = [&](const std::string& ns, int ifindex) {
    Control ctl = engine.control();
    Namespace* n = ctl.find_namespace(ns);
    return n && ctl.find(*n, ifindex) != nullptr;
  };
  auto lower_ns = [&](const LinkInfo& l) {
    if (!l.link_netnsid || *l.link_netnsid < 0) return l.row->ns;
    auto it = ns_by_old_id.find(*l.link_netnsid);
    return it == ns_by_old_id.end() ? std::string() : it->second;
  };
  // Devices the engine made by itself (a namespace's loopback) are changed, not made.
  for (auto& [k, l] : links) {
    if (!known_ns.count(k.first)) {
      IFCORE_TRY(ns_ok(*l.row));
      l.done = true;
      continue;
    }
    if (exists(k.first, k.second)) l.done = true;
  }
  constexpr std::uint32_t kUserFlags =
      IFF_UP | IFF_DEBUG | IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI | IFF_MULTICAST;
  // Indexes, so that the order costs O(N log N) for N devices: the ports each master has,
  // and which veth names which as its peer.
  std::map<std::pair<std::string, int>, int> ports_of;
  std::map<std::pair<std::string, int>, std::pair<std::string, int>> veth_named_by;
  for (const auto& [k, l] : links) {
    if (l.master && *l.master) ++ports_of[{k.first, static_cast<int>(*l.master)}];
    if (l.kind == "veth" && l.link && *l.link)
      veth_named_by[{lower_ns(l), static_cast<int>(*l.link)}] = k;
  }
  auto is_master = [&](const std::pair<std::string, int>& k) { return ports_of.count(k) > 0; };
  // Right after its create, a device is set as it was (up included, but for a master,
  // which comes up after its ports join it): a device made later on top of it then finds
  // it as it did (Linux: a vlan made on a lower device that is up stays down; one that is
  // there when the lower device comes up comes up with it).
  auto settle_new = [&](const std::pair<std::string, int>& k, const LinkInfo& l) -> Result<void> {
    std::uint32_t change = kUserFlags & ~static_cast<std::uint32_t>(IFF_PROMISC);
    if (is_master(k) || (l.master && *l.master)) change &= ~static_cast<std::uint32_t>(IFF_UP);
    Bytes b = ifinfo(l.ifi.ifi_index, l.ifi.ifi_flags & change, change);
    copy_attr(b, l.as, IFLA_IFALIAS);
    return rp.send(k.first, RTM_NEWLINK, 0, b);
  };
  std::set<std::pair<std::string, int>> created;
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [k, l] : links) {
      if (l.done) continue;
      const bool veth = l.kind == "veth";
      if (!veth && l.link && *l.link != 0) {
        std::string lns = lower_ns(l);
        if (!exists(lns, static_cast<int>(*l.link))) {
          // Waits for its lower device, if that is still to be made.
          auto lo = links.find({lns, static_cast<int>(*l.link)});
          if (lo != links.end() && !lo->second.done) continue;
        }
      }
      l.done = true;
      progress = true;
      if (l.kind.empty()) {
        IFCORE_TRY(rp.failed(*l.row, Error{EOPNOTSUPP, "the device has no kind to make it with"}));
        continue;
      }
      Bytes b = ifinfo(l.ifi.ifi_index);
      identity(b, l);
      if (!veth && l.link) put_u32(b, IFLA_LINK, *l.link);
      std::size_t li = begin_nest(b, IFLA_LINKINFO);
      put_str(b, IFLA_INFO_KIND, l.kind);
      LinkInfo* peer = nullptr;
      std::string peer_ns;
      if (veth) {
        // The end announced first was announced before the pair was tied (IFLA_LINK 0):
        // then the other end names it.
        auto p = links.end();
        if (l.link && *l.link)
          p = links.find({lower_ns(l), static_cast<int>(*l.link)});
        else if (auto n = veth_named_by.find(k); n != veth_named_by.end())
          p = links.find(n->second);
        if (p == links.end() || p->second.kind != "veth" || p->second.done) {
          IFCORE_TRY(rp.failed(*l.row, Error{ENOENT, "the veth's peer is not kept"}));
          continue;
        }
        peer = &p->second;
        std::size_t d = begin_nest(b, IFLA_INFO_DATA);
        std::size_t pn = begin_nest(b, VETH_INFO_PEER);
        Bytes pb = ifinfo(peer->ifi.ifi_index);
        identity(pb, *peer);
        if (p->first.first != k.first) put_str(pb, kIflaNetNsName, p->first.first);
        peer_ns = p->first.first;
        b.insert(b.end(), pb.begin(), pb.end());
        end_nest(b, pn);
        end_nest(b, d);
      } else if (!l.info_data.empty()) {
        // What the kind reports and does not take (identifiers, timers, counters) is left
        // out: its policy says what a request may set.
        AttrPolicy policy;
        {
          Control ctl = engine.control();
          if (const ifcore::Kind* kd = ctl.find_kind(l.kind)) policy = kd->policy();
        }
        Bytes data;
        for (const auto& a : attrs_of(l.info_data))
          if (std::any_of(policy.begin(), policy.end(), [&](const AttrPolicyEntry& e) {
                return e.type == a.type && e.shape != AttrShape::Flag;
              })) {
            // Reported, in the policy, and refused as read-only.
            if (l.kind == "macvlan" &&
                (a.type == IFLA_MACVLAN_MACADDR_COUNT || a.type == IFLA_MACVLAN_BC_QUEUE_LEN_USED))
              continue;
            if (l.kind == "bridge" && a.type == IFLA_BR_MULTI_BOOLOPT &&
                a.data.size() >= sizeof(br_boolopt_multi)) {
              // The bridge reports every option it has (Linux 6.18's mask) and takes those
              // of the headers it was built with.
              br_boolopt_multi bo;
              std::memcpy(&bo, a.data.data(), sizeof(bo));
              bo.optmask &= (1u << BR_BOOLOPT_MAX) - 1;
              bo.optval &= bo.optmask;
              put_attr(data, a.type, View(reinterpret_cast<const std::uint8_t*>(&bo), sizeof(bo)));
              continue;
            }
            put_attr(data, a.type, a.data);
          }
        put_attr(b, IFLA_INFO_DATA, data);
      }
      end_nest(b, li);
      auto r = rp.send(k.first, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, b);
      if (!r) {
        IFCORE_TRY(rp.failed(*l.row, r.error()));
        continue;
      }
      created.insert(k);
      ++rp.restored["link"];
      if (auto s = settle_new(k, l); !s) IFCORE_TRY(rp.failed(*l.row, s.error()));
      if (peer) {
        peer->done = true;
        created.insert({peer_ns, peer->ifi.ifi_index});
        ++rp.restored["link"];
        if (auto s = settle_new({peer_ns, peer->ifi.ifi_index}, *peer); !s)
          IFCORE_TRY(rp.failed(*peer->row, s.error()));
      }
    }
  }
  for (auto& [k, l] : links)
    if (!l.done) IFCORE_TRY(rp.failed(*l.row, Error{ENODEV, "its lower device is not kept"}));

  // 3. Device settings: ports before their master; flags (up) and master together.
  std::set<std::pair<std::string, int>> set_done;
  auto mark_done = [&](const std::pair<std::string, int>& k, const LinkInfo& l) {
    set_done.insert(k);
    if (l.master && *l.master)
      if (auto m = ports_of.find({k.first, static_cast<int>(*l.master)}); m != ports_of.end())
        --m->second;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [k, l] : links) {
      if (set_done.count(k)) continue;
      if (!exists(k.first, k.second)) {
        mark_done(k, l);
        continue;
      }
      // A master waits for its ports, so that it comes up with them (its carrier, and
      // what follows from it, as when it was configured).
      if (auto w = ports_of.find(k); w != ports_of.end() && w->second > 0) continue;
      mark_done(k, l);
      progress = true;
      // A port's promiscuity comes from its master: not asked again.
      std::uint32_t change = kUserFlags;
      // A port joins its master down, and comes up after it (as `ip link set P master M;
      // ip link set M up; ip link set P up` does): see the last pass below.
      if (l.master) change &= ~static_cast<std::uint32_t>(IFF_PROMISC | IFF_UP);
      Bytes b = ifinfo(l.ifi.ifi_index, l.ifi.ifi_flags & change, change);
      if (!created.count(k)) identity(b, l);
      if (l.master) put_u32(b, IFLA_MASTER, *l.master);
      copy_attr(b, l.as, IFLA_IFALIAS);
      auto r = rp.send(k.first, RTM_NEWLINK, 0, b);
      if (r) {
        if (const RawAttr* props = find(l.as, IFLA_PROP_LIST)) {
          Bytes pb = ifinfo(l.ifi.ifi_index);
          put_attr(pb, IFLA_PROP_LIST | NLA_F_NESTED, props->data);
          r = rp.send(k.first, RTM_NEWLINKPROP, 0, pb);
        }
      }
      if (!r) IFCORE_TRY(rp.failed(*l.row, r.error()));
    }
  }

  for (auto& [k, l] : links) {
    if (!l.master || !*l.master || !(l.ifi.ifi_flags & IFF_UP) || !exists(k.first, k.second))
      continue;
    Bytes b = ifinfo(l.ifi.ifi_index, IFF_UP, IFF_UP);
    if (auto r = rp.send(k.first, RTM_NEWLINK, 0, b); !r) IFCORE_TRY(rp.failed(*l.row, r.error()));
  }

  // 4. The rest, each after what it needs: addresses, nexthops (groups after their
  // members), routes, rules, neighbours.
  auto replay_type = [&](const char* type, std::uint16_t msg_type, std::uint16_t flags,
                         auto&& pick) -> Result<void> {
    for (const auto& r : rows) {
      if (r.type != type || !pick(r)) continue;
      IFCORE_TRY(ns_ok(r));
      if (!known_ns.count(r.ns)) continue;
      Bytes body = r.msg;
      if (r.valid_until || r.preferred_until) {
        const std::int64_t now = wall_now();
        ifa_cacheinfo ci{};
        ci.ifa_valid =
            r.valid_until
                ? static_cast<std::uint32_t>(std::max<std::int64_t>(0, *r.valid_until - now))
                : kForever;
        ci.ifa_prefered =
            r.preferred_until
                ? static_cast<std::uint32_t>(std::max<std::int64_t>(0, *r.preferred_until - now))
                : kForever;
        // An address whose lifetime ended while the daemon was away is gone, as it would
        // be had the daemon run.
        if (ci.ifa_valid == 0) continue;
        if (ci.ifa_prefered > ci.ifa_valid) ci.ifa_prefered = ci.ifa_valid;
        put_attr(body, IFA_CACHEINFO, View(reinterpret_cast<const std::uint8_t*>(&ci), sizeof(ci)));
      }
      auto res = rp.send(r.ns, msg_type, flags, body);
      if (!res)
        IFCORE_TRY(rp.failed(r, res.error()));
      else
        ++rp.restored[type];
    }
    return ok();
  };
  auto all = [](const ObjRow&) { return true; };
  auto is_group = [](const ObjRow& r) {
    return r.msg.size() >= sizeof(nhmsg) &&
           find(attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(nhmsg)))), NHA_GROUP) != nullptr;
  };
  IFCORE_TRY(replay_sysctls(false));
  IFCORE_TRY(replay_type("addr", RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, all));
  IFCORE_TRY(replay_type("nexthop", RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_REPLACE,
                         [&](const ObjRow& r) { return !is_group(r); }));
  IFCORE_TRY(replay_type("nexthop", RTM_NEWNEXTHOP, NLM_F_CREATE | NLM_F_REPLACE, is_group));
  IFCORE_TRY(replay_type("route", RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, all));
  IFCORE_TRY(replay_type("rule", RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, all));
  IFCORE_TRY(replay_type("rule-deleted", RTM_DELRULE, 0, all));
  IFCORE_TRY(replay_type("neigh", RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_REPLACE, all));

  std::string summary;
  for (const auto& [t, n] : rp.restored) summary += fmt::format(" {} {}", n, t);
  engine.log(LogLevel::Info,
             fmt::format("ifcored: state: restored {} namespaces,{}{}", known_ns.size(),
                         summary.empty() ? " nothing else" : summary,
                         rp.lost.empty() ? std::string()
                                         : fmt::format("; {} records not restored "
                                                       "(kept in table lost)",
                                                       rp.lost.size())));
  if (!rp.lost.empty()) {
    // Under --state-recover: what could not be applied leaves the live rows for the table
    // `lost`, with the error, so that it is neither replayed again nor forgotten.
    IFCORE_TRY(exec("BEGIN"));
    sqlite3_stmt* ins = nullptr;
    sqlite3_stmt* del = nullptr;
    sqlite3_prepare_v2(db_,
                       "INSERT INTO lost(ns, type, summary, msg, error, at) VALUES(?1, ?2, ?3, "
                       "?4, ?5, ?6)",
                       -1, &ins, nullptr);
    sqlite3_prepare_v2(db_, "DELETE FROM objects WHERE ns=?1 AND type=?2 AND key=?3", -1, &del,
                       nullptr);
    bool okay = ins && del;
    for (const auto& l : rp.lost) {
      if (!okay) break;
      okay = Stmt(ins)
                     .text(1, l.row->ns)
                     .text(2, l.row->type)
                     .text(3, l.row->summary)
                     .blob(4, l.row->msg)
                     .text(5, l.error)
                     .i64(6, wall_now())
                     .step() == SQLITE_DONE &&
             Stmt(del).text(1, l.row->ns).text(2, l.row->type).blob(3, l.row->key).step() ==
                 SQLITE_DONE;
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(del);
    if (!okay) {
      Error e = sql_error(db_, "state file: write");
      (void)exec("ROLLBACK");
      return fail(e);
    }
    IFCORE_TRY(exec("COMMIT"));
  }
  return ok();
}

}  // namespace ifcore::state
