// ifcore/timer.h — the engine's timers (Linux: a delayed_work queued on system_wq): a
// callback that runs under the control lock once the engine's clock reaches its deadline.
//
// A timer is registered once and armed as often as wanted; arming it again moves its
// deadline. The engine runs due timers on a thread of its own, started by the first timer
// armed; time is read through Engine::time(), with real time standing in for it while
// the thread waits, so that with a FakeTime the tests run the due timers themselves
// (run_timers) after advancing the clock. Every timer stops with the engine, before its
// plug-ins' state goes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "ifcore/clock.h"
#include "ifcore/engine.h"

namespace ifcore {

using TimerId = std::uint64_t;

// Registers `fn`, not armed. Context: control lock.
TimerId add_timer(Control& ctl, std::function<void(Control&)> fn);
// Arms timer `id` to run once at `at` (now or in the past: at the next run). Context:
// control lock.
void arm_timer(Control& ctl, TimerId id, TimePoint at);
// Arms timer `id` for now from a thread that may not take the control lock (the frame
// path: it may run under the lock or not): the engine's thread runs it as soon as it gets
// the lock; with a FakeTime, the next run_timers does. A timer removed in between does not
// run. Context: any thread; takes only the timers' own leaf lock.
void post_timer(Engine& engine, TimerId id);
// Disarms timer `id`. Context: control lock.
void cancel_timer(Control& ctl, TimerId id);
// Unregisters timer `id`. Context: control lock.
void remove_timer(Control& ctl, TimerId id);
// The deadline of timer `id`, if armed. Context: control lock.
std::optional<TimePoint> timer_deadline(Control& ctl, TimerId id);
// Runs every timer whose deadline has come on the engine's clock, each disarmed first (a
// callback may arm its own timer again). Context: control lock.
void run_timers(Control& ctl);

}  // namespace ifcore
