// cli/args.cc — keyword matching, values and iproute2's syntax-error wording.
#include "cli/args.h"

#include <linux/rtnetlink.h>

#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>

namespace ifcore::cli {

bool matches(const std::string& word, const char* keyword) {
  return !word.empty() && std::string_view(keyword).substr(0, word.size()) == word;
}

tl::unexpected<Error> incomplete() {
  return die(255, "Command line is not complete. Try option \"help\"");
}

Result<std::string> Args::value() {
  if (done()) return incomplete();
  return take();
}

tl::unexpected<Error> invarg(const std::string& what, const std::string& arg) {
  return die(255, "Error: argument \"{}\" is wrong: {}", arg, what);
}

tl::unexpected<Error> duparg_second(const std::string& key, const std::string& arg) {
  return die(255, "Error: duplicate \"{}\": \"{}\" is the second value.", key, arg);
}

tl::unexpected<Error> duparg(const std::string& key, const std::string& arg) {
  return die(255, "Error: either \"{}\" is duplicate, or \"{}\" is a garbage.", key, arg);
}

Result<std::uint32_t> parse_u32(const std::string& s, const char* what, int base) {
  if (s.empty()) return invarg(what, s);
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, base);
  if (errno || *end || v > 0xffffffffULL || s[0] == '-') return invarg(what, s);
  return std::uint32_t(v);
}

Result<Prefix> parse_prefix(const std::string& s, int family, const char* what) {
  Prefix p;
  if (s == "default" || s == "all" || s == "any") {
    p.any = true;
    p.len = 0;
    p.addr = family == AF_INET6 ? *IpAddr::parse("::") : IpAddr::v4(0);
    return p;
  }
  std::string a = s;
  if (auto slash = s.find('/'); slash != std::string::npos) {
    a = s.substr(0, slash);
    auto len = parse_u32(s.substr(slash + 1), what, 10);
    if (!len) return invarg(what, s);
    p.len = int(*len);
  }
  auto ip = IpAddr::parse(a);
  if (!ip) return invarg(what, s);
  if (family && ip->family() != family)
    return die(1, "Error: {} address is expected rather than \"{}\".",
               family == AF_INET ? "inet" : "inet6", s);
  if (p.len > int(ip->size() * 8)) return invarg(what, s);
  p.addr = *ip;
  return p;
}

Result<Prefix> prefix_or_exit(const std::string& s, int family) {
  if (family == AF_PACKET)
    return die_now(1, "Error: \"{}\" may be inet prefix, but it is not allowed in this context.",
                   s);
  auto p = parse_prefix(s, family, "prefix");
  if (p) return p;
  return die_now(1, "Error: {} prefix is expected rather than \"{}\".",
                 family == AF_INET6  ? "inet6"
                 : family == AF_INET ? "inet"
                                     : "any valid",
                 s);
}

namespace {
const std::pair<std::uint8_t, const char*> kRtProtos[] = {
    {RTPROT_UNSPEC, "unspec"}, {RTPROT_REDIRECT, "redirect"}, {RTPROT_KERNEL, "kernel"},
    {RTPROT_BOOT, "boot"},     {RTPROT_STATIC, "static"},     {RTPROT_GATED, "gated"},
    {RTPROT_RA, "ra"},         {RTPROT_MRT, "mrt"},           {RTPROT_ZEBRA, "zebra"},
    {RTPROT_BIRD, "bird"},     {RTPROT_DNROUTED, "dnrouted"}, {RTPROT_XORP, "xorp"},
    {RTPROT_NTK, "ntk"},       {RTPROT_DHCP, "dhcp"},         {RTPROT_KEEPALIVED, "keepalived"},
    {RTPROT_BABEL, "babel"},   {RTPROT_OPENR, "openr"},       {RTPROT_BGP, "bgp"},
    {RTPROT_ISIS, "isis"},     {RTPROT_OSPF, "ospf"},         {RTPROT_RIP, "rip"},
    {RTPROT_EIGRP, "eigrp"}};
}  // namespace

std::optional<std::uint32_t> table_number(const std::string& s) {
  if (s == "unspec") return RT_TABLE_UNSPEC;
  if (s == "default") return RT_TABLE_DEFAULT;
  if (s == "main") return RT_TABLE_MAIN;
  if (s == "local") return RT_TABLE_LOCAL;
  auto n = parse_u32(s, "");
  if (!n) return std::nullopt;
  return *n;
}

std::string rt_proto_name(std::uint8_t p) {
  for (auto [n, name] : kRtProtos)
    if (n == p) return name;
  return std::to_string(p);
}

std::optional<std::uint8_t> rt_proto_number(const std::string& s) {
  for (auto [n, name] : kRtProtos)
    if (s == name) return n;
  auto v = parse_u32(s, "");
  if (!v || *v > 255) return std::nullopt;
  return std::uint8_t(*v);
}

void print_flush_done(Ctx& c, int rounds) {
  if (!c.stats) return;
  if (rounds == 0)
    c.out->text("Nothing to flush.\n");
  else
    c.out->text(
        fmt::format("*** Flush is complete after {} round{} ***\n", rounds, rounds > 1 ? "s" : ""));
}

// iproute2's names for dsfield values (its rt_dsfield file), else 0xNN.
namespace {
struct DsName {
  std::uint8_t value;
  const char* name;
};
constexpr DsName kDsNames[] = {{0x00, "default"}, {0x28, "AF11"}, {0x30, "AF12"}, {0x38, "AF13"},
                               {0x48, "AF21"},    {0x50, "AF22"}, {0x58, "AF23"}, {0x68, "AF31"},
                               {0x70, "AF32"},    {0x78, "AF33"}, {0x88, "AF41"}, {0x90, "AF42"},
                               {0x98, "AF43"},    {0x20, "CS1"},  {0x40, "CS2"},  {0x60, "CS3"},
                               {0x80, "CS4"},     {0xA0, "CS5"},  {0xC0, "CS6"},  {0xE0, "CS7"},
                               {0xB8, "EF"}};
}  // namespace

std::string ds_name(std::uint8_t v) {
  for (const DsName& d : kDsNames)
    if (d.value == v) return d.name;
  return fmt::format("0x{:02x}", v);
}
std::optional<std::uint8_t> ds_number(const std::string& s) {
  for (const DsName& d : kDsNames)
    if (s == d.name) return d.value;
  auto n = parse_u32(s, "", 16);
  if (!n || *n > 255) return std::nullopt;
  return std::uint8_t(*n);
}

Result<int> dev_index(Ctx& c, const std::string& name) {
  auto idx = c.client->ifindex(name);
  if (!idx) return fail(idx.error());
  if (*idx == 0) return die(1, "Cannot find device \"{}\"", name);
  return *idx;
}

}  // namespace ifcore::cli
