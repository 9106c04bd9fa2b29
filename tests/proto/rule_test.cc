// Policy rules: the defaults, where a rule goes and which priority it gets, the checks
// Linux makes (each refusal changes nothing), deletes by the selectors given, devices named
// before they exist and after they go, goto, notifications, and lookups through the rules.
#include <linux/fib_rules.h>

#include <gtest/gtest.h>

#include "proto/helpers.h"

namespace ifcore::test {
namespace {

struct RuleRecorder : inet::ProtoListener {
  std::vector<std::string> events;
  void on_rule(Namespace&, inet::ProtoEvent ev, const inet::RuleInfo& r) override {
    events.push_back(
        fmt::format("{}{} {}", ev == inet::ProtoEvent::New ? '+' : '-', r.priority, r.table));
  }
};

class RuleTest : public ListeningTest<RuleRecorder> {
 protected:
  static inet::RuleRequest lookup(std::uint32_t table, std::optional<std::uint32_t> prio = {},
                                  int family = AF_INET) {
    inet::RuleRequest q;
    q.rule.family = family;
    q.rule.action = FR_ACT_TO_TBL;
    q.rule.table = table;
    if (prio) {
      q.has_priority = true;
      q.rule.priority = *prio;
    }
    q.excl = true;
    return q;
  }
  std::vector<std::string> shown(Control& ctl, int family = AF_INET) {
    std::vector<std::string> out;
    for (auto& r : inet::list_rules(ctl, ns(ctl), family))
      out.push_back(fmt::format("{}:{}:{}:{:#x}", r.priority, r.action, r.table, r.flags));
    return out;
  }
};

TEST_F(RuleTest, DefaultRulesAndWhereNewOnesGo) {
  auto ctl = engine->control();
  EXPECT_EQ(shown(ctl),
            (std::vector<std::string>{"0:1:255:0x0", "32766:1:254:0x0", "32767:1:253:0x0"}));
  EXPECT_EQ(shown(ctl, AF_INET6), (std::vector<std::string>{"0:1:255:0x0", "32766:1:254:0x0"}));
  listen(ctl);
  // No priority: one below the second rule's (32765, then 32764...).
  auto a = inet::add_rule(ctl, ns(ctl), lookup(100));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(a->priority, 32765u);
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), lookup(101)));
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), lookup(102, 32765)));  // after its equal
  EXPECT_EQ(shown(ctl),
            (std::vector<std::string>{"0:1:255:0x0", "32764:1:101:0x0", "32765:1:100:0x0",
                                      "32765:1:102:0x0", "32766:1:254:0x0", "32767:1:253:0x0"}));
  EXPECT_EQ(rec.events, (std::vector<std::string>{"+32765 100", "+32764 101", "+32765 102"}));
  // `lookup 0` takes the first table that does not exist yet (IPv4); IPv6 refuses it.
  auto zero = inet::add_rule(ctl, ns(ctl), lookup(0, 10));
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->table, 1u);
  EXPECT_EQ(inet::add_rule(ctl, ns(ctl), lookup(0, 11))->table, 2u);
  auto six = inet::add_rule(ctl, ns(ctl), lookup(0, 10, AF_INET6));
  ASSERT_FALSE(six);
  EXPECT_EQ(six.error().message, "Invalid table");
}

TEST_F(RuleTest, RefusedRulesChangeNothing) {
  auto ctl = engine->control();
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), lookup(100, 100)));
  const auto before = shown(ctl);
  struct Case {
    const char* what;
    std::function<void(inet::RuleRequest&)> edit;
    int code;
    const char* message;
  };
  std::vector<Case> cases = {
      {"family", [](auto& q) { q.rule.family = AF_UNSPEC; }, EAFNOSUPPORT,
       "Rule family not supported"},
      {"src", [](auto& q) { q.rule.src_len = 8; }, EINVAL, "Invalid source address"},
      {"dst",
       [](auto& q) {
         q.rule.dst = ip("2001:db8::");
         q.rule.dst_len = 32;
       },
       EINVAL, "Invalid dst address"},
      {"tos", [](auto& q) { q.rule.tos = 3; }, EINVAL, "Invalid dsfield (tos): ECN bits must be 0"},
      {"tos beyond IPv4's", [](auto& q) { q.rule.tos = 0x20; }, EINVAL, "Invalid tos"},
      {"uid",
       [](auto& q) {
         q.rule.uid = inet::Range<std::uint32_t>{9, 3};
       },
       EINVAL, "Invalid uid range"},
      {"sport",
       [](auto& q) {
         q.rule.sport = inet::Range<std::uint16_t>{0, 0};
       },
       EINVAL, "Invalid sport range"},
      {"dport",
       [](auto& q) {
         q.rule.dport = inet::Range<std::uint16_t>{9, 3};
       },
       EINVAL, "Invalid dport range"},
      {"l3mdev", [](auto& q) { q.rule.l3mdev = 2; }, EINVAL, "Invalid l3mdev attribute"},
      {"l3mdev+table", [](auto& q) { q.rule.l3mdev = 1; }, EINVAL,
       "l3mdev and table are mutually exclusive"},
      {"goto", [](auto& q) { q.rule.action = FR_ACT_GOTO; }, EINVAL,
       "Missing goto target for action goto"},
      {"backward",
       [](auto& q) {
         q.rule.action = FR_ACT_GOTO;
         q.has_goto = true;
         q.rule.goto_target = 50;
       },
       EINVAL, "Backward goto not supported"},
      {"duplicate", [](auto&) {}, EEXIST, ""},
  };
  for (auto& c : cases) {
    inet::RuleRequest q = lookup(100, 100);
    c.edit(q);
    auto got = inet::add_rule(ctl, ns(ctl), q);
    ASSERT_FALSE(got) << c.what;
    EXPECT_EQ(got.error().code, c.code) << c.what;
    if (*c.message) {
      EXPECT_EQ(got.error().message, c.message) << c.what;
    }
    EXPECT_EQ(shown(ctl), before) << c.what;
  }
}

TEST_F(RuleTest, DeleteMatchesWhatIsGiven) {
  auto ctl = engine->control();
  inet::RuleRequest marked = lookup(100, 200);
  marked.has_fwmark = true;
  marked.rule.fwmark = 7;
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), marked));
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), lookup(100, 300)));
  EXPECT_EQ(inet::list_rules(ctl, ns(ctl))[1].fwmask, 0xFFFFFFFFu) << "a mark's default mask";
  inet::RuleRequest by_mark;
  by_mark.rule.family = AF_INET;
  by_mark.rule.fwmark = 7;
  ASSERT_TRUE(inet::delete_rule(ctl, ns(ctl), by_mark));
  auto again = inet::delete_rule(ctl, ns(ctl), by_mark);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, ENOENT);
  inet::RuleRequest by_table;
  by_table.rule.family = AF_INET;
  by_table.rule.table = 100;
  ASSERT_TRUE(inet::delete_rule(ctl, ns(ctl), by_table));
  // Nothing given: the first rule (Linux's rule_find), even the local one.
  inet::RuleRequest any;
  any.rule.family = AF_INET;
  ASSERT_TRUE(inet::delete_rule(ctl, ns(ctl), any));
  EXPECT_EQ(shown(ctl), (std::vector<std::string>{"32766:1:254:0x0", "32767:1:253:0x0"}));
}

TEST_F(RuleTest, DevicesAreNamedAndAttachAndDetachAsTheyComeAndGo) {
  auto ctl = engine->control();
  inet::RuleRequest q = lookup(9, 10);
  q.rule.iifname = "d0";
  q.rule.oifname = "d1";
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), q));
  auto flags = [&] { return inet::list_rules(ctl, ns(ctl))[1].flags; };
  EXPECT_EQ(flags(), std::uint32_t{FIB_RULE_IIF_DETACHED | FIB_RULE_OIF_DETACHED});
  Device* d0 = dummy(ctl, "d0");
  EXPECT_EQ(flags(), std::uint32_t{FIB_RULE_OIF_DETACHED});
  Device* d1 = dummy(ctl, "d1");
  EXPECT_EQ(flags(), 0u);
  ASSERT_TRUE(ctl.rename(*d1, "d2"));
  EXPECT_EQ(flags(), std::uint32_t{FIB_RULE_OIF_DETACHED});
  ASSERT_TRUE(ctl.rename(*d1, "d1"));
  EXPECT_EQ(flags(), 0u);
  ASSERT_TRUE(ctl.delete_link(*d0));
  EXPECT_EQ(flags(), std::uint32_t{FIB_RULE_IIF_DETACHED}) << "the rule stays, detached";
  EXPECT_EQ(inet::list_rules(ctl, ns(ctl), AF_INET).size(), 4u);
}

TEST_F(RuleTest, GotoIsUnresolvedUntilItsTargetExists) {
  auto ctl = engine->control();
  inet::RuleRequest g = lookup(0, 10);
  g.rule.action = FR_ACT_GOTO;
  g.has_goto = true;
  g.rule.goto_target = 500;
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), g));
  auto flags = [&] { return inet::list_rules(ctl, ns(ctl))[1].flags; };
  EXPECT_EQ(flags(), std::uint32_t{FIB_RULE_UNRESOLVED});
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), lookup(100, 500)));
  EXPECT_EQ(flags(), 0u);
  inet::RuleRequest del;
  del.rule.family = AF_INET;
  del.has_priority = true;
  del.rule.priority = 500;
  ASSERT_TRUE(inet::delete_rule(ctl, ns(ctl), del));
  EXPECT_EQ(flags(), std::uint32_t{FIB_RULE_UNRESOLVED});
}

TEST_F(RuleTest, LookupsGoThroughTheRules) {
  auto ctl = engine->control();
  Device* d = dummy(ctl, "d0");
  Device* e = dummy(ctl, "d1");
  ASSERT_TRUE(ctl.open(*d));
  ASSERT_TRUE(ctl.open(*e));
  ASSERT_TRUE(inet::add_address(ctl, ns(ctl), addr_req(*d, "10.0.0.1", 24)));
  auto in_table = [&](std::string_view dst, int len, std::uint32_t table, Device& dev,
                      std::uint8_t type = RTN_UNICAST) {
    inet::RouteRequest r = route_req(dst, len);
    r.table = table;
    r.type = type;
    if (type == RTN_UNICAST) r.oif = dev.ifindex();
    ASSERT_TRUE(inet::add_route(ctl, ns(ctl), r));
  };
  in_table("10.9.0.0", 16, 100, *d);
  in_table("10.9.5.0", 24, 100, *d, RTN_THROW);
  in_table("10.9.7.0", 24, 101, *e);
  inet::RuleRequest to100 = lookup(100, 100);
  to100.rule.dst = ip("10.9.0.0");
  to100.rule.dst_len = 16;
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), to100));
  inet::RuleRequest marked = lookup(101, 99);
  marked.has_fwmark = true;
  marked.rule.fwmark = 7;
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), marked));
  auto get = [&](std::string_view dst, std::uint32_t mark = 0) {
    inet::Flow f;
    f.dst = ip(dst);
    f.mark = mark;
    return inet::get_route(ctl, ns(ctl), f);
  };
  ASSERT_TRUE(get("10.9.1.1"));
  EXPECT_EQ(get("10.9.1.1")->table, 100u);
  EXPECT_EQ(get("10.9.1.1")->oif, d->ifindex());
  EXPECT_EQ(get("10.9.7.1", 7)->oif, e->ifindex()) << "the mark picks table 101";
  EXPECT_EQ(get("10.9.5.1").error().code, ENETUNREACH) << "throw: on to the next rules";
  for (auto [action, code] : {std::pair{FR_ACT_PROHIBIT, EACCES},
                              {FR_ACT_BLACKHOLE, EINVAL},
                              {FR_ACT_UNREACHABLE, ENETUNREACH}}) {
    inet::RuleRequest q = lookup(0, 90);
    q.rule.action = static_cast<std::uint8_t>(action);
    ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), q));
    EXPECT_EQ(get("10.9.1.1").error().code, code);
    inet::RuleRequest del;
    del.rule.family = AF_INET;
    del.has_priority = true;
    del.rule.priority = 90;
    ASSERT_TRUE(inet::delete_rule(ctl, ns(ctl), del));
  }
  // suppress_prefixlength 0: main's default route is not taken from this rule.
  inet::RuleRequest main_only = lookup(RT_TABLE_MAIN, 50);
  main_only.rule.suppress_prefixlen = 16;
  ASSERT_TRUE(inet::add_rule(ctl, ns(ctl), main_only));
  inet::RouteRequest def = route_req("0.0.0.0", 0);
  def.gateway = ip("10.0.0.254");
  ASSERT_TRUE(inet::add_route(ctl, ns(ctl), def));
  EXPECT_EQ(get("10.9.1.1")->table, 100u) << "main's /0 is suppressed, table 100 answers";
}

}  // namespace
}  // namespace ifcore::test
