// Ctrl-C (SIGINT) and SIGTERM during a build: the package being written is removed, not left
// behind as a temporary directory.
#pragma once

#include <functional>
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

// Runs `commit` (the renames that put a finished package in place) so that an interrupt never
// lands in the middle of it: when an interrupt is already being handled, commit never runs (the
// process exits with the registered directory removed); otherwise an interrupt waits until commit
// has returned, when nothing is registered for removal any more. Exceptions from commit propagate
// (the directory stays registered).
void commit_uninterrupted(const std::function<void()>& commit);

// For the error path of main, once every package is complete or removed (after unwinding): an
// interrupt already being handled is waited for (the process exits there, its cleanup done, not
// cut short by this thread's exit); a later one no longer runs any cleanup.
void hold_interrupts();

}  // namespace mobius
