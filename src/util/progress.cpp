#include "util/progress.h"

#include <unistd.h>

#include <cstdio>

namespace mobius {

Progress::Progress(std::string label, uint64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && ::isatty(STDERR_FILENO)) {
  draw();
}

Progress::~Progress() {
  if (enabled_) std::fprintf(stderr, "\n");
}

void Progress::advance(uint64_t n) {
  done_ += n;
  draw();
}

void Progress::draw() {
  if (!enabled_) return;
  int percent = total_ ? static_cast<int>(done_ * 100 / total_) : 100;
  if (percent == last_percent_) return;
  last_percent_ = percent;
  constexpr int kWidth = 30;
  int filled = percent * kWidth / 100;
  std::fprintf(stderr, "\r%s [%.*s%*s] %3d%% %.1f/%.1f MiB", label_.c_str(), filled,
               "##############################", kWidth - filled, "", percent,
               static_cast<double>(done_) / (1 << 20), static_cast<double>(total_) / (1 << 20));
  std::fflush(stderr);
}

}  // namespace mobius
