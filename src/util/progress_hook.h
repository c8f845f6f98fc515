// A hook a host installs around a build (the Python module, python/mobius_cpp/_core.cpp; a signal
// handler): every Progress::advance (util/progress.h) first checks a cancellation flag, then
// calls the calling thread's observer. Both run on the thread that writes the package (the
// caller of write_package, package/writer.h), between two written chunks; what they throw stops
// the build like any error: the writer removes its temporary directory and OUTPUT_DIR is untouched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace mobius {

// label ("writing weights"), bytes done, bytes in all. May throw to stop the build.
using ProgressObserver = std::function<void(const std::string& label, uint64_t done, uint64_t total)>;

// Installs `observer` for the calling thread's builds until the guard is destroyed (the previous
// observer is restored then).
class ScopedProgressObserver {
 public:
  explicit ScopedProgressObserver(ProgressObserver observer);
  ~ScopedProgressObserver();
  ScopedProgressObserver(const ScopedProgressObserver&) = delete;
  ScopedProgressObserver& operator=(const ScopedProgressObserver&) = delete;

 private:
  ProgressObserver previous_;
};

// Asks every build in progress to stop at its next chunk (async-signal-safe: a lock-free atomic
// store, for a SIGINT/SIGTERM handler). The flag stays set until clear_cancel().
void request_cancel();
void clear_cancel();

// Called by Progress::advance: throws mobius::Error("cancelled ...") when request_cancel() was
// called, then calls the calling thread's observer, if any.
void notify_progress(const std::string& label, uint64_t done, uint64_t total);

}  // namespace mobius
