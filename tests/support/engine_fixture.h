// Test helpers: an engine with the built-ins, log capture, and small request builders.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ifcore/ifcore.h"
#include "kinds/install.h"
#include "proto/install.h"

namespace ifcore::test {

// Collects the engine's log lines.
struct LogCapture {
  std::mutex mu;
  std::vector<std::string> lines;
  LogSink sink() {
    return [this](LogLevel, std::string_view text) {
      std::lock_guard lk(mu);
      lines.emplace_back(text);
    };
  }
  std::vector<std::string> snapshot() {
    std::lock_guard lk(mu);
    return lines;
  }
  bool contains(std::string_view needle) {
    std::lock_guard lk(mu);
    for (auto& l : lines)
      if (l.find(needle) != std::string::npos) return true;
    return false;
  }
};

inline LinkRequest link_req(std::string kind, std::string name) {
  LinkRequest r;
  r.kind = std::move(kind);
  r.name = std::move(name);
  return r;
}

class EngineTest : public ::testing::Test {
 protected:
  // Override to change the configuration before the engine is made.
  virtual void configure(EngineConfig& cfg) {}

  void SetUp() override {
    EngineConfig cfg;
    cfg.log = log.sink();
    configure(cfg);
    engine = std::make_unique<Engine>(std::move(cfg));
    kinds::install_all(*engine);
    if (protocols) proto::install_all(*engine);
  }
  void TearDown() override { engine.reset(); }

  Namespace& ns(Control& ctl, std::string_view name = "default") {
    return *ctl.find_namespace(name);
  }
  Device* dummy(Control& ctl, std::string name) {
    auto r = ctl.create_link(ns(ctl), link_req("dummy", std::move(name)));
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : nullptr;
  }
  // Name and ifindex of every device of the default namespace, in ifindex order: what a
  // failed request must leave as it found it.
  std::vector<std::pair<std::string, int>> listing(Control& ctl) {
    std::vector<std::pair<std::string, int>> out;
    for (Device* d : ns(ctl).devices_locked()) out.emplace_back(d->name(), d->ifindex());
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    return out;
  }

  LogCapture log;
  std::unique_ptr<Engine> engine;
  bool protocols = true;  // install inet, inet6, fib and dst (they hold references)
};

// Core tests count references exactly: an engine with the kinds only.
class CoreTest : public EngineTest {
 protected:
  CoreTest() { protocols = false; }
};

}  // namespace ifcore::test
