// bench/scenarios/plot.cc — the SVG plot drawn by the bench itself: time per device
// against N on log-log axes, one polyline per path and metric of the scale sweep (and of
// the batch scenarios, placed at their N), with decade grid lines and a legend.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include "bench/scenarios/runner.h"

namespace ifcore::bench {
namespace {

struct Point {
  double n, t;  // devices, seconds per device
};

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '&':
        o += "&amp;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

const char* color_of(Path p, const std::string& metric) {
  bool del = metric == "delete";
  switch (p) {
    case Path::Embedded:
      return del ? "#1f77b4" : "#6baed6";
    case Path::Daemon:
      return del ? "#2ca02c" : "#98df8a";
    case Path::Ring:
      return del ? "#9467bd" : "#c5b0d5";
    case Path::Kernel:
      return del ? "#d62728" : "#ff9896";
  }
  return "#000";
}

}  // namespace

std::string render_svg(const SuiteResult& r) {
  // Series: the sweep's create and delete per path.
  std::map<std::pair<Path, std::string>, std::vector<Point>> series;
  for (const auto& m : r.measurements) {
    if (m.scenario != "scale-sweep" || !m.ok()) continue;
    int dev = m.devices > 0 ? m.devices : m.n;
    series[{m.path, m.metric}].push_back({double(dev), m.median / dev});
  }
  for (auto& [_, pts] : series)
    std::sort(pts.begin(), pts.end(), [](auto a, auto b) { return a.n < b.n; });

  double xmin = 1e9, xmax = 0, ymin = 1e9, ymax = 0;
  for (auto& [_, pts] : series)
    for (auto p : pts) {
      xmin = std::min(xmin, p.n);
      xmax = std::max(xmax, p.n);
      ymin = std::min(ymin, p.t);
      ymax = std::max(ymax, p.t);
    }
  if (xmax <= 0) {
    xmin = 100;
    xmax = 1e6;
    ymin = 1e-8;
    ymax = 1e-2;
  }
  double lx0 = std::floor(std::log10(xmin)), lx1 = std::ceil(std::log10(xmax));
  double ly0 = std::floor(std::log10(ymin)), ly1 = std::ceil(std::log10(ymax));
  if (lx1 <= lx0) lx1 = lx0 + 1;
  if (ly1 <= ly0) ly1 = ly0 + 1;

  const double W = 760, H = 480, L = 80, R = 210, T = 40, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  auto X = [&](double n) { return L + (std::log10(n) - lx0) / (lx1 - lx0) * pw; };
  auto Y = [&](double t) { return T + (ly1 - std::log10(t)) / (ly1 - ly0) * ph; };

  std::string s;
  s += fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n",
      W, H);
  s += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>\n", W, H);
  s += fmt::format(
      "<text x=\"{}\" y=\"22\" font-size=\"15\">{}</text>\n", L,
      xml_escape("ifcore-bench scale-sweep: time per device (log-log), Linux " + r.machine.kernel));
  // Grid and ticks, one per decade.
  for (double e = lx0; e <= lx1; ++e) {
    double x = X(std::pow(10, e));
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ddd\"/>\n", x,
                     T, x, T + ph);
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">1e{}</text>\n", x,
                     T + ph + 18, int(e));
  }
  for (double e = ly0; e <= ly1; ++e) {
    double y = Y(std::pow(10, e));
    s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", L,
                     y, L + pw, y);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", L - 6, y + 4,
                     xml_escape(format_seconds(std::pow(10, e))));
  }
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", L, T,
      pw, ph);
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">N (devices)</text>\n",
                   L + pw / 2, H - 15);
  s += fmt::format(
      "<text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">time per "
      "device</text>\n",
      T + ph / 2, T + ph / 2);
  // Series and legend.
  int row = 0;
  for (auto& [key, pts] : series) {
    const char* color = color_of(key.first, key.second);
    std::string dash = key.second == "create"         ? " stroke-dasharray=\"6 3\""
                       : key.second == "create-batch" ? " stroke-dasharray=\"2 2\""
                                                      : "";
    std::string points;
    for (auto p : pts) points += fmt::format("{:.1f},{:.1f} ", X(p.n), Y(p.t));
    s += fmt::format(
        "<polyline class=\"series\" data-path=\"{}\" data-metric=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>\n",
        to_string(key.first), key.second, color, dash, points);
    for (auto p : pts)
      s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", X(p.n),
                       Y(p.t), color);
    double ly = T + 10 + row * 20;
    s += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
        L + pw + 15, ly, L + pw + 45, ly, color, dash);
    s += fmt::format("<text x=\"{}\" y=\"{}\">{} {}</text>\n", L + pw + 52, ly + 4,
                     to_string(key.first), key.second);
    ++row;
  }
  if (series.empty())
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no scale-sweep figures in this "
        "run</text>\n",
        L + pw / 2, T + ph / 2);
  s += "</svg>\n";
  return s;
}

Result<void> write_svg(const SuiteResult& r, const std::string& path) {
  std::ofstream f(path);
  if (!f) return fail(errno, "cannot write {}: {}", path, std::strerror(errno));
  f << render_svg(r);
  if (!f) return fail(EIO, "cannot write {}", path);
  return ok();
}

}  // namespace ifcore::bench
