// cli/main.cc — `ifc`: iproute2's `ip` over ifcore's wire. Global options, the target
// (daemon, --embedded, --kernel), one command or a -batch file, exit statuses as `ip`.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/batch_adds.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/vrf.h"
#include "ifcore/version.h"

namespace ifcore::cli {
namespace {

enum class Target { Daemon, Embedded, Kernel };

struct Options {
  Ctx ctx;
  Target target = Target::Daemon;
  std::string socket;
  std::string batch;
  bool force = false;
};

void usage() {
  std::fprintf(
      stderr,
      "Usage: ifc [ OPTIONS ] OBJECT { COMMAND | help }\n"
      "       ifc [ -force ] -batch filename\n"
      "       ifc probe FROM TO [ count N ] [ interval MS ] [ timeout MS ]\n"
      "       ifc sysctl [ -n ] { KEY... | -w KEY=VALUE... }\n"
      "       ifc state dump FILE\n"
      "where  OBJECT := { link | address | addrlabel | route | rule | neighbour | nexthop |\n"
      "                   netconf | netns | monitor | stats | fdb }\n"
      "       OPTIONS := { -4 | -6 | -s[tatistics] | -d[etails] | -j[son] | -p[retty] |\n"
      "                    -br[ief] | -n[etns] name | -batch file | -force |\n"
      "                    -V[ersion] | --embedded | --kernel | --socket PATH }\n");
}

Result<void> run(Ctx& c, std::vector<std::string> words) {
  if (words.empty()) return die(255, "Object \"\" is unknown, try \"ip help\".");
  std::string obj = words[0];
  Args a(std::vector<std::string>(words.begin() + 1, words.end()));
  if (obj == "stats") return do_stats(c, a);
  if (obj == "probe") return do_probe(c, a);
  if (obj == "sysctl") return do_sysctl(c, a);
  if (obj == "state") return do_state(c, a);
  if (obj == "fdb") return do_fdb(c, a);  // bridge(8)'s object, in its syntax
  // iproute2's objects in its order, so that an abbreviation means what it means to ip
  // (`ip n` is neighbor, `ip m` maddress, `ip mo` monitor); those ifc lacks say so.
  using Handler = Result<void> (*)(Ctx&, Args&);
  static const std::pair<const char*, Handler> kObjects[] = {
      {"address", do_addr},     {"addrlabel", do_addrlabel},
      {"maddress", nullptr},    {"route", do_route},
      {"rule", do_rule},        {"neighbor", do_neigh},
      {"neighbour", do_neigh},  {"ntable", nullptr},
      {"ntbl", nullptr},        {"link", do_link},
      {"l2tp", nullptr},        {"fou", nullptr},
      {"ila", nullptr},         {"macsec", nullptr},
      {"tunnel", do_tunnel},    {"tunl", do_tunnel},
      {"tuntap", nullptr},      {"tap", nullptr},
      {"token", nullptr},       {"tcpmetrics", nullptr},
      {"tcp_metrics", nullptr}, {"monitor", do_monitor},
      {"xfrm", nullptr},        {"mroute", nullptr},
      {"mrule", nullptr},       {"netns", do_netns},
      {"netconf", do_netconf},  {"vrf", do_vrf},
      {"sr", nullptr},          {"nexthop", do_nexthop},
      {"mptcp", nullptr},       {"ioam", nullptr},
      {"help", nullptr}};
  for (auto [name, handler] : kObjects) {
    if (!matches(obj, name)) continue;
    if (handler) return handler(c, a);
    if (std::string_view(name) == "help") {
      usage();
      return die(255, "");
    }
    return die(1, "Object \"{}\" is not implemented by ifc.", name);
  }
  return die(1, "Object \"{}\" is unknown, try \"ip help\".", obj);
}

// Splits a batch line into words: blanks separate, quotes group, '#' starts a comment.
std::vector<std::string> split_line(const std::string& line) {
  std::vector<std::string> w;
  std::string cur;
  bool in = false;
  char q = 0;
  for (char ch : line) {
    if (q) {
      if (ch == q)
        q = 0;
      else
        cur += ch;
      continue;
    }
    if (ch == '"' || ch == '\'') {
      q = ch;
      in = true;
    } else if (ch == '#' && !in) {
      break;
    } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      if (in) w.push_back(cur), cur.clear(), in = false;
    } else {
      cur += ch;
      in = true;
    }
  }
  if (in) w.push_back(cur);
  return w;
}

void report(const Error& e) {
  if (!e.message.empty()) std::fprintf(stderr, "%s\n", e.message.c_str());
}

Result<std::unique_ptr<Transport>> open_target(const Options& o) {
  switch (o.target) {
    case Target::Kernel:
      return make_kernel_transport(o.ctx.netns);
    case Target::Embedded:
      return make_embedded_transport(o.ctx.netns);
    case Target::Daemon:
      break;
  }
  return make_daemon_transport(o.socket.empty() ? default_socket_path() : o.socket, o.ctx.netns);
}

// `ifc -batch FILE`: each line as a command, as `ip -batch` runs them; runs of `link add`
// go to ifcored as create batches; a progress line on a terminal's standard error.
int run_batch(Options& o, Client& client, Out& out) {
  std::ifstream file;
  std::istream* in = &std::cin;
  std::optional<std::uint64_t> size;
  if (o.batch != "-") {
    file.open(o.batch);
    if (!file) {
      std::fprintf(stderr, "Cannot open file \"%s\" for reading: %s\n", o.batch.c_str(),
                   std::strerror(errno));
      return 1;
    }
    in = &file;
    std::error_code ec;
    if (auto n = std::filesystem::file_size(o.batch, ec); !ec) size = n;
  }
  Progress progress(stderr, ::isatty(STDERR_FILENO) != 0, o.batch, size);
  out.set_before_write([&] { progress.hide(); });
  std::uint64_t bytes = 0;
  std::string line;
  int lineno = 0, status = 0;
  // Runs of `link add` lines go to ifcored as create batches (batch_adds.h); anything
  // else sends what is held back first, so that the lines take effect in their order.
  BatchedAdds adds;
  const bool batching = std::string_view(client.transport().target()) == "daemon";
  auto flush = [&]() {
    if (adds.empty()) return true;
    auto f = flush_adds(client, adds, o.batch, o.force, [&] { progress.hide(); });
    if (f != FlushOutcome::Done) status = 1;
    return f != FlushOutcome::Stop;
  };
  while (std::getline(*in, line)) {
    ++lineno;
    bytes += line.size() + 1;
    progress.update(static_cast<std::uint64_t>(lineno), bytes, Progress::Clock::now());
    auto words = split_line(line);
    if (words.empty()) continue;
    bool deferred = batching && batchable_add(words);
    if (!deferred && !flush()) return 1;
    o.ctx.deferred = deferred ? &adds : nullptr;
    auto r = run(o.ctx, words);
    o.ctx.deferred = nullptr;
    if (deferred && r) {
      adds.lines.push_back(lineno);
      if (adds_full(adds) && !flush()) return 1;
      continue;
    }
    if (deferred && !flush()) return 1;
    out.finish();
    if (!r) {
      progress.hide();
      report(r.error());
      // ip exits at once on a syntax error (status 255), even with -force, and where it
      // calls exit() itself (kExitNow).
      if (r.error().code == 255 || r.error().attr_offset == kExitNow) return r.error().code;
      std::fprintf(stderr, "Command failed %s:%d\n", o.batch.c_str(), lineno);
      status = 1;
      if (!o.force) return 1;
    }
  }
  if (!flush()) return 1;
  return status;
}

int main_impl(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    std::string opt = argv[i];
    if (opt == "--") {
      ++i;
      break;
    }
    std::string s = opt.substr(opt[1] == '-' ? 2 : 1);
    auto need = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "Option \"%s\" requires an argument\n", what);
        std::exit(255);
      }
      return argv[++i];
    };
    if (s == "embedded")
      o.target = Target::Embedded;
    else if (s == "kernel")
      o.target = Target::Kernel;
    else if (s == "socket")
      o.socket = need("--socket"), o.target = Target::Daemon;
    else if (s == "4")
      o.ctx.family = AF_INET;
    else if (s == "6")
      o.ctx.family = AF_INET6;
    else if (s == "0")
      o.ctx.family = AF_PACKET;
    else if (s == "f" || matches(s, "family")) {
      // iproute2: -family inet|inet6|link (and -4, -6, -0 for them).
      std::string f = need("-family");
      if (f == "inet")
        o.ctx.family = AF_INET;
      else if (f == "inet6")
        o.ctx.family = AF_INET6;
      else if (f == "link")
        o.ctx.family = AF_PACKET;
      else {
        std::fprintf(stderr, "Error: argument \"%s\" is wrong: invalid protocol family\n",
                     f.c_str());
        return 255;
      }
    } else if (s == "force")
      o.force = true;
    else if (s == "b" || (s.size() >= 2 && matches(s, "batch")))
      o.batch = need("-batch");
    else if (s == "n" || (s.size() >= 2 && matches(s, "netns")))
      o.ctx.netns = need("-netns");
    else if (matches(s, "json"))
      o.ctx.json = true;
    else if (matches(s, "pretty"))
      o.ctx.pretty = true;
    else if (matches(s, "details"))
      o.ctx.details = true;
    else if (matches(s, "statistics") || s == "s")
      ++o.ctx.stats;
    else if (s.size() >= 2 && matches(s, "brief"))
      o.ctx.brief = true;
    else if (matches(s, "oneline"))
      o.ctx.oneline = true;
    else if (s == "V" || s == "version" || matches(s, "Version")) {
      // iproute2 prints "ip utility, iproute2-VERSION" (and its libraries').
      std::printf("ifc utility, ifcore-%.*s\n", static_cast<int>(ifcore::version().size()),
                  ifcore::version().data());
      return 0;
    } else if (s == "h" || matches(s, "help")) {
      usage();
      return 0;
    } else {
      std::fprintf(stderr, "Option \"%s\" is unknown, try \"ip -help\".\n", opt.c_str());
      return 255;
    }
  }
  // `ifc state` reads a state file: no target to open.
  if (o.batch.empty() && i < argc && std::string_view(argv[i]) == "state") {
    Args a(std::vector<std::string>(argv + i + 1, argv + argc));
    auto r = do_state(o.ctx, a);
    if (!r) report(r.error());
    return r ? 0 : r.error().code;
  }
  auto t = open_target(o);
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().message.c_str());
    return 1;
  }
  // A batch sends many requests: through ifcored, they go through shared memory (a daemon
  // that refuses leaves the batch on its socket).
  if (!o.batch.empty()) (void)(*t)->prefer_rings();
  Client client(std::move(*t));
  Out out(o.ctx.json, o.ctx.pretty, o.ctx.oneline);
  o.ctx.client = &client;
  o.ctx.out = &out;

  if (o.batch.empty()) {
    std::vector<std::string> words(argv + i, argv + argc);
    auto r = run(o.ctx, words);
    out.finish();
    if (!r) {
      report(r.error());
      return r.error().code;
    }
    return 0;
  }
  return run_batch(o, client, out);
}

}  // namespace
}  // namespace ifcore::cli

int main(int argc, char** argv) {
  return ifcore::cli::main_impl(argc, argv);
}
