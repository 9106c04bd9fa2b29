// Bridge attributes: IFLA_BR_* (IFLA_INFO_DATA) and IFLA_BRPORT_* (IFLA_INFO_SLAVE_DATA):
// policies, defaults, checks with Linux's ranges (net/bridge/br_netlink.c br_validate,
// br_changelink, br_setport; br_stp.c; br_multicast.c) and the reports (br_fill_info,
// br_port_fill_attrs), written for ifcore.
#include <net/if.h>  // before any <linux/if*.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>

#include <cerrno>

#include "kinds/bridge_priv.h"
#include "kinds/common.h"

namespace ifcore::kinds::bridge {

namespace {

// Linux 6.18's values, newer than the uapi headers ifcore builds with.
constexpr std::uint16_t kIflaBrFdbNLearned = 48;    // IFLA_BR_FDB_N_LEARNED
constexpr std::uint16_t kIflaBrFdbMaxLearned = 49;  // IFLA_BR_FDB_MAX_LEARNED
constexpr std::uint32_t kBoolOptMask618 = 0x1f;     // (1 << BR_BOOLOPT_MAX) - 1 in 6.18

// Linux: BR_MIN/MAX_* in br_private.h, in clock_t.
constexpr std::uint32_t kMinForwardDelay = 200, kMaxForwardDelay = 3000;
constexpr std::uint32_t kMinHelloTime = 100, kMaxHelloTime = 1000;
constexpr std::uint32_t kMinMaxAge = 600, kMaxMaxAge = 4000;
constexpr std::uint16_t kGroupFwdRestricted = 0x0007;  // STP | MACPAUSE | LACP
constexpr std::uint16_t kGroupFwdMacPause = 0x0002;
constexpr std::uint16_t kMaxPortPriority = 63;  // (1 << (16 - BR_PORT_BITS)) - 1
constexpr std::uint32_t kMaxPathCost = 65535;
constexpr std::uint16_t kVidMask = 0x0fff;

constexpr AttrPolicyEntry kPolicy[] = {
    {IFLA_BR_FORWARD_DELAY, AttrShape::U32},
    {IFLA_BR_HELLO_TIME, AttrShape::U32},
    {IFLA_BR_MAX_AGE, AttrShape::U32},
    {IFLA_BR_AGEING_TIME, AttrShape::U32},
    {IFLA_BR_STP_STATE, AttrShape::U32},
    {IFLA_BR_PRIORITY, AttrShape::U16},
    {IFLA_BR_VLAN_FILTERING, AttrShape::U8},
    {IFLA_BR_VLAN_PROTOCOL, AttrShape::Be16},
    {IFLA_BR_GROUP_FWD_MASK, AttrShape::U16},
    {IFLA_BR_GROUP_ADDR, AttrShape::Binary, 6, 6},
    {IFLA_BR_FDB_FLUSH, AttrShape::Flag},
    {IFLA_BR_MCAST_ROUTER, AttrShape::U8},
    {IFLA_BR_MCAST_SNOOPING, AttrShape::U8},
    {IFLA_BR_MCAST_QUERY_USE_IFADDR, AttrShape::U8},
    {IFLA_BR_MCAST_QUERIER, AttrShape::U8},
    {IFLA_BR_MCAST_HASH_ELASTICITY, AttrShape::U32},
    {IFLA_BR_MCAST_HASH_MAX, AttrShape::U32},
    {IFLA_BR_MCAST_LAST_MEMBER_CNT, AttrShape::U32},
    {IFLA_BR_MCAST_STARTUP_QUERY_CNT, AttrShape::U32},
    {IFLA_BR_MCAST_LAST_MEMBER_INTVL, AttrShape::U64},
    {IFLA_BR_MCAST_MEMBERSHIP_INTVL, AttrShape::U64},
    {IFLA_BR_MCAST_QUERIER_INTVL, AttrShape::U64},
    {IFLA_BR_MCAST_QUERY_INTVL, AttrShape::U64},
    {IFLA_BR_MCAST_QUERY_RESPONSE_INTVL, AttrShape::U64},
    {IFLA_BR_MCAST_STARTUP_QUERY_INTVL, AttrShape::U64},
    {IFLA_BR_NF_CALL_IPTABLES, AttrShape::U8},
    {IFLA_BR_NF_CALL_IP6TABLES, AttrShape::U8},
    {IFLA_BR_NF_CALL_ARPTABLES, AttrShape::U8},
    {IFLA_BR_VLAN_DEFAULT_PVID, AttrShape::U16},
    {IFLA_BR_VLAN_STATS_ENABLED, AttrShape::U8},
    {IFLA_BR_MCAST_STATS_ENABLED, AttrShape::U8},
    {IFLA_BR_MCAST_IGMP_VERSION, AttrShape::U8},
    {IFLA_BR_MCAST_MLD_VERSION, AttrShape::U8},
    {IFLA_BR_VLAN_STATS_PER_PORT, AttrShape::U8},
    {IFLA_BR_MULTI_BOOLOPT, AttrShape::Binary, sizeof(br_boolopt_multi), sizeof(br_boolopt_multi)},
};

constexpr AttrPolicyEntry kPortPolicy[] = {
    {IFLA_BRPORT_STATE, AttrShape::U8},
    {IFLA_BRPORT_PRIORITY, AttrShape::U16},
    {IFLA_BRPORT_COST, AttrShape::U32},
    {IFLA_BRPORT_MODE, AttrShape::U8},
    {IFLA_BRPORT_GUARD, AttrShape::U8},
    {IFLA_BRPORT_PROTECT, AttrShape::U8},
    {IFLA_BRPORT_FAST_LEAVE, AttrShape::U8},
    {IFLA_BRPORT_LEARNING, AttrShape::U8},
    {IFLA_BRPORT_UNICAST_FLOOD, AttrShape::U8},
    {IFLA_BRPORT_PROXYARP, AttrShape::U8},
    {IFLA_BRPORT_PROXYARP_WIFI, AttrShape::U8},
    {IFLA_BRPORT_MULTICAST_ROUTER, AttrShape::U8},
    {IFLA_BRPORT_MCAST_FLOOD, AttrShape::U8},
    {IFLA_BRPORT_MCAST_TO_UCAST, AttrShape::U8},
    {IFLA_BRPORT_VLAN_TUNNEL, AttrShape::U8},
    {IFLA_BRPORT_BCAST_FLOOD, AttrShape::U8},
    {IFLA_BRPORT_GROUP_FWD_MASK, AttrShape::U16},
    {IFLA_BRPORT_NEIGH_SUPPRESS, AttrShape::U8},
    {IFLA_BRPORT_ISOLATED, AttrShape::U8},
    {IFLA_BRPORT_MCAST_EHT_HOSTS_LIMIT, AttrShape::U32},
    {IFLA_BRPORT_LOCKED, AttrShape::U8},
    {IFLA_BRPORT_FLUSH, AttrShape::Flag},
    {IFLA_BRPORT_BACKUP_PORT, AttrShape::U32},
};

// Options that are booleans on the wire (u8 0/1): Linux stores them as bits.
// Linux keeps the bridge's times in jiffies: a time in clock_t (1/100 s) is kept as
// clock_t_to_jiffies(x) and reported as jiffies_to_clock_t of that. At this kernel's HZ of
// 250 a value comes back rounded down to a multiple of 0.04 s (1501 -> 1500).
std::uint64_t ticks(std::uint64_t cs) {
  constexpr unsigned kHz = 250, kUserHz = 100;
  const unsigned __int128 j = static_cast<unsigned __int128>(cs) * kHz / kUserHz;
  const std::uint64_t jiffies = j > ~std::uint64_t{0} ? ~std::uint64_t{0} : std::uint64_t(j);
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(jiffies) * kUserHz / kHz);
}

bool is_interval(std::uint16_t t) {
  switch (t) {
    case IFLA_BR_MCAST_LAST_MEMBER_INTVL:
    case IFLA_BR_MCAST_MEMBERSHIP_INTVL:
    case IFLA_BR_MCAST_QUERIER_INTVL:
    case IFLA_BR_MCAST_QUERY_INTVL:
    case IFLA_BR_MCAST_QUERY_RESPONSE_INTVL:
    case IFLA_BR_MCAST_STARTUP_QUERY_INTVL:
      return true;
    default:
      return false;
  }
}

bool is_bool_opt(std::uint16_t t) {
  switch (t) {
    case IFLA_BR_MCAST_SNOOPING:
    case IFLA_BR_MCAST_QUERY_USE_IFADDR:
    case IFLA_BR_MCAST_QUERIER:
    case IFLA_BR_MCAST_STATS_ENABLED:
    case IFLA_BR_NF_CALL_IPTABLES:
    case IFLA_BR_NF_CALL_IP6TABLES:
    case IFLA_BR_NF_CALL_ARPTABLES:
      return true;
    default:
      return false;
  }
}

void put(std::map<std::uint16_t, Attr>& m, Attr a) {
  m[a.type] = std::move(a);
}

Attr with_num(const Attr& shape, std::uint64_t v) {
  Attr a = shape;
  a.num = v;
  return a;
}

}  // namespace

Priv* priv(const Device& dev) {
  return priv_of<Priv>(dev);
}

AttrPolicy policy() {
  return kPolicy;
}
AttrPolicy port_policy() {
  return kPortPolicy;
}

Settings default_settings() {
  // Linux: br_dev_setup, br_multicast_init, br_vlan_init defaults.
  Settings s;
  auto& o = s.opts;
  put(o, Attr::u8(IFLA_BR_MCAST_ROUTER, 1));  // MDB_RTR_TYPE_TEMP_QUERY
  put(o, Attr::u8(IFLA_BR_MCAST_SNOOPING, 1));
  put(o, Attr::u8(IFLA_BR_MCAST_QUERY_USE_IFADDR, 0));
  put(o, Attr::u8(IFLA_BR_MCAST_QUERIER, 0));
  put(o, Attr::u8(IFLA_BR_MCAST_STATS_ENABLED, 0));
  put(o, Attr::u32(IFLA_BR_MCAST_HASH_ELASTICITY, 16));
  put(o, Attr::u32(IFLA_BR_MCAST_HASH_MAX, 4096));
  put(o, Attr::u32(IFLA_BR_MCAST_LAST_MEMBER_CNT, 2));
  put(o, Attr::u32(IFLA_BR_MCAST_STARTUP_QUERY_CNT, 2));
  put(o, Attr::u8(IFLA_BR_MCAST_IGMP_VERSION, 2));
  put(o, Attr::u8(IFLA_BR_MCAST_MLD_VERSION, 1));
  put(o, Attr::u8(IFLA_BR_NF_CALL_IPTABLES, 0));
  put(o, Attr::u8(IFLA_BR_NF_CALL_IP6TABLES, 0));
  put(o, Attr::u8(IFLA_BR_NF_CALL_ARPTABLES, 0));
  put(o, Attr::u16(IFLA_BR_VLAN_DEFAULT_PVID, 1));
  put(o, Attr::u8(IFLA_BR_VLAN_STATS_ENABLED, 0));
  put(o, Attr::u8(IFLA_BR_VLAN_STATS_PER_PORT, 0));
  put(o, Attr::u64(IFLA_BR_MCAST_LAST_MEMBER_INTVL, 100));
  put(o, Attr::u64(IFLA_BR_MCAST_MEMBERSHIP_INTVL, 26000));
  put(o, Attr::u64(IFLA_BR_MCAST_QUERIER_INTVL, 25500));
  put(o, Attr::u64(IFLA_BR_MCAST_QUERY_INTVL, 12500));
  put(o, Attr::u64(IFLA_BR_MCAST_QUERY_RESPONSE_INTVL, 1000));
  // Linux: query_interval / 4 in jiffies (HZ=250: 7812), reported as clock_t: 3124.
  put(o, Attr::u64(IFLA_BR_MCAST_STARTUP_QUERY_INTVL, 3124));
  return s;
}

PortSettings default_port_settings(const Device& dev) {
  // Linux: new_nbp: learning and flooding on; port_cost(): 100 for a device of unknown
  // speed, 2 for veth (it reports 10 Gb/s), and for a macvlan or a vlan on one (their
  // ethtool speed is their lower's).
  PortSettings p;
  const Device* speed_of = &dev;
  while ((speed_of->kind().name() == "macvlan" || speed_of->kind().name() == "vlan") &&
         speed_of->link())
    speed_of = speed_of->link();
  if (speed_of->kind().name() == "veth") p.cost = 2;
  auto& o = p.opts;
  for (std::uint16_t t : {IFLA_BRPORT_MODE, IFLA_BRPORT_GUARD, IFLA_BRPORT_PROTECT,
                          IFLA_BRPORT_FAST_LEAVE, IFLA_BRPORT_MCAST_TO_UCAST, IFLA_BRPORT_PROXYARP,
                          IFLA_BRPORT_PROXYARP_WIFI, IFLA_BRPORT_VLAN_TUNNEL,
                          IFLA_BRPORT_NEIGH_SUPPRESS, IFLA_BRPORT_ISOLATED, IFLA_BRPORT_LOCKED})
    put(o, Attr::u8(t, 0));
  for (std::uint16_t t : {IFLA_BRPORT_LEARNING, IFLA_BRPORT_UNICAST_FLOOD, IFLA_BRPORT_MCAST_FLOOD,
                          IFLA_BRPORT_BCAST_FLOOD, IFLA_BRPORT_MULTICAST_ROUTER})
    put(o, Attr::u8(t, 1));
  put(o, Attr::u16(IFLA_BRPORT_GROUP_FWD_MASK, 0));
  put(o, Attr::u32(IFLA_BRPORT_MCAST_EHT_HOSTS_LIMIT, 512));
  return p;
}

Result<void> change(Settings& s, const AttrList& data) {
  // Linux: br_validate.
  if (auto p = attr_num(data, IFLA_BR_VLAN_PROTOCOL); p && *p != ETH_P_8021Q && *p != ETH_P_8021AD)
    return fail_log_only(EPROTONOSUPPORT, "bridge vlan protocol {:#06x} is not 802.1Q or 802.1ad",
                         *p);
  if (auto pvid = attr_num(data, IFLA_BR_VLAN_DEFAULT_PVID); pvid && *pvid >= kVidMask)
    return fail_log_only(EINVAL, "bridge default pvid {} exceeds maximum 4094", *pvid);
  // Linux: br_changelink, in its order (forward delay is checked against the STP state
  // before this request's IFLA_BR_STP_STATE applies).
  if (auto v = attr_num(data, IFLA_BR_FORWARD_DELAY)) {
    if (s.stp_state && (*v < kMinForwardDelay || *v > kMaxForwardDelay))
      return fail_log_only(ERANGE, "bridge forward delay {} is outside {}..{}", *v,
                           kMinForwardDelay, kMaxForwardDelay);
    s.forward_delay = static_cast<std::uint32_t>(ticks(*v));
  }
  if (auto v = attr_num(data, IFLA_BR_HELLO_TIME)) {
    if (*v < kMinHelloTime || *v > kMaxHelloTime)
      return fail_log_only(ERANGE, "bridge hello time {} is outside {}..{}", *v, kMinHelloTime,
                           kMaxHelloTime);
    s.hello_time = static_cast<std::uint32_t>(ticks(*v));
  }
  if (auto v = attr_num(data, IFLA_BR_MAX_AGE)) {
    if (*v < kMinMaxAge || *v > kMaxMaxAge)
      return fail_log_only(ERANGE, "bridge max age {} is outside {}..{}", *v, kMinMaxAge,
                           kMaxMaxAge);
    s.max_age = static_cast<std::uint32_t>(ticks(*v));
  }
  if (auto v = attr_num(data, IFLA_BR_AGEING_TIME))
    s.ageing_time = static_cast<std::uint32_t>(ticks(*v));
  if (auto v = attr_num(data, IFLA_BR_STP_STATE)) {
    // Linux: br_stp_start clamps the forward delay into range when STP starts.
    s.stp_state = *v ? 1 : 0;  // BR_KERNEL_STP (no user-space STP helper)
    if (s.stp_state) {
      if (s.forward_delay < kMinForwardDelay) s.forward_delay = kMinForwardDelay;
      if (s.forward_delay > kMaxForwardDelay) s.forward_delay = kMaxForwardDelay;
    }
  }
  if (auto v = attr_num(data, IFLA_BR_PRIORITY)) s.priority = static_cast<std::uint16_t>(*v);
  if (auto v = attr_num(data, IFLA_BR_VLAN_FILTERING)) s.vlan_filtering = *v ? 1 : 0;
  if (auto v = attr_num(data, IFLA_BR_VLAN_PROTOCOL))
    s.vlan_protocol = static_cast<std::uint16_t>(*v);
  if (auto v = attr_num(data, IFLA_BR_GROUP_FWD_MASK)) {
    if (*v & kGroupFwdRestricted)
      return fail_log_only(EINVAL, "bridge group forward mask {:#x} includes restricted bits {:#x}",
                           *v, kGroupFwdRestricted);
    s.group_fwd_mask = static_cast<std::uint16_t>(*v);
  }
  if (const Attr* a = find_attr(data, IFLA_BR_GROUP_ADDR)) {
    // Linux: a link-local group 01:80:c2:00:00:0X, but not the reserved 01, 02 and 03.
    HwAddr g(a->bin);
    bool link_local = g.size() == 6 && g[0] == 0x01 && g[1] == 0x80 && g[2] == 0xc2 && g[3] == 0 &&
                      g[4] == 0 && (g[5] & 0xf0) == 0;
    if (!link_local || g[5] == 1 || g[5] == 2 || g[5] == 3)
      return fail_log_only(EINVAL, "bridge group address {} is not an allowed link-local group",
                           g.to_string());
    s.group_addr = g;
  }
  if (auto v = attr_num(data, IFLA_BR_MCAST_ROUTER); v && *v > 2)
    return fail_log_only(EINVAL, "bridge multicast router type {} is not known", *v);
  if (auto v = attr_num(data, IFLA_BR_MCAST_IGMP_VERSION); v && *v != 2 && *v != 3)
    return fail_log_only(EINVAL, "IGMP version {} is not 2 or 3", *v);
  if (auto v = attr_num(data, IFLA_BR_MCAST_MLD_VERSION); v && *v != 1 && *v != 2)
    return fail_log_only(EINVAL, "MLD version {} is not 1 or 2", *v);
  for (std::uint16_t t : {IFLA_BR_VLAN_STATS_ENABLED, IFLA_BR_VLAN_STATS_PER_PORT})
    if (auto v = attr_num(data, t); v && *v > 1)
      return fail(EINVAL, "bridge vlan statistics value {} is not 0 or 1", *v);
  if (const Attr* a = find_attr(data, IFLA_BR_MULTI_BOOLOPT)) {
    std::uint32_t val = load_u32(a->bin, 0), mask = load_u32(a->bin, 4);
    if (mask & ~((1u << BR_BOOLOPT_MAX) - 1))
      return fail(EINVAL, "bridge boolean option mask {:#x} has unknown options", mask);
    // Linux: br_multicast_toggle_vlan_snooping, turned on without vlan filtering.
    const std::uint32_t vlan_snooping = 1u << BR_BOOLOPT_MCAST_VLAN_SNOOPING;
    if ((mask & val & vlan_snooping) && !s.vlan_filtering)
      return fail(EINVAL,
                  "bridge: Cannot enable multicast vlan snooping with vlan filtering disabled");
    s.boolopts = (s.boolopts & ~mask) | (val & mask);
  }
  for (const Attr& a : data) {
    auto it = s.opts.find(a.type);
    if (it == s.opts.end()) continue;
    if (a.type == IFLA_BR_MCAST_HASH_ELASTICITY) continue;  // Linux: fixed at 16, ignored
    std::uint64_t v = is_bool_opt(a.type) ? (a.num ? 1 : 0) : a.num;
    if (is_interval(a.type)) v = ticks(v);
    // Linux: br_multicast_set_query_intvl / _startup_query_intvl clamp to 1 s .. 1 day.
    if (a.type == IFLA_BR_MCAST_QUERY_INTVL || a.type == IFLA_BR_MCAST_STARTUP_QUERY_INTVL)
      v = std::clamp<std::uint64_t>(v, 100, 8640000);
    it->second = with_num(it->second, v);
  }
  return ok();
}

Result<void> change_port(const Settings& br, const Device& port_dev, PortSettings& p,
                         const AttrList& data) {
  // Linux: br_setport, br_set_port_state, br_stp_set_port_priority, br_stp_set_path_cost:
  // their errors are the errno alone.
  if (auto v = attr_num(data, IFLA_BRPORT_STATE)) {
    if (*v > BR_STATE_BLOCKING)
      return fail_log_only(EINVAL, "port \"{}\": state {} is not known", port_dev.name(), *v);
    if (br.stp_state)
      return fail_log_only(EBUSY, "port \"{}\": the bridge runs STP, its state is not settable",
                           port_dev.name());
    // A port that is down takes no state; one without carrier only disabled.
    if (!port_dev.is_up() || (!port_dev.carrier() && *v != BR_STATE_DISABLED))
      return fail_log_only(ENETDOWN, "port \"{}\" is down", port_dev.name());
    p.state = static_cast<std::uint8_t>(*v);
  }
  if (auto v = attr_num(data, IFLA_BRPORT_PRIORITY)) {
    if (*v > kMaxPortPriority)
      return fail_log_only(ERANGE, "port \"{}\": priority {} exceeds maximum {}", port_dev.name(),
                           *v, kMaxPortPriority);
    p.priority = static_cast<std::uint16_t>(*v);
  }
  if (auto v = attr_num(data, IFLA_BRPORT_COST)) {
    if (*v < 1 || *v > kMaxPathCost)
      return fail_log_only(ERANGE, "port \"{}\": cost {} is outside 1..{}", port_dev.name(), *v,
                           kMaxPathCost);
    p.cost = static_cast<std::uint32_t>(*v);
  }
  if (auto v = attr_num(data, IFLA_BRPORT_MULTICAST_ROUTER); v && *v > 3)
    return fail_log_only(EINVAL, "port \"{}\": multicast router type {} is not known",
                         port_dev.name(), *v);
  if (auto v = attr_num(data, IFLA_BRPORT_GROUP_FWD_MASK); v && (*v & kGroupFwdMacPause))
    return fail_log_only(EINVAL, "port \"{}\": group forward mask {:#x} includes MAC pause frames",
                         port_dev.name(), *v);
  if (auto v = attr_num(data, IFLA_BRPORT_MCAST_EHT_HOSTS_LIMIT); v && *v == 0)
    return fail_log_only(EINVAL, "port \"{}\": EHT hosts limit must be positive", port_dev.name());
  for (const Attr& a : data) {
    auto it = p.opts.find(a.type);
    if (it == p.opts.end()) continue;
    bool plain_bool = it->second.shape == AttrShape::U8 && a.type != IFLA_BRPORT_MULTICAST_ROUTER;
    it->second = with_num(it->second, plain_bool ? (a.num ? 1 : 0) : a.num);
  }
  return ok();
}

std::vector<std::uint8_t> bridge_id(const Device& br, std::uint16_t priority) {
  std::vector<std::uint8_t> id = {static_cast<std::uint8_t>(priority >> 8),
                                  static_cast<std::uint8_t>(priority)};
  HwAddr a = br.address();
  id.insert(id.end(), a.bytes().begin(), a.bytes().end());
  id.resize(sizeof(ifla_bridge_id));
  return id;
}

AttrList fill(const Device& dev, const Priv& p) {
  // Linux 6.18: br_fill_info, in its order, as built without CONFIG_BRIDGE_VLAN_FILTERING
  // (like this machine's kernel: no IFLA_BR_VLAN_PROTOCOL, _DEFAULT_PVID, _STATS_*).
  // ifcore runs no STP or gc timers: the bridge is its own root, timers read 0.
  const Settings& s = p.s;
  auto id = bridge_id(dev, s.priority);
  auto opt = [&](std::uint16_t t) { return s.opts.at(t); };
  AttrList out;
  for (std::uint16_t t :
       {IFLA_BR_HELLO_TIMER, IFLA_BR_TCN_TIMER, IFLA_BR_TOPOLOGY_CHANGE_TIMER, IFLA_BR_GC_TIMER})
    out.push_back(Attr::u64(t, 0));
  out.push_back(Attr::u32(IFLA_BR_FORWARD_DELAY, s.forward_delay));
  out.push_back(Attr::u32(IFLA_BR_HELLO_TIME, s.hello_time));
  out.push_back(Attr::u32(IFLA_BR_MAX_AGE, s.max_age));
  out.push_back(Attr::u32(IFLA_BR_AGEING_TIME, s.ageing_time));
  out.push_back(Attr::u32(IFLA_BR_STP_STATE, s.stp_state));
  out.push_back(Attr::u16(IFLA_BR_PRIORITY, s.priority));
  out.push_back(Attr::u8(IFLA_BR_VLAN_FILTERING, s.vlan_filtering));
  out.push_back(Attr::u16(IFLA_BR_GROUP_FWD_MASK, s.group_fwd_mask));
  out.push_back(Attr::binary(IFLA_BR_BRIDGE_ID, id));
  out.push_back(Attr::binary(IFLA_BR_ROOT_ID, id));
  out.push_back(Attr::u16(IFLA_BR_ROOT_PORT, 0));
  out.push_back(Attr::u32(IFLA_BR_ROOT_PATH_COST, 0));
  out.push_back(Attr::u8(IFLA_BR_TOPOLOGY_CHANGE, 0));
  out.push_back(Attr::u8(IFLA_BR_TOPOLOGY_CHANGE_DETECTED, 0));
  out.push_back(Attr::binary(IFLA_BR_GROUP_ADDR, s.group_addr.bytes()));
  std::vector<std::uint8_t> bm;
  store_u32(bm, s.boolopts);
  store_u32(bm, kBoolOptMask618);
  out.push_back(Attr::binary(IFLA_BR_MULTI_BOOLOPT, bm));
  // Linux 6.8+: the learned-entry count and its limit (0: none).
  out.push_back(Attr::u32(kIflaBrFdbNLearned, 0));
  out.push_back(Attr::u32(kIflaBrFdbMaxLearned, 0));
  for (std::uint16_t t :
       {IFLA_BR_MCAST_ROUTER, IFLA_BR_MCAST_SNOOPING, IFLA_BR_MCAST_QUERY_USE_IFADDR,
        IFLA_BR_MCAST_QUERIER, IFLA_BR_MCAST_STATS_ENABLED, IFLA_BR_MCAST_HASH_ELASTICITY,
        IFLA_BR_MCAST_HASH_MAX, IFLA_BR_MCAST_LAST_MEMBER_CNT, IFLA_BR_MCAST_STARTUP_QUERY_CNT,
        IFLA_BR_MCAST_IGMP_VERSION, IFLA_BR_MCAST_MLD_VERSION})
    out.push_back(opt(t));
  for (std::uint16_t t : {IFLA_BR_MCAST_LAST_MEMBER_INTVL, IFLA_BR_MCAST_MEMBERSHIP_INTVL,
                          IFLA_BR_MCAST_QUERIER_INTVL, IFLA_BR_MCAST_QUERY_INTVL,
                          IFLA_BR_MCAST_QUERY_RESPONSE_INTVL, IFLA_BR_MCAST_STARTUP_QUERY_INTVL})
    out.push_back(opt(t));
  for (std::uint16_t t :
       {IFLA_BR_NF_CALL_IPTABLES, IFLA_BR_NF_CALL_IP6TABLES, IFLA_BR_NF_CALL_ARPTABLES})
    out.push_back(opt(t));
  return out;
}

// IFLA_BRPORT_* newer than this machine's uapi headers.
constexpr std::uint16_t kIflaBrportMab = 40;                // Linux 6.2: IFLA_BRPORT_MAB
constexpr std::uint16_t kIflaBrportMcastNGroups = 41;       // Linux 6.3
constexpr std::uint16_t kIflaBrportMcastMaxGroups = 42;     // Linux 6.3
constexpr std::uint16_t kIflaBrportNeighVlanSuppress = 43;  // Linux 6.5

AttrList fill_port(const Device& br, const Priv& p, const Port& port) {
  // Linux: br_port_fill_attrs, in its order.
  const PortSettings& s = port.s;
  auto opt = [&](std::uint16_t t) { return s.opts.at(t); };
  auto id = bridge_id(br, p.s.priority);
  std::uint16_t port_id = static_cast<std::uint16_t>((s.priority << 10) | port.no);
  AttrList out;
  out.push_back(Attr::u8(IFLA_BRPORT_STATE, s.state));
  out.push_back(Attr::u16(IFLA_BRPORT_PRIORITY, s.priority));
  out.push_back(Attr::u32(IFLA_BRPORT_COST, s.cost));
  for (std::uint16_t t : {IFLA_BRPORT_MODE, IFLA_BRPORT_GUARD, IFLA_BRPORT_PROTECT,
                          IFLA_BRPORT_FAST_LEAVE, IFLA_BRPORT_MCAST_TO_UCAST, IFLA_BRPORT_LEARNING,
                          IFLA_BRPORT_UNICAST_FLOOD, IFLA_BRPORT_MCAST_FLOOD,
                          IFLA_BRPORT_BCAST_FLOOD, IFLA_BRPORT_PROXYARP, IFLA_BRPORT_PROXYARP_WIFI})
    out.push_back(opt(t));
  out.push_back(Attr::binary(IFLA_BRPORT_ROOT_ID, id));
  out.push_back(Attr::binary(IFLA_BRPORT_BRIDGE_ID, id));
  out.push_back(Attr::u16(IFLA_BRPORT_DESIGNATED_PORT, port_id));
  out.push_back(Attr::u16(IFLA_BRPORT_DESIGNATED_COST, 0));
  out.push_back(Attr::u16(IFLA_BRPORT_ID, port_id));
  out.push_back(Attr::u16(IFLA_BRPORT_NO, port.no));
  out.push_back(Attr::u8(IFLA_BRPORT_TOPOLOGY_CHANGE_ACK, 0));
  out.push_back(Attr::u8(IFLA_BRPORT_CONFIG_PENDING, 0));
  for (std::uint16_t t :
       {IFLA_BRPORT_VLAN_TUNNEL, IFLA_BRPORT_GROUP_FWD_MASK, IFLA_BRPORT_NEIGH_SUPPRESS})
    out.push_back(opt(t));
  // MRP (ifcore has none: no ring or interconnect is ever open).
  out.push_back(Attr::u8(IFLA_BRPORT_MRP_RING_OPEN, 0));
  out.push_back(Attr::u8(IFLA_BRPORT_MRP_IN_OPEN, 0));
  out.push_back(opt(IFLA_BRPORT_ISOLATED));
  out.push_back(opt(IFLA_BRPORT_LOCKED));
  // MAB and per-vlan neighbour suppression, which ifcore does not offer: off.
  out.push_back(Attr::u8(kIflaBrportMab, 0));
  out.push_back(Attr::u8(kIflaBrportNeighVlanSuppress, 0));
  // The STP timers: ifcore runs no STP (no message age or hold timer); the forward delay
  // timer runs from the port's enabling, as Linux's does without STP.
  out.push_back(Attr::u64(IFLA_BRPORT_MESSAGE_AGE_TIMER, 0));
  out.push_back(Attr::u64(IFLA_BRPORT_FORWARD_DELAY_TIMER, forward_delay_left(br, port)));
  out.push_back(Attr::u64(IFLA_BRPORT_HOLD_TIMER, 0));
  out.push_back(opt(IFLA_BRPORT_MULTICAST_ROUTER));
  out.push_back(opt(IFLA_BRPORT_MCAST_EHT_HOSTS_LIMIT));
  out.push_back(Attr::u32(IFLA_BRPORT_MCAST_EHT_HOSTS_CNT, 0));
  // Linux: br_multicast_ngroups_get — the port's groups (ifcore's are the users': it snoops
  // none), and its limit (0: none; ifcore takes no limit).
  std::uint32_t groups = 0;
  for (const MdbGroup& g : p.mdb)
    for (const MdbPortGroup& pg : g.ports) groups += pg.port == port.dev.get() ? 1 : 0;
  out.push_back(Attr::u32(kIflaBrportMcastNGroups, groups));
  out.push_back(Attr::u32(kIflaBrportMcastMaxGroups, 0));
  if (s.backup) out.push_back(Attr::u32(IFLA_BRPORT_BACKUP_PORT, std::uint32_t(s.backup)));
  return out;
}

}  // namespace ifcore::kinds::bridge
