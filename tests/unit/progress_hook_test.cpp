// util/progress_hook.h: the calling thread's observer sees every advance and is restored after its
// scope; a requested cancellation stops the next advance with mobius::Error.
#include <gtest/gtest.h>

#include <thread>
#include <tuple>
#include <vector>

#include "util/error.h"
#include "util/progress.h"
#include "util/progress_hook.h"

namespace mobius {
namespace {

using Call = std::tuple<std::string, uint64_t, uint64_t>;

TEST(ProgressHook, ObserverSeesEveryAdvanceOnItsThreadOnly) {
  std::vector<Call> calls, inner_calls;
  {
    ScopedProgressObserver outer([&](const std::string& l, uint64_t d, uint64_t t) { calls.emplace_back(l, d, t); });
    Progress p("writing weights", 10, false);
    p.advance(4);
    {
      ScopedProgressObserver inner([&](const std::string& l, uint64_t d, uint64_t t) { inner_calls.emplace_back(l, d, t); });
      p.advance(3);
    }
    std::thread([] { Progress("elsewhere", 1, false).advance(1); }).join();  // another thread: not observed
    p.advance(3);
  }
  Progress("after", 1, false).advance(1);  // no observer any more
  EXPECT_EQ(calls, (std::vector<Call>{{"writing weights", 4, 10}, {"writing weights", 10, 10}}));
  EXPECT_EQ(inner_calls, (std::vector<Call>{{"writing weights", 7, 10}}));
}

TEST(ProgressHook, CancelStopsTheNextAdvance) {
  Progress p("writing weights", 10, false);
  p.advance(1);
  request_cancel();
  EXPECT_THROW(
      {
        try {
          p.advance(1);
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "cancelled while writing weights: nothing was written");
          throw;
        }
      },
      Error);
  clear_cancel();
  p.advance(1);
}

}  // namespace
}  // namespace mobius
