#include "util/interrupt.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

namespace mobius {
namespace {

std::mutex mutex;
std::string registered;  // guarded by mutex

}  // namespace

void install_interrupt_cleanup() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    std::lock_guard lock(mutex);  // held until exit: the writer cannot register another directory
    std::error_code ec;
    if (!registered.empty()) std::filesystem::remove_all(registered, ec);
    std::fprintf(stderr, "mobius: error: interrupted by signal %d%s\n", sig,
                 registered.empty() ? "" : "; the partial package was removed");
    std::_Exit(128 + sig);
  }).detach();
}

std::string make_temp_dir_removed_on_interrupt(std::string pattern) {
  std::lock_guard lock(mutex);
  if (!::mkdtemp(pattern.data())) return "";
  registered = pattern;
  return pattern;
}

void remove_on_interrupt(const std::string& dir) {
  std::lock_guard lock(mutex);
  registered = dir;
}

}  // namespace mobius
