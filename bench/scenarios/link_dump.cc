// bench/scenarios/link_dump.cc — a dump of every link over ifcored's socket and the memory
// it takes (link_dump.h).
#include "bench/scenarios/link_dump.h"

#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/scenarios/daemon_process.h"
#include "bench/scenarios/nl_client.h"
#include "bench/scenarios/paths.h"
#include "rtnl/wire/bulk_create.h"
#include "rtnl/wire/link.h"
#include "rtnl/wire/netlink.h"

namespace ifcore::bench {

namespace {

constexpr int kPerBatch = 10000;  // dummies per create batch (one datagram)

// A field of /proc/PID/status in KiB ("VmRSS", "VmHWM"); 0 if absent.
long status_kib(pid_t pid, const std::string& field) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return 0;
}

// Resets the process's peak resident size to its current one (Linux: clear_refs "5").
Result<void> reset_peak(pid_t pid) {
  std::ofstream out(fmt::format("/proc/{}/clear_refs", pid));
  out << "5";
  out.flush();
  if (!out) return fail(EIO, "cannot reset ifcored's peak memory (clear_refs)");
  return ok();
}

Result<void> make_dummies(NlClient& c, int devices) {
  int sndbuf = 8 << 20;
  (void)::setsockopt(c.fd(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  for (int at = 0; at < devices; at += kPerBatch) {
    std::vector<wire::BulkLinkRequest> items(
        static_cast<std::size_t>(std::min(kPerBatch, devices - at)));
    for (std::size_t i = 0; i < items.size(); ++i)
      items[i].link = dummy_request(fmt::format("dummy{}", at + static_cast<int>(i)));
    wire::MessageBuilder b(std::size_t{8} << 20);
    wire::Header h{RTM_NEWLINK, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, c.next_seq(),
                   0};
    if (auto e = wire::encode_bulk_create(b, h, items); !e) return fail(e.error());
    if (auto r = c.call(b.bytes()); !r) return r;
  }
  return ok();
}

// Sends one link dump and reads it to NLMSG_DONE, counting what comes.
Result<void> read_dump(NlClient& c, LinkDumpRun& run) {
  wire::MessageBuilder b;
  wire::GetLinkRequest g;
  g.dump = true;
  std::uint32_t seq = c.next_seq();
  if (auto e = wire::encode_getlink(b, {RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq, 0}, g); !e)
    return fail(e.error());
  if (auto s = c.send(b.bytes()); !s) return s;
  run.messages = run.bytes = 0;
  for (;;) {
    auto d = c.recv(30000);
    if (!d) return fail(d.error());
    if (!*d) return fail(ETIMEDOUT, "the dump stopped after {} messages", run.messages);
    run.bytes += static_cast<long>((*d)->size());
    auto msgs = wire::split_messages(**d);
    if (!msgs) return fail(msgs.error());
    for (const wire::Message& m : *msgs) {
      if (m.hdr.nlmsg_seq != seq) continue;
      if (m.hdr.nlmsg_type == NLMSG_DONE) return ok();
      if (m.hdr.nlmsg_type == NLMSG_ERROR) return fail(EPROTO, "the dump was refused");
      ++run.messages;
    }
  }
}

// One daemon with `part_bytes`: N dummies, then `repeat` timed dumps.
Result<LinkDumpRun> run_daemon(const std::string& daemon, int devices, int repeat,
                               const std::string& part_bytes) {
  DaemonProcess d(daemon.empty() ? daemon_binary() : daemon);
  if (auto s = d.start("default", {"--dump-part-bytes", part_bytes}); !s) return fail(s.error());
  auto c = NlClient::open_daemon(d.socket());
  if (!c) return fail(c.error());
  if (auto m = make_dummies(**c, devices); !m) return fail(m.error());
  std::vector<double> times, peaks;
  LinkDumpRun run;
  for (int i = 0; i < repeat; ++i) {
    if (auto r = reset_peak(d.pid()); !r) return fail(r.error());
    long before = status_kib(d.pid(), "VmRSS");
    auto t0 = BenchClock::now();
    if (auto r = read_dump(**c, run); !r) return fail(r.error());
    times.push_back(seconds_between(t0, BenchClock::now()));
    peaks.push_back(static_cast<double>(status_kib(d.pid(), "VmHWM") - before) / 1024.0);
  }
  std::sort(times.begin(), times.end());
  run.seconds = times[times.size() / 2];
  // The largest: memory a dump took stays with ifcored's allocator, so the later dumps of
  // the same daemon reuse it and show no growth.
  run.peak_growth_mb = *std::max_element(peaks.begin(), peaks.end());
  return run;
}

}  // namespace

Result<LinkDumpFigures> measure_link_dump(int devices, int repeat, const std::string& daemon) {
  LinkDumpFigures f;
  f.devices = devices;
  f.repeat = std::max(1, repeat);
  auto parts = run_daemon(daemon, devices, f.repeat, "65536");
  if (parts)
    f.parts = *parts;
  else
    f.why = parts.error().message;
  auto whole = run_daemon(daemon, devices, f.repeat, "0");
  if (whole)
    f.whole = *whole;
  else if (f.why.empty())
    f.why = whole.error().message;
  return f;
}

void print_link_dump(const LinkDumpFigures& f, std::FILE* out) {
  fmt::print(out,
             "\n{}: one dump of {} dummies (and lo) over ifcored's socket, read as it comes "
             "(median of {})\n",
             kLinkDumpName, f.devices, f.repeat);
  auto row = [&](const char* what, const std::optional<LinkDumpRun>& r) {
    if (!r) {
      fmt::print(out, "  {:<40} {}\n", what, f.why.empty() ? "no figure" : f.why);
      return;
    }
    fmt::print(out,
               "  {:<40} {:>9.1f} ms {:>7.2f} µs/link {:>8.1f} MiB/s  ifcored peak +{:.1f} MiB\n",
               what, r->seconds * 1e3, r->seconds * 1e6 / std::max(1L, r->messages),
               static_cast<double>(r->bytes) / (1 << 20) / r->seconds, r->peak_growth_mb);
  };
  row("in parts of 64 KiB (the default)", f.parts);
  row("whole, at once (--dump-part-bytes 0)", f.whole);
  if (f.parts && f.whole && f.parts->messages != f.whole->messages)
    fmt::print(out, "  the runs differ: {} links in parts, {} whole\n", f.parts->messages,
               f.whole->messages);
}

}  // namespace ifcore::bench
