// bench/scenarios/neigh_batch.cc — see neigh_batch.h.
#include "bench/scenarios/neigh_batch.h"

#include <fmt/core.h>

#include <net/if.h>  // before any <linux/if*.h>

#include <linux/neighbour.h>
#include <linux/netconf.h>

#include <vector>

#include "bench/scenarios/bench.h"
#include "bench/scenarios/paths.h"
#include "ifcore/ifcore.h"
#include "ifcore/inet.h"

namespace ifcore::bench {

namespace {

// One repetition: N dummies (with `per_device` neighbours each; with `nexthop`, up, and
// with a nexthop object each unless `per_device` is 0), the batch delete timed.
Result<double> one_run(int devices, int per_device, bool nexthop, NeighBatchFigures& f) {
  EngineConfig cfg;
  cfg.log = [](LogLevel level, std::string_view text) {
    if (level >= LogLevel::Error) fmt::print(stderr, "ifcore: {}\n", text);
  };
  auto eng = make_engine(std::move(cfg));
  std::vector<Device*> devs;
  devs.reserve(devices);
  {
    auto ctl = eng->control();
    Namespace& ns = *ctl.find_namespace("default");
    if (nexthop) {
      // Up devices without IPv6: a nexthop needs its device up, and nothing else should
      // come with that (no link-local address, no routes).
      inet::Inet6Conf off;
      off.disable_ipv6 = true;
      auto c = inet::set_inet6_conf(ctl, ns, NETCONFA_IFINDEX_DEFAULT, off);
      if (!c) return fail(c.error().code, "disable_ipv6: {}", c.error().message);
    }
    for (int i = 0; i < devices; ++i) {
      LinkRequest r;
      r.name = "dummy" + std::to_string(i);
      r.kind = "dummy";
      if (nexthop) r.flags = r.change = IFF_UP;
      auto d = ctl.create_link(ns, r);
      if (!d) return fail(d.error().code, "create dummy{}: {}", i, d.error().message);
      devs.push_back(*d);
      for (int k = 0; k < per_device; ++k) {
        inet::NeighRequest q;
        q.family = AF_INET;
        q.ifindex = (*d)->ifindex();
        q.dst = IpAddr::v4(0x0a000000u | (std::uint32_t(k) << 8) | 1u);
        q.lladdr = HwAddr::ethernet({0x02, 0, 0, 0, std::uint8_t(k), 1});
        q.state = NUD_PERMANENT;
        auto n = inet::add_neigh(ctl, ns, q);
        if (!n) return fail(n.error().code, "neighbour on dummy{}: {}", i, n.error().message);
      }
      if (nexthop && per_device) {
        inet::NexthopRequest q;
        q.id = static_cast<std::uint32_t>(i + 1);
        q.family = AF_INET;
        q.oif = (*d)->ifindex();
        auto n = inet::add_nexthop(ctl, ns, q);
        if (!n) return fail(n.error().code, "nexthop on dummy{}: {}", i, n.error().message);
      }
    }
  }
  auto t0 = BenchClock::now();
  {
    auto ctl = eng->control();
    auto r = ctl.delete_links(devs);
    if (!r) return fail(r.error().code, "batch delete: {}", r.error().message);
  }
  auto t1 = BenchClock::now();
  {
    auto ctl = eng->control();
    f.left += inet::neigh_count(ctl);
    f.nexthops_left += inet::list_nexthops(ctl, *ctl.find_namespace("default")).size();
  }
  eng->drain();
  return seconds_between(t0, t1);
}

}  // namespace

Result<NeighBatchFigures> measure_neigh_batch(int devices, int per_device, int repeat) {
  NeighBatchFigures f;
  f.devices = devices;
  f.per_device = per_device;
  f.repeat = repeat;
  std::vector<double> plain, with, up, with_nh, r_with, r_nh, r_nh_up;
  for (int i = 0; i < repeat; ++i) {
    auto a = one_run(devices, 0, false, f);
    if (!a) return fail(a.error());
    plain.push_back(*a);
    auto b = one_run(devices, per_device, false, f);
    if (!b) return fail(b.error());
    with.push_back(*b);
    auto c = one_run(devices, 0, true, f);
    if (!c) return fail(c.error());
    up.push_back(*c);
    auto e = one_run(devices, per_device, true, f);
    if (!e) return fail(e.error());
    with_nh.push_back(*e);
    r_with.push_back(*b / *a);
    r_nh.push_back(*e / *a);
    r_nh_up.push_back(*e / *c);
  }
  f.plain = median_of(plain);
  f.with_neighbours = median_of(with);
  f.up = median_of(up);
  f.with_nexthops = median_of(with_nh);
  f.ratio_neighbours = median_of(r_with);
  f.ratio_nexthops = median_of(r_nh);
  f.ratio_nexthops_up = median_of(r_nh_up);
  return f;
}

void print_neigh_batch(const NeighBatchFigures& f, std::FILE* out) {
  fmt::print(out, "\n{}: {} dummies deleted in one batch, embedded (median of {})\n",
             kNeighBatchName, f.devices, f.repeat);
  auto row = [&](const std::string& what, double t) {
    fmt::print(out, "  {:<48} {:>9.2f} ms {:>8.2f} µs/device\n", what, t * 1e3,
               t * 1e6 / f.devices);
  };
  row("without neighbours", f.plain);
  row(fmt::format("with {} permanent neighbours each", f.per_device), f.with_neighbours);
  row("up, nothing else", f.up);
  row(fmt::format("up, {} neighbours and a nexthop each", f.per_device), f.with_nexthops);
  fmt::print(out, "  each ratio below is the median of the {} repetitions' own ratios\n", f.repeat);
  fmt::print(out, "  neighbours cost {:.2f}× the plain delete (target ≤ {:.1f}×): {}\n",
             f.ratio_neighbours, kNeighTarget,
             f.ratio_neighbours <= kNeighTarget ? "MET" : "MISSED");
  fmt::print(out,
             "  neighbours and a nexthop cost {:.2f}× the plain delete (target ≤ {:.1f}×): {}\n",
             f.ratio_nexthops, kNeighTarget, f.ratio_nexthops <= kNeighTarget ? "MET" : "MISSED");
  fmt::print(out, "  ... and {:.2f}× the delete of the same devices up without them\n",
             f.ratio_nexthops_up);
  if (f.left) fmt::print(out, "  {} neighbour entries were left behind\n", f.left);
  if (f.nexthops_left) fmt::print(out, "  {} nexthops were left behind\n", f.nexthops_left);
}

}  // namespace ifcore::bench
