// rtnl/hub.cc — the Server: opens sessions, subscribes to the engine's notifier chain and
// turns netdev events into RTM_NEWLINK / RTM_DELLINK notifications for the sessions that
// joined RTNLGRP_LINK in the device's namespace.
//
// Lock order: 1. control lock, 2. Hub::mu_, 3. SessionImpl::qmu_.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <bit>
#include <climits>

#include "ifcore/namespace.h"
#include "rtnl/fill.h"
#include "rtnl/hub.h"
#include "rtnl/wire/nsid.h"

namespace ifcore::rtnl {

// ---- Reply

void Reply::append(std::span<const std::uint8_t> msg) {
  std::size_t aligned = NLMSG_ALIGN(msg.size());
  if (!cur_.empty() && cur_.size() + aligned > limit_) flush();
  bytes_ += aligned;
  cur_.insert(cur_.end(), msg.begin(), msg.end());
  cur_.resize(cur_.size() + (aligned - msg.size()), 0);
}

void Reply::flush() {
  if (cur_.empty()) return;
  Datagram d;
  d.swap(cur_);
  send_(std::move(d));
}

void Reply::send_alone(Datagram&& dg) {
  flush();
  bytes_ += dg.size();
  send_(std::move(dg));
}

// ---- Hub

void Hub::attach() {
  Control ctl = engine_->control();
  SubscribeOptions o;
  o.name = "rtnl";
  o.priority = 0;
  o.replay = false;
  // What on_event announces: these after the other subscribers (Linux sends them after the
  // notifier pass: register_netdevice, netdev_state_change, unregister_netdevice_many) ...
  o.events = events_of(NetdevEvent::Register, NetdevEvent::Change, NetdevEvent::Configured,
                       NetdevEvent::Unregister, NetdevEvent::Uninit);
  sub_ = ctl.subscribe(*this, o);
  // ... these before them (rtnetlink_event, the first subscriber of the chain; and
  // __dev_notify_flags, which announces a device going up or down before NETDEV_UP or
  // NETDEV_DOWN reach anybody).
  SubscribeOptions e = o;
  e.name = "rtnl-early";
  e.priority = 2;  // before every other subscriber (nexthop is 1)
  // (NotifyFlags is __dev_notify_flags's message, before NETDEV_CHANGE.)
  e.events =
      events_of(NetdevEvent::Up, NetdevEvent::Down, NetdevEvent::ChangeMtu, NetdevEvent::ChangeAddr,
                NetdevEvent::ChangeName, NetdevEvent::ChangeUpper, NetdevEvent::NotifyFlags,
                NetdevEvent::ChangeTxQueueLen, NetdevEvent::FeatChange);
  early_sub_ = ctl.subscribe(early_, e);
  inet::add_listener(ctl, proto_);
  fdb::add_listener(ctl, fdb_);
  mdb::add_listener(ctl, mdb_);
  vnifilter::add_listener(ctl, vni_);
  bridge_port::add_listener(ctl, brport_);
  {
    MutexLock lk(mu_);
    for (Namespace* ns : ctl.namespaces())
      for (const auto& [id, peer] : ns->peer_ids_locked()) ids_[{ns->id(), peer->id()}] = id;
  }
  if (auto r = ctl.add_pernet(forget_); !r)
    engine_->log(LogLevel::Error, "rtnl: " + r.error().message);
  nsid_observer_ = ctl.add_nsid_observer([this](Namespace& ns, Namespace& peer, int id,
                                                bool added) { publish_nsid(ns, peer, id, added); });
  attached_ = true;
}

void Hub::detach() {
  if (!attached_) return;
  Control ctl = engine_->control();
  inet::remove_listener(ctl, proto_);
  fdb::remove_listener(ctl, fdb_);
  mdb::remove_listener(ctl, mdb_);
  vnifilter::remove_listener(ctl, vni_);
  bridge_port::remove_listener(ctl, brport_);
  ctl.unsubscribe(early_sub_, false);
  ctl.unsubscribe(sub_, false);
  ctl.remove_nsid_observer(nsid_observer_);
  ctl.remove_pernet(forget_);
  attached_ = false;
}

void Hub::Forget::exit(Control&, Namespace& ns) {
  MutexLock lk(hub->mu_);
  auto& ids = hub->ids_;
  ids.erase(ids.lower_bound({ns.id(), INT_MIN}), ids.upper_bound({ns.id(), INT_MAX}));
}

void Hub::add(SessionImpl* s) {
  MutexLock lk(mu_);
  sessions_.push_back(s);
}

void Hub::remove(SessionImpl* s) {
  MutexLock lk(mu_);
  sessions_.erase(std::remove(sessions_.begin(), sessions_.end(), s), sessions_.end());
}

void Hub::count_groups(std::uint64_t before, std::uint64_t after) {
  for (std::uint64_t changed = before ^ after; changed; changed &= changed - 1) {
    int bit = std::countr_zero(changed);
    members_[static_cast<std::size_t>(bit)].fetch_add((after >> bit) & 1 ? 1 : -1,
                                                      std::memory_order_acq_rel);
  }
}

bool Hub::wanted(int ns_id, unsigned group, bool echoable) {
  if (tap) return true;
  if (echoable && scope && scope->echo && scope->ns_id == ns_id) return true;
  if (group < 1 || group > members_.size() ||
      members_[group - 1].load(std::memory_order_acquire) == 0)
    return false;
  MutexLock lk(mu_);
  return std::any_of(sessions_.begin(), sessions_.end(), [&](SessionImpl* s) {
    return (s->ns_id() == ns_id || s->listen_all_nsid()) && s->member(group);
  });
}

void Hub::publish(int ns_id, unsigned group, std::span<const std::uint8_t> msg, bool echoable,
                  bool tapped) {
  // Linux: nlmsg_notify — with NLM_F_ECHO the requester gets the message as a unicast and
  // is left out of the broadcast.
  if (tap && tapped) tap(ns_id, msg);
  const SessionImpl* skip = nullptr;
  if (echoable && scope && scope->echo && scope->ns_id == ns_id) {
    scope->echoed.emplace_back(msg.begin(), msg.end());
    skip = scope->origin;
  }
  MutexLock lk(mu_);
  for (SessionImpl* s : sessions_) {
    if (s == skip || !s->member(group)) continue;
    if (!s->listen_all_nsid()) {
      if (s->ns_id() == ns_id) s->enqueue(msg);
      continue;
    }
    // Linux: do_one_broadcast — a socket with NETLINK_LISTEN_ALL_NSID hears another
    // namespace when its own gives that one an id (and it may listen there: ifcore's
    // SessionOptions::may_write_elsewhere for CAP_NET_BROADCAST), and each message comes
    // with the id (peernet2id; for its own namespace, none unless it gave itself one).
    auto id = ids_.find({s->ns_id(), ns_id});
    if (s->ns_id() != ns_id && (id == ids_.end() || !s->options().may_write_elsewhere)) continue;
    s->enqueue(msg, id != ids_.end() ? std::optional<std::int32_t>(id->second) : std::nullopt);
  }
}

wire::Header Hub::notify_header(int ns_id, std::uint16_t type, std::uint16_t flags) const {
  wire::Header h{type, flags, 0, 0};
  if (scope && scope->echo && scope->ns_id == ns_id) {
    // Linux: rtmsg_ifinfo_build_skb (and rtnl_notify's callers) carry the request's seq
    // and port id when it asked for an echo.
    h.seq = scope->seq;
    h.pid = scope->port;
  }
  return h;
}

std::vector<std::uint8_t> Hub::link_notification(Control& ctl, const Device& dev,
                                                 std::uint16_t type, std::uint32_t change,
                                                 std::uint32_t event) {
  if (type == RTM_NEWLINK && dev.state() != RegState::Registered) return {};
  int ns_id = dev.ns().id();
  // Linux: rtmsg_ifinfo builds the message, and so gives the link device's namespace an id
  // (rtnl_fill_link_netnsid), whether or not anybody listens.
  if (Namespace* lns = dev.kind().link_ns(dev); lns && lns != &dev.ns())
    (void)dev.ns().peer_id_alloc_locked(*lns);
  if (!wanted(ns_id, RTNLGRP_LINK)) return {};
  wire::Header h = notify_header(ns_id, type);
  wire::MessageBuilder b;
  wire::LinkMessage m = link_message(dev, change, 0);
  if (event != IFLA_EVENT_NONE) m.event = event;
  auto r = wire::encode_link_message(b, h, m);
  if (!r) {
    engine_->log(LogLevel::Warning, fmt::format("rtnl: cannot encode notification for \"{}\": {}",
                                                dev.name(), r.error().message));
    return {};
  }
  return {b.bytes().begin(), b.bytes().end()};
}

void Hub::publish_link(Control& ctl, const Device& dev, std::uint16_t type, std::uint32_t change,
                       std::uint32_t event) {
  auto msg = link_notification(ctl, dev, type, change, event);
  if (!msg.empty()) publish(dev.ns().id(), RTNLGRP_LINK, msg);
}

void Hub::send_dellink(const Device& dev) {
  if (held_.load(std::memory_order_relaxed) == 0) return;
  std::optional<HeldDellink> one;
  {
    MutexLock lk(mu_);
    auto it = std::find_if(dellinks_.begin(), dellinks_.end(),
                           [&](const HeldDellink& h) { return h.dev == &dev; });
    if (it == dellinks_.end()) return;
    one = std::move(*it);
    dellinks_.erase(it);
    held_.fetch_sub(1, std::memory_order_relaxed);
  }
  publish(one->ns_id, RTNLGRP_LINK, one->msg);
}

void Hub::publish_nsid(const Namespace& ns, const Namespace& peer, int id, bool added) {
  int ns_id = ns.id();
  {
    MutexLock lk(mu_);
    if (added)
      ids_[{ns_id, peer.id()}] = id;
    else
      ids_.erase({ns_id, peer.id()});
  }
  bool from_request = scope && scope->nsid_request && scope->ns_id == ns_id;
  if (!wanted(ns_id, RTNLGRP_NSID, from_request)) return;
  wire::NsidMessage n;
  n.nsid = id;
  wire::Header h{static_cast<std::uint16_t>(added ? RTM_NEWNSID : RTM_DELNSID), 0, 0, 0};
  if (from_request) {
    h.seq = scope->seq;
    h.pid = scope->port;
  }
  if (tap) {
    wire::NsidMessage named = n;
    named.name = peer.name();
    wire::MessageBuilder t;
    if (wire::encode_nsid(t, h, named)) tap(ns_id, t.bytes());
  }
  wire::MessageBuilder b;
  if (wire::encode_nsid(b, h, n)) publish(ns_id, RTNLGRP_NSID, b.bytes(), from_request, false);
}

void Hub::publish_inet6_link(const Device& dev) {
  int ns_id = dev.ns().id();
  if (!wanted(ns_id, RTNLGRP_IPV6_IFINFO)) return;
  wire::MessageBuilder b;
  if (encode_inet6_device(b, wire::Header{RTM_NEWLINK, 0, 0, 0}, dev))
    publish(ns_id, RTNLGRP_IPV6_IFINFO, b.bytes(), false);
}

void Hub::record_link(Control& ctl, const Device& dev) {
  if (!tap) return;
  wire::MessageBuilder b;
  if (encode_device(b, wire::Header{RTM_NEWLINK, 0, 0, 0}, dev, 0, 0))
    tap(dev.ns().id(), b.bytes());
}

namespace {

// The ifi_change of a device going up or down: the request's flag changes, else Linux's
// dev_open and dev_close_many's IFF_UP | IFF_RUNNING.
std::uint32_t up_down_change(const EventInfo& ev) {
  return ev.flags_changed ? ev.flags_changed : IFF_UP | IFF_RUNNING;
}

}  // namespace

Result<void> Hub::on_event(Control& ctl, const EventInfo& ev) {
  if (ev.replay) return ok();  // replays and re-broadcasts are not news to clients
  Device& dev = ev.dev;
  RequestScope* sc = scope;
  // Where the device stands among those this request creates and announces at its end
  // (-1: not one of them).
  // A Register is never of a held device (one that is unregistered leaves the list): not
  // looked up, so that a batch of N creates does not cost N^2.
  std::ptrdiff_t held_at = -1;
  if (sc && sc->defer_new && ev.event != NetdevEvent::Register)
    if (auto it = std::find(sc->created.begin(), sc->created.end(), &dev); it != sc->created.end())
      held_at = it - sc->created.begin();
  bool held = held_at >= 0;
  // Linux: rtnetlink_event, __dev_notify_flags, register_netdevice and
  // unregister_netdevice_many_notify decide which events clients hear about.
  switch (ev.event) {
    case NetdevEvent::Register:
      if (sc && sc->defer_new) {
        if (!held) sc->created.push_back(&dev);
        return ok();
      }
      publish_link(ctl, dev, RTM_NEWLINK, ~0u);
      break;
    case NetdevEvent::Up:
      // Linux: rtnl_configure_link opens a device made up, then announces it, before
      // NETDEV_UP reaches the protocols (their addresses and routes come after it).
      if (held) {
        sc->created.erase(sc->created.begin() + held_at);
        publish_link(ctl, dev, RTM_NEWLINK, ~0u);
        break;
      }
      publish_link(ctl, dev, RTM_NEWLINK, up_down_change(ev));
      break;
    case NetdevEvent::Down:
      if (!held) publish_link(ctl, dev, RTM_NEWLINK, up_down_change(ev));
      break;
    case NetdevEvent::NotifyFlags:
      if (!held) publish_link(ctl, dev, RTM_NEWLINK, ev.flags_changed);
      break;
    case NetdevEvent::Change:
      // Linux: netdev_state_change announces; the NETDEV_CHANGE of a flag change does not
      // (NotifyFlags did).
      if (!held && !ev.flags_changed) publish_link(ctl, dev, RTM_NEWLINK, 0);
      break;
    case NetdevEvent::ChangeMtu:
    case NetdevEvent::ChangeAddr:
    case NetdevEvent::ChangeName:
    case NetdevEvent::ChangeUpper:
    case NetdevEvent::ChangeTxQueueLen:
      if (!held) publish_link(ctl, dev, RTM_NEWLINK, 0);
      break;
    case NetdevEvent::FeatChange:
      if (!held) publish_link(ctl, dev, RTM_NEWLINK, 0, IFLA_EVENT_FEATURES);
      break;
    case NetdevEvent::Configured:
      // Announced now, as it is, instead of after the create (outside a create it was
      // announced when it registered). Linux: the kind configures it with no request
      // header (veth_newlink: rtnl_configure_link(peer, NULL, 0, NULL)), so it is not
      // echoed and carries seq 0 and port 0; the requester hears it if it is a member.
      if (held) {
        sc->created.erase(sc->created.begin() + held_at);
        bool echo = std::exchange(sc->echo, false);
        publish_link(ctl, dev, RTM_NEWLINK, ~0u);
        sc->echo = echo;
      }
      break;
    case NetdevEvent::Unregister:
      // A device whose create failed was never announced, so it is not withdrawn either.
      if (held) {
        sc->created.erase(sc->created.begin() + held_at);
        return ok();
      }
      if (!ev.uninit_follows) {  // a move to another namespace
        publish_link(ctl, dev, RTM_DELLINK, ~0u);
        break;
      }
      // Linux: unregister_netdevice_many_notify builds it now and sends it after ndo_uninit
      // (Uninit): what the kind announces as it lets the device go comes first.
      if (auto msg = link_notification(ctl, dev, RTM_DELLINK, ~0u); !msg.empty()) {
        MutexLock lk(mu_);
        dellinks_.push_back({&dev, dev.ns().id(), std::move(msg)});
        held_.fetch_add(1, std::memory_order_relaxed);
      }
      break;
    case NetdevEvent::Uninit:
      send_dellink(dev);
      break;
    default:
      break;
  }
  return ok();
}

// ---- Server

struct Server::Impl {
  std::shared_ptr<Hub> hub;
};

Server::Server(Engine& engine) : impl_(std::make_unique<Impl>()) {
  impl_->hub = std::make_shared<Hub>(engine);
  impl_->hub->attach();
}

Server::~Server() {
  impl_->hub->detach();
}

void Server::set_tap(TapFn tap) {
  Control ctl = impl_->hub->engine().control();
  impl_->hub->tap = std::move(tap);
}

Result<std::unique_ptr<Session>> Server::open_session(SessionOptions opts) {
  int id = 0;
  {
    Control ctl = impl_->hub->engine().control();
    Namespace* ns = ctl.find_namespace(opts.ns);
    if (!ns) return fail(ENOENT, "namespace \"{}\" does not exist", opts.ns);
    id = ns->id();
  }
  if (opts.datagram_size < 256) opts.datagram_size = 256;
  std::unique_ptr<Session> s = std::make_unique<SessionImpl>(impl_->hub, std::move(opts), id);
  return s;
}

}  // namespace ifcore::rtnl
