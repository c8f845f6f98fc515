// Progress on stderr when enabled: a bar redrawn in place when stderr is a terminal; otherwise (a
// log, a CI job) one line "label: P% D/T MiB" every line interval (kLineInterval unless given), so
// a long build reports and a short one prints nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mobius {

// `bytes` as "12.3 MiB" (one decimal, 2^20 bytes), as progress lines and reports show sizes.
std::string mib(uint64_t bytes);

class Progress {
 public:
  static constexpr std::chrono::seconds kLineInterval{5};
  // `line_interval`: the time between two lines when stderr is not a terminal.
  Progress(std::string label, uint64_t total, bool enabled,
           std::chrono::steady_clock::duration line_interval = kLineInterval);
  ~Progress();
  void advance(uint64_t n);

 private:
  void draw();
  void line();
  std::string label_;
  uint64_t total_, done_ = 0;
  bool enabled_, tty_;
  std::chrono::steady_clock::duration line_interval_;
  int last_percent_ = -1;
  std::chrono::steady_clock::time_point last_line_ = std::chrono::steady_clock::now();
};

}  // namespace mobius
