// The announcements of bridge ports (Linux: br_ifinfo_notify, an AF_BRIDGE RTM_NEWLINK or
// RTM_DELLINK on RTNLGRP_LINK): the listeners, and the points of net/bridge that announce
// — br_stp_enable_port (two: br_make_forwarding's and its own), br_stp_disable_port,
// br_device_event's port events, br_add_if, del_nbp, br_setlink, and a port's forward delay
// timer. bridge.cc decides when; this file says what goes out.
#include "ifcore/bridge_port.h"

#include <linux/if_bridge.h>

#include <chrono>
#include <vector>

#include "ifcore/timer.h"

#include "kinds/bridge_priv.h"
#include "kinds/common.h"
#include "kinds/fdb_install.h"

namespace ifcore::bridge_port {

namespace {

const int kTag = 0;

struct State {
  std::vector<Listener*> listeners;
};

State* state(Control& ctl) {
  return ctl.engine().plugin_data<State>(&kTag);
}

void tell(Control& ctl, const Device& br, const Device& port, bool deleted) {
  State* s = state(ctl);
  if (!s) return;
  for (Listener* l : s->listeners) l->on_port(ctl, br, port, deleted);
}

}  // namespace

void add_listener(Control& ctl, Listener& l) {
  State* s = state(ctl);
  kinds::update_listeners(ctl, s ? &s->listeners : nullptr, l, true);
}

void remove_listener(Control& ctl, Listener& l) {
  State* s = state(ctl);
  kinds::update_listeners(ctl, s ? &s->listeners : nullptr, l, false);
}

void announce(Control& ctl, const Device& br, const Device& port) {
  PluginGuard guard(ctl);  // the listeners read the bridge's state
  tell(ctl, br, port, false);
}

}  // namespace ifcore::bridge_port

namespace ifcore::kinds::bridge {

void announce_port(Control& ctl, Device& br, Port& port, bool deleted) {
  bridge_port::tell(ctl, br, *port.dev, deleted);
}

// Linux: br_stp_enable_port — br_make_forwarding announces the port it moved out of
// BR_STATE_BLOCKING and arms the forward delay timer (a bridge with a forward delay of 0
// arms none), then br_stp_enable_port announces it again.
void announce_enabled(Control& ctl, Device& br, Priv& p, Port& port) {
  announce_port(ctl, br, port);
  arm_forward_delay(ctl, br, p, port);
  announce_port(ctl, br, port);
}

// Linux: br_make_forwarding arms the port's forward_delay_timer; when it runs,
// br_forward_delay_timer_expired announces the port whatever its state (ifcore runs no STP,
// so a listening port stays so: the timer is announced once).
void arm_forward_delay(Control& ctl, Device& br, Priv& p, Port& port) {
  if (!p.s.forward_delay) {
    stop_forward_delay(ctl, port);
    return;
  }
  if (!port.fwd_timer) {
    Device* b = &br;
    Device* d = port.dev.get();
    port.fwd_timer = add_timer(ctl, [b, d](Control& c) {
      PluginGuard guard(c);  // the bridge's own state
      Priv* q = priv(*b);
      Port* e = q ? q->find(*d) : nullptr;
      if (!e) return;
      e->fwd_deadline.reset();
      if (e->s.state != BR_STATE_DISABLED) announce_port(c, *b, *e);
    });
  }
  // Linux: clock_t_to_jiffies — forward_delay is in 1/100 s.
  port.fwd_deadline = br.engine().time().now() + std::chrono::milliseconds(10) * p.s.forward_delay;
  arm_timer(ctl, port.fwd_timer, *port.fwd_deadline);
}

void stop_forward_delay(Control& ctl, Port& port) {
  if (port.fwd_timer) cancel_timer(ctl, port.fwd_timer);
  port.fwd_deadline.reset();
}

void drop_forward_delay(Control& ctl, Port& port) {
  if (port.fwd_timer) remove_timer(ctl, port.fwd_timer);
  port.fwd_timer = 0;
  port.fwd_deadline.reset();
}

std::uint64_t forward_delay_left(const Device& br, const Port& port) {
  if (!port.fwd_deadline) return 0;
  // Linux: br_timer_value — the jiffies left (HZ 250 here: 4 ms each, the current one
  // counted whole), in 1/100 s.
  constexpr std::int64_t kJiffyNs = 4'000'000;
  const std::int64_t left = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                *port.fwd_deadline - br.engine().time().now())
                                .count();
  if (left <= 0) return 0;
  const std::int64_t jiffies = (left + kJiffyNs - 1) / kJiffyNs;
  return static_cast<std::uint64_t>(jiffies * 100 / 250);
}

}  // namespace ifcore::kinds::bridge

namespace ifcore::kinds {

void bridge_port_install(Engine& engine) {
  engine.set_plugin_data(&bridge_port::kTag, std::make_shared<bridge_port::State>());
}

}  // namespace ifcore::kinds
