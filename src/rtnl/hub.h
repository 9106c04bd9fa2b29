// rtnl/hub.h — internal to ifcore_rtnl: the state a Server shares with its sessions (the
// session list, the notifier subscription that turns engine events into RTM_* messages),
// the session implementation, and the reply packer the handlers write into.
//
// Lock order: 1. the engine's control lock, 2. Hub::mu_ (the session list),
// 3. SessionImpl::qmu_ (one session's notification queue). The wakeup callback is called
// with 2 and 3 held: it must not block.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "ifcore/engine.h"
#include "ifcore/mutex.h"
#include "ifcore/rtnl.h"
#include "rtnl/bridge_port.h"
#include "rtnl/fdb.h"
#include "rtnl/mdb.h"
#include "rtnl/proto.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::rtnl {

class SessionImpl;

// Packs reply messages into datagrams of about `limit` bytes (whole messages only) and
// hands each full datagram to `send`.
class Reply {
 public:
  Reply(const SendFn& send, std::size_t limit) : send_(send), limit_(limit) {}
  // Appends one finished message; sends the datagram being filled first if it would not fit.
  void append(std::span<const std::uint8_t> msg);
  // Sends the datagram being filled, if any.
  void flush();
  // Sends `dg` as a datagram of its own (after flushing).
  void send_alone(Datagram&& dg);
  // The bytes appended or sent so far.
  std::size_t bytes() const { return bytes_; }
  // The size a datagram is filled to.
  std::size_t limit() const { return limit_; }

 private:
  const SendFn& send_;
  std::size_t limit_;
  std::size_t bytes_ = 0;
  Datagram cur_;
};

struct Request;

// The rest of a dump sent in parts (SessionOptions::dump_chunk_bytes): it keeps its place
// between parts, never a pointer into the engine's state.
class DumpRest {
 public:
  virtual ~DumpRest() = default;
  // Sends the next part into `r.out` under a control lock of its own. Returns true while
  // parts are left; the last part ends the dump (end_dump). Errors end it too: the session
  // puts them in NLMSG_DONE.
  virtual Result<bool> next(Request& r) = 0;
};

// What the handler holding the control lock tells the subscriber (Context: control lock;
// lives on the handler's stack while it holds the Control).
struct RequestScope {
  const SessionImpl* origin = nullptr;
  int ns_id = 0;
  bool echo = false;  // NLM_F_ECHO: notifications go back to the requester with its seq
  std::uint32_t seq = 0, port = 0;
  std::vector<Datagram> echoed;
  // Linux: rtnl_newlink_create — a device made by RTM_NEWLINK is announced once, after it is
  // configured (rtnl_configure_link), and never if the create fails.
  bool defer_new = false;
  std::vector<Device*> created;
  // RTM_NEWNSID: the id it gives is announced with its seq and port id (Linux:
  // rtnl_net_newid); ids given while filling a message carry zeros (peernet2id_alloc).
  bool nsid_request = false;
};

class Hub final : public Subscriber {
 public:
  explicit Hub(Engine& e) : engine_(&e) {}
  Engine& engine() const { return *engine_; }

  void attach();  // subscribes to the notifier chain. Context: not holding the control lock.
  void detach();

  Result<void> on_event(Control& ctl, const EventInfo& ev) override;

  // Sends RTM_NEWLINK / RTM_DELLINK about `dev` to the sessions of its namespace that joined
  // RTNLGRP_LINK (and to the requester for NLM_F_ECHO), with IFLA_EVENT `event` unless it
  // is IFLA_EVENT_NONE. Nothing for a device that is not registered (Linux:
  // rtmsg_ifinfo_event sends nothing about one being unregistered). Context: control lock.
  void publish_link(Control& ctl, const Device& dev, std::uint16_t type, std::uint32_t change,
                    std::uint32_t event = 0);
  // The device's AF_INET6 RTM_NEWLINK on RTNLGRP_IPV6_IFINFO (Linux: inet6_ifinfo_notify).
  void publish_inet6_link(const Device& dev);
  // RTM_NEWNSID / RTM_DELNSID on RTNLGRP_NSID in `ns`: it gave `id` to a peer or took it
  // back (Linux: rtnl_net_notifyid); the tap's copy names the peer (IFCORE_NETNSA_NAME),
  // for what is kept (ifcored --state). Keeps ids_ too. Context: control lock.
  void publish_nsid(const Namespace& ns, const Namespace& peer, int id, bool added);
  // The device's RTM_NEWLINK for the tap alone (clients hear nothing): a change Linux does
  // not announce with one, as a down bridge port's settings (Linux: only AF_BRIDGE's
  // IFLA_PROTINFO), for what is kept (ifcored --state). Context: control lock.
  void record_link(Control& ctl, const Device& dev);
  // Sends one encoded message to the sessions of namespace `ns_id` in `group`. With
  // `echoable` false the message is never echoed to the requester (Linux: rtnl_notify
  // without the request's header, as netconf's notifications are sent): it is broadcast
  // to every member, the requester too. Context: control lock (for the scope).
  // With `tapped` false the tap does not see it (the caller gives the tap its own).
  void publish(int ns_id, unsigned group, std::span<const std::uint8_t> msg, bool echoable = true,
               bool tapped = true);
  // True if a message for (ns_id, group) would reach anybody. Context: control lock.
  bool wanted(int ns_id, unsigned group, bool echoable = true);
  // The header of a notification: seq 0 and pid 0, or the requester's for NLM_F_ECHO.
  // Context: control lock.
  wire::Header notify_header(int ns_id, std::uint16_t type, std::uint16_t flags = 0) const;

  void add(SessionImpl* s);
  void remove(SessionImpl* s);
  // A session's groups went from `before` to `after` (bit g-1: group g). Context: any.
  void count_groups(std::uint64_t before, std::uint64_t after);

  RequestScope* scope = nullptr;  // Context: control lock
  Server::TapFn tap;              // Context: control lock (Server::set_tap)

 private:
  std::uint64_t nsid_observer_ = 0;  // Control::add_nsid_observer
  // What each namespace calls the others, by Namespace::id (listener, peer) -> nsid: a copy
  // the nsid observer keeps, for the sessions that hear every namespace their own gives an
  // id (NETLINK_LISTEN_ALL_NSID), read under mu_ whatever control publishes.
  std::map<std::pair<int, int>, int> ids_ IFCORE_GUARDED_BY(mu_);
  // Drops a destroyed namespace's own ids from ids_ (those others gave it go by the
  // observer). Context: the engine's control lock.
  struct Forget final : PernetHooks {
    explicit Forget(Hub& h) : hub(&h) {}
    void exit(Control&, Namespace& ns) override;
    Hub* hub;
  };
  Forget forget_{*this};
  Engine* engine_;
  Mutex mu_;  // LOCK ORDERING: inside the control lock (or alone); then SessionImpl::qmu_
  std::vector<SessionImpl*> sessions_ IFCORE_GUARDED_BY(mu_);
  // The RTM_DELLINKs built at their devices' Unregister, sent at their Uninit (Linux:
  // unregister_netdevice_many_notify sends it after ndo_uninit); held_ counts them, so that
  // nobody listening costs no lock.
  struct HeldDellink {
    const Device* dev;
    int ns_id;
    std::vector<std::uint8_t> msg;
  };
  std::vector<HeldDellink> dellinks_ IFCORE_GUARDED_BY(mu_);
  std::atomic<std::size_t> held_{0};
  // The encoded RTM_NEWLINK / RTM_DELLINK publish_link sends (empty: nobody would hear it).
  std::vector<std::uint8_t> link_notification(Control& ctl, const Device& dev, std::uint16_t type,
                                              std::uint32_t change, std::uint32_t event = 0);
  void send_dellink(const Device& dev);
  // Sessions in each group, any namespace: wanted() answers "nobody" without mu_ (a
  // create announced its device, addresses and routes to no one, a lock each).
  std::array<std::atomic<int>, 64> members_{};
  SubscriptionId sub_ = 0;
  // The events Linux announces from rtnetlink_event (CHANGEMTU, CHANGEADDR, CHANGENAME,
  // CHANGEUPPER, CHANGEINFODATA), whose notifier was registered before every protocol's
  // and kind's: subscribed ahead of them (priority 1) so RTM_NEWLINK goes first, before the
  // addresses and routes the change makes others announce (a rename's RTM_NEWADDR).
  struct Early final : Subscriber {
    explicit Early(Hub& h) : hub(&h) {}
    Result<void> on_event(Control& ctl, const EventInfo& ev) override {
      return hub->on_event(ctl, ev);
    }
    Hub* hub;
  };
  Early early_{*this};
  SubscriptionId early_sub_ = 0;
  bool attached_ = false;
  ProtoPublisher proto_{*this};
  FdbPublisher fdb_{*this};
  MdbPublisher mdb_{*this};
  VniPublisher vni_{*this};
  BridgePortPublisher brport_{*this};
};

class SessionImpl final : public Session {
 public:
  SessionImpl(std::shared_ptr<Hub> hub, SessionOptions opts, int ns_id);
  ~SessionImpl() override;

  void handle(std::span<const std::uint8_t> datagram, const SendFn& send) override;
  bool dump_pending() const override { return dump_ != nullptr; }
  void continue_dump(const SendFn& send) override;
  void set_option(int optname, int value) override;
  void add_membership(unsigned group) override;
  void drop_membership(unsigned group) override;
  void set_group_mask(std::uint32_t mask) override;
  std::size_t pending_notifications() const override;
  bool pop_notification(Datagram& out) override;
  bool take_overflow() override;
  void set_wakeup(std::function<void()> wake) override;

  // For the hub. Context: any thread.
  int ns_id() const { return ns_id_; }
  bool member(unsigned group) const;
  // NETLINK_LISTEN_ALL_NSID: notifications of the namespaces the session's gives an id too.
  bool listen_all_nsid() const { return listen_all_nsid_.load(std::memory_order_relaxed); }
  // Queues one notification; with `nsid`, behind the IFCORE_NLMSG_NSID message that
  // carries it (control_msg.h). Context: Hub::mu_ held.
  void enqueue(std::span<const std::uint8_t> msg, std::optional<std::int32_t> nsid = {});

  // For the handlers (the session's thread).
  Hub& hub() const { return *hub_; }
  const SessionOptions& options() const { return opts_; }
  wire::AckOptions ack_options() const { return ack_; }
  bool strict_check() const { return strict_; }

 private:
  void handle_message(const wire::Message& m, Reply& out);
  // Keeps `rest` as the pending dump of the request `m`.
  void keep_dump(const wire::Message& m, std::unique_ptr<DumpRest> rest);

  std::shared_ptr<Hub> hub_;
  SessionOptions opts_;
  const int ns_id_;
  wire::AckOptions ack_;
  bool strict_ = false;                       // NETLINK_GET_STRICT_CHK
  bool no_enobufs_ = false;                   // NETLINK_NO_ENOBUFS
  std::atomic<std::uint64_t> groups_{0};      // bit g-1 for RTNLGRP g (1..64)
  std::atomic<bool> listen_all_nsid_{false};  // NETLINK_LISTEN_ALL_NSID
  // The dump sent in parts, and its request's bytes (the session's thread only).
  std::unique_ptr<DumpRest> dump_;
  std::vector<std::uint8_t> dump_request_;

  // LOCK ORDERING: a leaf, inside Hub::mu_ (publish) or alone (the session's thread).
  mutable Mutex qmu_;
  std::deque<Datagram> queue_ IFCORE_GUARDED_BY(qmu_);
  std::size_t queued_bytes_ IFCORE_GUARDED_BY(qmu_) = 0;  // the bytes of queue_
  bool overflow_ IFCORE_GUARDED_BY(qmu_) = false;
  std::function<void()> wake_ IFCORE_GUARDED_BY(qmu_);
  // Written under qmu_, read without it: whether queue_ or overflow_ holds anything. The
  // session's thread asks it before every request, and mostly there is nothing.
  std::atomic<bool> queued_{false};
};

}  // namespace ifcore::rtnl
