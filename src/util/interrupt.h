// Ctrl-C (SIGINT) and SIGTERM during a build: the package being written is removed, not left
// behind as a temporary directory.
#pragma once

#include <string>

namespace mobius {

// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts later) and
// handles them on a thread of their own: it removes the directory registered with
// remove_on_interrupt, prints "mobius: error: interrupted ..." and exits with 128 + the signal
// number. Call once, from main, before any other thread starts.
void install_interrupt_cleanup();

// Creates a new directory from the mkdtemp(3) `pattern` (ending in XXXXXX) and registers it as
// the directory to remove if the process is interrupted, in one step: a signal in between cannot
// leave it behind. Returns its path, or "" with errno set when mkdtemp fails.
std::string make_temp_dir_removed_on_interrupt(std::string pattern);

// Sets the directory to remove if the process is interrupted ("" = none). Without
// install_interrupt_cleanup this only records the path.
void remove_on_interrupt(const std::string& dir);

}  // namespace mobius
