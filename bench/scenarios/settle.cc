// bench/scenarios/settle.cc — quiet-machine wait between measured runs (settle.h).
#include "bench/scenarios/settle.h"

#include <charconv>
#include <fstream>
#include <string>
#include <thread>

namespace ifcore::bench {

Result<CpuTimes> parse_proc_stat(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.substr(0, 4) != "cpu " && line != "cpu")
    return fail(EINVAL, "no aggregate cpu line in /proc/stat");
  line.remove_prefix(3);
  std::uint64_t f[8] = {};
  int n = 0;
  while (n < 8) {
    auto at = line.find_first_not_of(' ');
    if (at == std::string_view::npos) break;
    line.remove_prefix(at);
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), f[n]);
    if (ec != std::errc()) return fail(EINVAL, "cpu line field {} is not a number", n + 1);
    line.remove_prefix(static_cast<std::size_t>(end - line.data()));
    ++n;
  }
  if (n < 8) return fail(EINVAL, "cpu line has {} fields, need 8", n);
  CpuTimes t;
  t.idle = f[3] + f[4];
  for (auto v : f) t.total += v;
  return t;
}

double idle_fraction(const CpuTimes& before, const CpuTimes& after) {
  if (after.total <= before.total) return 1.0;
  double idle = after.idle >= before.idle ? double(after.idle - before.idle) : 0.0;
  return idle / double(after.total - before.total);
}

namespace {
Result<CpuTimes> sample() {
  std::ifstream f("/proc/stat");
  std::string line;
  if (!f || !std::getline(f, line)) return fail(ENOENT, "cannot read /proc/stat");
  return parse_proc_stat(line);
}
}  // namespace

bool settle(const SettleOptions& o) {
  auto deadline = std::chrono::steady_clock::now() + o.limit;
  auto prev = sample();
  if (!prev) return false;
  int quiet = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(o.window);
    auto cur = sample();
    if (!cur) return false;
    quiet = idle_fraction(*prev, *cur) >= o.idle ? quiet + 1 : 0;
    if (quiet >= o.windows) return true;
    prev = cur;
  }
  return false;
}

}  // namespace ifcore::bench
