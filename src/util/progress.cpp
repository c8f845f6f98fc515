#include "util/progress.h"

#include <unistd.h>

#include <cstdio>

#include "util/progress_hook.h"

namespace mobius {

std::string mib(uint64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return s;
}

Progress::Progress(std::string label, uint64_t total, bool enabled, std::chrono::steady_clock::duration line_interval)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      tty_(::isatty(STDERR_FILENO)),
      line_interval_(line_interval) {
  draw();
}

Progress::~Progress() {
  if (enabled_ && tty_) std::fprintf(stderr, "\n");
}

void Progress::advance(uint64_t n) {
  done_ += n;
  draw();
  notify_progress(label_, done_, total_);  // may throw: a cancelled build
}

void Progress::line() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_line_ < line_interval_) return;
  last_line_ = now;
  std::fprintf(stderr, "%s: %d%% %.1f/%.1f MiB\n", label_.c_str(),
               total_ ? static_cast<int>(done_ * 100 / total_) : 100, static_cast<double>(done_) / (1 << 20),
               static_cast<double>(total_) / (1 << 20));
  std::fflush(stderr);
}

void Progress::draw() {
  if (!enabled_) return;
  if (!tty_) return line();
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
