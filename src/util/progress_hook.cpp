#include "util/progress_hook.h"

#include <atomic>
#include <utility>

#include "util/error.h"

namespace mobius {

namespace {
thread_local ProgressObserver current_observer;
std::atomic<bool> cancel_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "request_cancel must be async-signal-safe");
}  // namespace

ScopedProgressObserver::ScopedProgressObserver(ProgressObserver observer)
    : previous_(std::exchange(current_observer, std::move(observer))) {}

ScopedProgressObserver::~ScopedProgressObserver() { current_observer = std::move(previous_); }

void request_cancel() { cancel_requested.store(true); }
void clear_cancel() { cancel_requested.store(false); }

void notify_progress(const std::string& label, uint64_t done, uint64_t total) {
  if (cancel_requested.load()) throw Error("cancelled while " + label + ": nothing was written");
  if (current_observer) current_observer(label, done, total);
}

}  // namespace mobius
