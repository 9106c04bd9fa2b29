// cli/args.h — walking a command's words the way `ip` does: keywords may be abbreviated
// (`matches`), and the wording of syntax errors is iproute2's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "ifcore/addr.h"

namespace ifcore::cli {

// True when `word` is a non-empty prefix of `keyword` (`ip l` for `link`).
bool matches(const std::string& word, const char* keyword);

class Args {
 public:
  explicit Args(std::vector<std::string> w) : w_(std::move(w)) {}
  bool done() const { return i_ >= w_.size(); }
  const std::string& peek() const { return w_[i_]; }
  std::string take() { return w_[i_++]; }
  std::size_t left() const { return w_.size() - i_; }
  // The value after a keyword; fails with "Command line is not complete".
  Result<std::string> value();

 private:
  std::vector<std::string> w_;
  std::size_t i_ = 0;
};

// "Error: argument \"x\" is wrong: <what>" (exit 255).
tl::unexpected<Error> invarg(const std::string& what, const std::string& arg);
// "Error: either \"a\" is duplicate, or \"b\" is a garbage." (exit 255).
// iproute2's duparg2 ("either KEY is duplicate, or ARG is a garbage") and duparg
// ("duplicate KEY: ARG is the second value").
tl::unexpected<Error> duparg(const std::string& key, const std::string& arg);
tl::unexpected<Error> duparg_second(const std::string& key, const std::string& arg);
tl::unexpected<Error> incomplete();

Result<std::uint32_t> parse_u32(const std::string& s, const char* what, int base = 0);

// An address with an optional /prefix ("10.0.0.1/24", "default").
struct Prefix {
  IpAddr addr;
  int len = -1;      // -1: not given
  bool any = false;  // "default" / "all" / "any"
};
Result<Prefix> parse_prefix(const std::string& s, int family, const char* what);
// A prefix where iproute2 calls get_prefix and exits at once on a bad one (exit status 1,
// even in a batch): "Error: any valid prefix is expected rather than "X"." ("inet" or
// "inet6" for a family asked for).
Result<Prefix> prefix_or_exit(const std::string& s, int family);

// Route and neighbour protocols by iproute2's built-in names (rt_names.c's table: kernel,
// boot, static, zebra, bird, bgp, openr...), else the number.
std::string rt_proto_name(std::uint8_t p);
// A routing table's number from its name in rt_tables (unspec, default, main, local) or a
// number, as iproute2's rtnl_rttable_a2n reads it for routes, rules and vrfs; nullopt if
// it is neither.
std::optional<std::uint32_t> table_number(const std::string& s);
// A name of that table or a number below 256.
std::optional<std::uint8_t> rt_proto_number(const std::string& s);

// iproute2's closing words of a flush under -s, once a round finds nothing: "Nothing to
// flush." when the first did, else how many rounds it took.
void print_flush_done(Ctx& c, int rounds);

// iproute2's names for dsfield values (its rt_dsfield file), else 0xNN; and back (a name
// or a hex number below 256).
std::string ds_name(std::uint8_t v);
std::optional<std::uint8_t> ds_number(const std::string& s);

// `dev NAME` -> ifindex, or `Cannot find device "NAME"` (exit 1).
Result<int> dev_index(Ctx& c, const std::string& name);

}  // namespace ifcore::cli
