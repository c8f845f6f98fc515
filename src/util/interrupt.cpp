#include "util/interrupt.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

namespace mobius {
namespace {

std::mutex mutex;
std::string registered_dir;  // guarded by mutex

// Removes `dir` while the writer threads may still be creating files in it: renamed aside first,
// so that no new file can be created under its name, then removed until it is gone (a file
// created just before the rename can make one removal fail with "directory not empty").
void remove_while_written(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path doomed = dir + ".interrupted";
  fs::rename(dir, doomed, ec);
  if (ec) doomed = dir;
  for (int tries = 0; tries < 1000 && fs::exists(fs::symlink_status(doomed, ec)); ++tries) {
    fs::remove_all(doomed, ec);
    if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

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
    std::lock_guard lock(mutex);  // held until exit: the writer cannot register or commit
    if (!registered_dir.empty()) remove_while_written(registered_dir);
    std::fprintf(stderr, "mobius: error: interrupted by signal %d%s\n", sig,
                 registered_dir.empty() ? "" : "; the partial package was removed");
    std::_Exit(128 + sig);
  }).detach();
}

std::string make_temp_dir_removed_on_interrupt(std::string pattern) {
  std::lock_guard lock(mutex);
  if (!::mkdtemp(pattern.data())) return "";
  registered_dir = pattern;
  return pattern;
}

void remove_on_interrupt(const std::string& dir) {
  std::lock_guard lock(mutex);
  registered_dir = dir;
}

void commit_uninterrupted(const std::function<void()>& commit) {
  std::lock_guard lock(mutex);
  commit();
  registered_dir.clear();
}

void hold_interrupts() {
  mutex.lock();  // never unlocked: the process is about to exit
}

}  // namespace mobius
