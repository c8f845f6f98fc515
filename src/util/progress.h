// A progress bar on stderr, drawn only when enabled and stderr is a terminal.
#pragma once

#include <cstdint>
#include <string>

namespace mobius {

class Progress {
 public:
  Progress(std::string label, uint64_t total, bool enabled);
  ~Progress();
  void advance(uint64_t n);

 private:
  void draw();
  std::string label_;
  uint64_t total_, done_ = 0;
  bool enabled_;
  int last_percent_ = -1;
};

}  // namespace mobius
