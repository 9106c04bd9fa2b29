// state/store_replay.cc — the state store's rows replayed as requests at start, in an
// order that satisfies every dependency (store.h, docs/STATE.md).
#include "state/store.h"

#include "ifcore/namespace.h"
#include "rtnl/wire/sysctl_msg.h"
#include "state/store_impl.h"

namespace ifcore::state {

using namespace detail;

namespace {

struct LinkInfo {
  const ObjRow* row = nullptr;
  ifinfomsg ifi{};
  std::vector<RawAttr> as;
  std::string name, kind;
  View info_data;
  std::optional<std::uint32_t> link, master;
  std::optional<std::int32_t> link_netnsid;
  bool done = false;
  bool short_row = false;           // too short to read: fails when the devices are made
  bool address_from_ports = false;  // see bridges_addressed_by_ports
};

// What a create request says of a device besides its kind: name, index and the generic
// attributes Control::apply_create_attrs takes.
void identity(Bytes& b, const LinkInfo& l) {
  copy_attr(b, l.as, IFLA_IFNAME);
  if (!l.address_from_ports) copy_attr(b, l.as, IFLA_ADDRESS);
  copy_attr(b, l.as, IFLA_MTU);
  copy_attr(b, l.as, IFLA_TXQLEN);
  copy_attr(b, l.as, IFLA_GROUP);
}

using LinkKey = std::pair<std::string, int>;  // namespace and ifindex, as kept

constexpr std::uint32_t kUserFlags =
    IFF_UP | IFF_DEBUG | IFF_NOARP | IFF_PROMISC | IFF_ALLMULTI | IFF_MULTICAST;

// The replay's steps, each a pass over the rows read (Store::replay calls them in order),
// and what they share: a session per namespace, the devices read, what was made.
class Replayer {
 public:
  Replayer(Engine& e, rtnl::Server& s, bool recover, const std::vector<NsRow>& nss,
           const std::vector<ObjRow>& rows)
      : engine_(e), server_(s), recover_(recover), nss_(nss), rows_(rows) {}

  Result<void> namespaces();
  Result<void> sysctls(bool defaults);
  void read_links();
  Result<void> create_links();
  Result<void> set_links();
  Result<void> raise_ports();
  template <class Pick>
  Result<void> objects(const char* type, std::uint16_t msg_type, std::uint16_t flags, Pick&& pick);
  Result<void> routes();
  Result<void> creation_defaults();
  // The log line: what was restored, and how many records were not.
  std::string summary() const;

  std::vector<Lost> lost;

 private:
  Result<rtnl::Session*> session(const std::string& ns);
  Result<void> send(const std::string& ns, std::uint16_t type, std::uint16_t flags, View body);
  // A record that could not be applied: an error, or (recovering) a report.
  Result<void> failed(const ObjRow& r, const Error& e);
  Result<void> ns_ok(const ObjRow& r);
  bool exists(const std::string& ns, int ifindex);
  std::string lower_ns(const LinkInfo& l) const;
  bool is_master(const LinkKey& k) const { return ports_of_.count(k) > 0; }
  Result<void> settle_new(const LinkKey& k, const LinkInfo& l);
  Result<void> set_addr_gen_mode(const LinkKey& k, const LinkInfo& l);
  Result<void> create_one(const LinkKey& k, LinkInfo& l);
  Result<LinkInfo*> put_veth_peer(Bytes& b, const LinkKey& k, const LinkInfo& l,
                                  std::string& peer_ns);
  Bytes kind_data(const LinkInfo& l);
  void mark_set(const LinkKey& k, const LinkInfo& l);
  Result<void> set_one(const LinkKey& k, const LinkInfo& l);

  Engine& engine_;
  rtnl::Server& server_;
  bool recover_;
  const std::vector<NsRow>& nss_;
  const std::vector<ObjRow>& rows_;
  std::uint32_t seq_ = 0;
  std::map<std::string, std::unique_ptr<rtnl::Session>> sessions_;
  std::map<std::string, std::size_t> restored_;
  std::map<std::pair<std::string, int>, std::string> peers_;  // nsid_peers
  std::set<std::string> known_ns_;
  std::map<LinkKey, LinkInfo> links_;
  // Indexes, so that the order costs O(N log N) for N devices: the ports each master has
  // (counted down as they are set), and which veth names which as its peer.
  std::map<LinkKey, int> ports_of_;
  std::map<LinkKey, LinkKey> veth_named_by_;
  std::set<LinkKey> created_, set_done_;
};

Result<rtnl::Session*> Replayer::session(const std::string& ns) {
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

Result<void> Replayer::send(const std::string& ns, std::uint16_t type, std::uint16_t flags,
                            View body) {
  auto s = session(ns);
  if (!s) return fail(s.error());
  Bytes m =
      message(type, static_cast<std::uint16_t>(NLM_F_REQUEST | NLM_F_ACK | flags), ++seq_, body);
  std::vector<rtnl::Datagram> replies;
  (*s)->handle(m, [&](rtnl::Datagram&& d) { replies.push_back(std::move(d)); });
  return answer_of(replies);
}

Result<void> Replayer::failed(const ObjRow& r, const Error& e) {
  std::string text = fmt::format("namespace {}: {} {}: {}", r.ns, r.type, r.summary, e.message);
  if (!recover_) return fail(e.code, "cannot restore {}", text);
  engine_.log(LogLevel::Error, "ifcored: state: not restored: " + text);
  lost.push_back({&r, e.message});
  return ok();
}

Result<void> Replayer::ns_ok(const ObjRow& r) {
  if (known_ns_.count(r.ns)) return ok();
  return failed(r, Error{ENOENT, fmt::format("namespace {} is not kept", r.ns)});
}

bool Replayer::exists(const std::string& ns, int ifindex) {
  Control ctl = engine_.control();
  Namespace* n = ctl.find_namespace(ns);
  return n && ctl.find(*n, ifindex) != nullptr;
}

std::string Replayer::lower_ns(const LinkInfo& l) const {
  if (!l.link_netnsid || *l.link_netnsid < 0) return l.row->ns;
  auto it = peers_.find({l.row->ns, *l.link_netnsid});  // the id its namespace gave the peer's
  return it == peers_.end() ? std::string() : it->second;
}

std::string Replayer::summary() const {
  std::string what;
  for (const auto& [t, n] : restored_) what += fmt::format(" {} {}", n, t);
  return fmt::format(
      "ifcored: state: restored {} namespaces,{}{}", known_ns_.size(),
      what.empty() ? " nothing else" : what,
      lost.empty() ? std::string()
                   : fmt::format("; {} records not restored (kept in table lost)", lost.size()));
}

// 1. Namespaces, in the order they were made.
Result<void> Replayer::namespaces() {
  peers_ = nsid_peers(rows_, nss_);
  for (const auto& n : nss_) {
    Control ctl = engine_.control();
    if (!ctl.find_namespace(n.name)) {
      auto made = ctl.create_namespace(n.name);  // devices name it by the ids of "nsid" rows
      if (!made) {
        if (!recover_)
          return fail(made.error().code, "cannot restore namespace {}: {}", n.name,
                      made.error().message);
        engine_.log(LogLevel::Error, fmt::format("ifcored: state: not restored: namespace {}: {}",
                                                 n.name, made.error().message));
        continue;
      }
    }
    known_ns_.insert(n.name);
  }
  return ok();
}

// Sysctls in the order they were written: `default` ones before the devices (a device
// made after such a write took its values from it), the others after them. A device's
// setting is written under the device's name now (its ifindex is what is kept).
Result<void> Replayer::sysctls(bool defaults) {
  for (const auto& r : rows_) {
    if (r.type != "sysctl") continue;
    auto as = attrs_of(View(r.msg).subspan(std::min<std::size_t>(r.msg.size(), 4)));
    std::string name = str_of(as, rtnl::IFCORE_SYSCTL_NAME);
    if ((name.find(".conf.default.") != std::string::npos) != defaults) continue;
    IFCORE_TRY(ns_ok(r));
    if (!known_ns_.count(r.ns)) continue;
    Bytes body = r.msg;
    if (r.dev) {
      std::string dev;
      {
        Control ctl = engine_.control();
        Namespace* n = ctl.find_namespace(r.ns);
        Device* d = n ? ctl.find(*n, r.dev) : nullptr;
        if (d) dev = d->name();
      }
      auto conf = name.find(".conf.");
      auto last = name.rfind('.');
      if (dev.empty() || conf == std::string::npos || last <= conf + 5) {
        IFCORE_TRY(failed(r, Error{ENODEV, "its device is not kept"}));
        continue;
      }
      name = name.substr(0, conf + 6) + dev + name.substr(last);
      body.assign(r.msg.begin(), r.msg.begin() + std::min<std::ptrdiff_t>(4, r.msg.size()));
      put_str(body, rtnl::IFCORE_SYSCTL_NAME, name);
      put_str(body, rtnl::IFCORE_SYSCTL_VALUE, str_of(as, rtnl::IFCORE_SYSCTL_VALUE));
    }
    if (auto res = send(r.ns, rtnl::IFCORE_NLMSG_SYSCTL, 0, body); !res)
      IFCORE_TRY(failed(r, res.error()));
    else
      ++restored_["sysctl"];
  }
  return ok();
}

// The device rows read, and the indexes over them. A row too short to read fails when the
// devices are made.
void Replayer::read_links() {
  for (const auto& r : rows_) {
    if (r.type != "link") continue;
    LinkInfo l;
    l.row = &r;
    if (r.msg.size() < sizeof(ifinfomsg)) {
      l.short_row = true;
      links_.emplace(LinkKey(r.ns, -1 - static_cast<int>(links_.size())), std::move(l));
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
    links_.emplace(LinkKey(r.ns, l.ifi.ifi_index), std::move(l));
  }
  const auto from_ports = bridges_addressed_by_ports(rows_);
  for (auto& [k, l] : links_) {
    l.address_from_ports = from_ports.count(k) > 0;
    if (l.master && *l.master) ++ports_of_[{k.first, static_cast<int>(*l.master)}];
    if (l.kind == "veth" && l.link && *l.link)
      veth_named_by_[{lower_ns(l), static_cast<int>(*l.link)}] = k;
  }
}

// The device's IPv6 address generation mode, before it comes up (its link-local address
// follows from the mode): the link row keeps IFLA_AF_SPEC with the mode alone.
Result<void> Replayer::set_addr_gen_mode(const LinkKey& k, const LinkInfo& l) {
  const RawAttr* spec = find(l.as, IFLA_AF_SPEC);
  if (!spec) return ok();
  Bytes b = ifinfo(l.ifi.ifi_index);
  put_attr(b, IFLA_AF_SPEC, spec->data);
  return send(k.first, RTM_NEWLINK, 0, b);
}

// Right after its create, a device is set as it was (up included, but for a master,
// which comes up after its ports join it): a device made later on top of it then finds
// it as it did (Linux: a vlan made on a lower device that is up stays down; one that is
// there when the lower device comes up comes up with it).
Result<void> Replayer::settle_new(const LinkKey& k, const LinkInfo& l) {
  IFCORE_TRY(set_addr_gen_mode(k, l));
  std::uint32_t change = kUserFlags & ~static_cast<std::uint32_t>(IFF_PROMISC);
  if (is_master(k) || (l.master && *l.master)) change &= ~static_cast<std::uint32_t>(IFF_UP);
  Bytes b = ifinfo(l.ifi.ifi_index, l.ifi.ifi_flags & change, change);
  copy_attr(b, l.as, IFLA_IFALIAS);
  return send(k.first, RTM_NEWLINK, 0, b);
}

// 2. Devices: created lower before upper (IFLA_LINK), a veth with its peer. Devices the
// engine made by itself (a namespace's loopback) are changed, not made.
Result<void> Replayer::create_links() {
  for (auto& [k, l] : links_) {
    if (l.short_row) {
      l.done = true;
      IFCORE_TRY(failed(*l.row, Error{EBADMSG, "the record is too short"}));
    } else if (!known_ns_.count(k.first)) {
      l.done = true;
      IFCORE_TRY(ns_ok(*l.row));
    } else if (exists(k.first, k.second)) {
      l.done = true;
    }
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [k, l] : links_) {
      if (l.done) continue;
      if (l.kind != "veth" && l.link && *l.link != 0) {
        std::string lns = lower_ns(l);
        if (!exists(lns, static_cast<int>(*l.link))) {
          // Waits for its lower device, if that is still to be made.
          auto lo = links_.find({lns, static_cast<int>(*l.link)});
          if (lo != links_.end() && !lo->second.done) continue;
        }
      }
      l.done = true;
      progress = true;
      IFCORE_TRY(create_one(k, l));
    }
  }
  for (auto& [k, l] : links_)
    if (!l.done) IFCORE_TRY(failed(*l.row, Error{ENODEV, "its lower device is not kept"}));
  return ok();
}

Result<void> Replayer::create_one(const LinkKey& k, LinkInfo& l) {
  if (l.kind.empty())
    return failed(*l.row, Error{EOPNOTSUPP, "the device has no kind to make it with"});
  const bool veth = l.kind == "veth";
  Bytes b = ifinfo(l.ifi.ifi_index);
  identity(b, l);
  if (!veth && l.link) put_u32(b, IFLA_LINK, *l.link);
  std::size_t li = begin_nest(b, IFLA_LINKINFO);
  put_str(b, IFLA_INFO_KIND, l.kind);
  LinkInfo* peer = nullptr;
  std::string peer_ns;
  if (veth) {
    auto p = put_veth_peer(b, k, l, peer_ns);
    if (!p) return failed(*l.row, p.error());
    peer = *p;
  } else if (!l.info_data.empty()) {
    put_attr(b, IFLA_INFO_DATA, kind_data(l));
  }
  end_nest(b, li);
  if (auto r = send(k.first, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, b); !r)
    return failed(*l.row, r.error());
  created_.insert(k);
  ++restored_["link"];
  if (auto s = settle_new(k, l); !s) IFCORE_TRY(failed(*l.row, s.error()));
  if (peer) {
    peer->done = true;
    LinkKey pk(peer_ns, peer->ifi.ifi_index);
    created_.insert(pk);
    ++restored_["link"];
    if (auto s = settle_new(pk, *peer); !s) IFCORE_TRY(failed(*peer->row, s.error()));
  }
  return ok();
}

// A veth's IFLA_INFO_DATA: its peer, as kept. The end announced first was announced
// before the pair was tied (IFLA_LINK 0): then the other end names it.
Result<LinkInfo*> Replayer::put_veth_peer(Bytes& b, const LinkKey& k, const LinkInfo& l,
                                          std::string& peer_ns) {
  auto p = links_.end();
  if (l.link && *l.link)
    p = links_.find({lower_ns(l), static_cast<int>(*l.link)});
  else if (auto n = veth_named_by_.find(k); n != veth_named_by_.end())
    p = links_.find(n->second);
  if (p == links_.end() || p->second.kind != "veth" || p->second.done)
    return fail(ENOENT, "the veth's peer is not kept");
  std::size_t d = begin_nest(b, IFLA_INFO_DATA);
  std::size_t pn = begin_nest(b, VETH_INFO_PEER);
  Bytes pb = ifinfo(p->second.ifi.ifi_index);
  identity(pb, p->second);
  if (p->first.first != k.first) put_str(pb, kIflaNetNsName, p->first.first);
  peer_ns = p->first.first;
  b.insert(b.end(), pb.begin(), pb.end());
  end_nest(b, pn);
  end_nest(b, d);
  return &p->second;
}

// A kind's attributes as a create takes them. What the kind reports and does not take
// (identifiers, timers, counters) is left out: its policy says what a request may set.
Bytes Replayer::kind_data(const LinkInfo& l) {
  AttrPolicy policy;
  {
    Control ctl = engine_.control();
    if (const ifcore::Kind* kd = ctl.find_kind(l.kind)) policy = kd->policy();
  }
  Bytes data;
  for (const auto& a : attrs_of(l.info_data)) {
    if (std::none_of(policy.begin(), policy.end(), [&](const AttrPolicyEntry& e) {
          return e.type == a.type && e.shape != AttrShape::Flag;
        }))
      continue;
    // Reported, in the policy, and refused as read-only.
    if (l.kind == "macvlan" &&
        (a.type == IFLA_MACVLAN_MACADDR_COUNT || a.type == IFLA_MACVLAN_BC_QUEUE_LEN_USED))
      continue;
    if (l.kind == "bridge" && a.type == IFLA_BR_MULTI_BOOLOPT &&
        a.data.size() >= sizeof(br_boolopt_multi)) {
      // The bridge reports every option it has (Linux 6.18's mask) and takes those of the
      // headers it was built with.
      br_boolopt_multi bo;
      std::memcpy(&bo, a.data.data(), sizeof(bo));
      bo.optmask &= (1u << BR_BOOLOPT_MAX) - 1;
      bo.optval &= bo.optmask;
      put_attr(data, a.type, View(reinterpret_cast<const std::uint8_t*>(&bo), sizeof(bo)));
      continue;
    }
    put_attr(data, a.type, a.data);
  }
  return data;
}

void Replayer::mark_set(const LinkKey& k, const LinkInfo& l) {
  set_done_.insert(k);
  if (l.master && *l.master)
    if (auto m = ports_of_.find({k.first, static_cast<int>(*l.master)}); m != ports_of_.end())
      --m->second;
}

// 3. Device settings: ports before their master; flags (up) and master together.
Result<void> Replayer::set_links() {
  for (bool progress = true; progress;) {
    progress = false;
    for (auto& [k, l] : links_) {
      if (set_done_.count(k)) continue;
      if (l.short_row || !exists(k.first, k.second)) {
        mark_set(k, l);
        continue;
      }
      // A master waits for its ports, so that it comes up with them (its carrier, and
      // what follows from it, as when it was configured).
      if (auto w = ports_of_.find(k); w != ports_of_.end() && w->second > 0) continue;
      mark_set(k, l);
      progress = true;
      if (auto r = set_one(k, l); !r) IFCORE_TRY(failed(*l.row, r.error()));
    }
  }
  return ok();
}

Result<void> Replayer::set_one(const LinkKey& k, const LinkInfo& l) {
  // A port's promiscuity comes from its master: not asked again. A port joins its master
  // down, and comes up after it (as `ip link set P master M; ip link set M up; ip link set
  // P up` does): see raise_ports.
  std::uint32_t change = kUserFlags;
  if (l.master) change &= ~static_cast<std::uint32_t>(IFF_PROMISC | IFF_UP);
  if (!created_.count(k)) IFCORE_TRY(set_addr_gen_mode(k, l));
  Bytes b = ifinfo(l.ifi.ifi_index, l.ifi.ifi_flags & change, change);
  if (!created_.count(k)) identity(b, l);
  if (l.master) put_u32(b, IFLA_MASTER, *l.master);
  // The offload limits, once the master is set (a bridge's ports bound its own).
  for (std::uint16_t t : kOffloadLimits) copy_attr(b, l.as, t);
  copy_attr(b, l.as, IFLA_IFALIAS);
  IFCORE_TRY(send(k.first, RTM_NEWLINK, 0, b));
  if (Bytes ps = port_settings(l.as); l.master && !ps.empty()) {
    Bytes pb = ifinfo(l.ifi.ifi_index);
    pb.insert(pb.end(), ps.begin(), ps.end());
    IFCORE_TRY(send(k.first, RTM_NEWLINK, 0, pb));
  }
  if (const RawAttr* props = find(l.as, IFLA_PROP_LIST)) {
    Bytes pb = ifinfo(l.ifi.ifi_index);
    put_attr(pb, IFLA_PROP_LIST | NLA_F_NESTED, props->data);
    IFCORE_TRY(send(k.first, RTM_NEWLINKPROP, 0, pb));
  }
  return ok();
}

// The ports that were up come up, after their masters.
Result<void> Replayer::raise_ports() {
  for (auto& [k, l] : links_) {
    if (l.short_row || !l.master || !*l.master || !(l.ifi.ifi_flags & IFF_UP) ||
        !exists(k.first, k.second))
      continue;
    Bytes b = ifinfo(l.ifi.ifi_index, IFF_UP, IFF_UP);
    if (auto r = send(k.first, RTM_NEWLINK, 0, b); !r) IFCORE_TRY(failed(*l.row, r.error()));
  }
  return ok();
}

// 4. The rows of one type that `pick` takes, as requests `msg_type`. An address's
// lifetimes are kept as deadlines and sent as what is left of them.
template <class Pick>
Result<void> Replayer::objects(const char* type, std::uint16_t msg_type, std::uint16_t flags,
                               Pick&& pick) {
  for (const auto& r : rows_) {
    if (r.type != type || !pick(r)) continue;
    IFCORE_TRY(ns_ok(r));
    if (!known_ns_.count(r.ns)) continue;
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
    if (auto res = send(r.ns, msg_type, flags, body); !res)
      IFCORE_TRY(failed(r, res.error()));
    else
      ++restored_[type];
  }
  return ok();
}

// 3b. A device made before the `default` now in force was written gets the value it took
// (store_defaults.cc); one without that protocol has no such setting.
Result<void> Replayer::creation_defaults() {
  for (const DeviceDefault& d : device_defaults(rows_)) {
    auto l = links_.find({d.link->ns, d.link->dev});
    if (!known_ns_.count(d.link->ns) || l == links_.end() || l->second.name.empty()) continue;
    Bytes body(4, 0);
    std::string name = d.name;
    name.replace(name.find(".default."), 9, "." + l->second.name + ".");
    put_str(body, rtnl::IFCORE_SYSCTL_NAME, name);
    put_str(body, rtnl::IFCORE_SYSCTL_VALUE, d.value);
    (void)send(d.link->ns, rtnl::IFCORE_NLMSG_SYSCTL, 0, body);
  }
  return ok();
}

// 5. Routes, each key's together in their order (store_routes.cc).
Result<void> Replayer::routes() {
  for (const RouteReplay& q : route_replays(rows_)) {
    const ObjRow& r = *q.rows.front();
    IFCORE_TRY(ns_ok(r));
    if (!known_ns_.count(r.ns)) continue;
    if (auto res = send(r.ns, RTM_NEWROUTE, q.flags, q.body); !res)
      for (const ObjRow* each : q.rows) IFCORE_TRY(failed(*each, res.error()));
    else
      restored_["route"] += q.rows.size();
  }
  return ok();
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

  Replayer rp(engine, server, opts_.recover, nss, rows);
  IFCORE_TRY(rp.namespaces());
  // The ids namespaces gave each other, before a device's announcement gives others.
  IFCORE_TRY(rp.objects("nsid", RTM_NEWNSID, 0, [](const ObjRow&) { return true; }));
  IFCORE_TRY(rp.sysctls(true));
  rp.read_links();
  IFCORE_TRY(rp.create_links());
  IFCORE_TRY(rp.set_links());
  IFCORE_TRY(rp.raise_ports());
  IFCORE_TRY(rp.creation_defaults());
  IFCORE_TRY(rp.sysctls(false));
  // The rest, each after what it needs: addresses, nexthops (groups after their members),
  // routes, rules, neighbours, IPv6 address labels, forwarding entries.
  auto all = [](const ObjRow&) { return true; };
  auto is_group = [](const ObjRow& r) {
    return r.msg.size() >= sizeof(nhmsg) &&
           find(attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(nhmsg)))), NHA_GROUP) != nullptr;
  };
  auto not_group = [&](const ObjRow& r) { return !is_group(r); };
  constexpr std::uint16_t kPut = NLM_F_CREATE | NLM_F_REPLACE;
  IFCORE_TRY(rp.objects("addr", RTM_NEWADDR, kPut, all));
  IFCORE_TRY(rp.objects("nexthop", RTM_NEWNEXTHOP, kPut, not_group));
  IFCORE_TRY(rp.objects("nexthop", RTM_NEWNEXTHOP, kPut, is_group));
  IFCORE_TRY(rp.routes());
  IFCORE_TRY(rp.objects("rule", RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL, all));
  IFCORE_TRY(rp.objects("rule-deleted", RTM_DELRULE, 0, all));
  IFCORE_TRY(rp.objects("neigh", RTM_NEWNEIGH, kPut, all));
  // A default entry changed is deleted before it is made again: an add finds no entry of
  // its key past the first of its length (Linux's order), so it would make a second.
  IFCORE_TRY(rp.objects("addrlabel", RTM_DELADDRLABEL, 0, addrlabel_of_default));
  IFCORE_TRY(rp.objects("addrlabel", RTM_NEWADDRLABEL, kPut,
                        [](const ObjRow& r) { return !addrlabel_deleted(r); }));
  // Forwarding entries: a bridge's replaced, a VXLAN's remotes appended (a MAC may have
  // several).
  auto vxlan_fdb = [](const ObjRow& r) {
    return r.msg.size() >= sizeof(ndmsg) &&
           find(attrs_of(View(r.msg).subspan(NLMSG_ALIGN(sizeof(ndmsg)))), NDA_DST) != nullptr;
  };
  auto bridge_fdb = [&](const ObjRow& r) { return !vxlan_fdb(r); };
  IFCORE_TRY(rp.objects("fdb", RTM_NEWNEIGH, kPut, bridge_fdb));
  IFCORE_TRY(rp.objects("fdb", RTM_NEWNEIGH, NLM_F_CREATE | NLM_F_APPEND, vxlan_fdb));

  engine.log(LogLevel::Info, rp.summary());
  if (!rp.lost.empty()) IFCORE_TRY(keep_lost(db_, rp.lost));
  return ok();
}

}  // namespace ifcore::state
