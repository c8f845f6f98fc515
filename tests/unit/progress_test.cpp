// util/progress.h off a terminal (CaptureStderr points stderr at a file): one line per interval,
// none for a short run.
#include <gtest/gtest.h>

#include "util/progress.h"

namespace mobius {
namespace {

std::string run(bool enabled, std::chrono::steady_clock::duration interval) {
  testing::internal::CaptureStderr();
  {
    Progress p("writing weights", 2 << 20, enabled, interval);
    p.advance(1 << 20);
    p.advance(1 << 20);
  }
  return testing::internal::GetCapturedStderr();
}

TEST(Progress, NotATerminalWritesLinesEveryInterval) {
  EXPECT_EQ(run(true, std::chrono::seconds(0)),
            "writing weights: 0% 0.0/2.0 MiB\nwriting weights: 50% 1.0/2.0 MiB\nwriting weights: 100% 2.0/2.0 MiB\n");
}

TEST(Progress, ShortRunOrDisabledWritesNothing) {
  EXPECT_EQ(run(true, Progress::kLineInterval), "");
  EXPECT_EQ(run(false, std::chrono::seconds(0)), "");
}

}  // namespace
}  // namespace mobius
