// Errors: one exception family carrying a context chain.
//
// User errors (bad checkpoint, bad config, bad CLI arguments) are thrown as mobius::Error; the
// CLI catches them once and prints what() on one line. Context is prepended while the exception
// unwinds ("while binding X: ..."), so the message reads outermost-first.
// Internal invariants use MOBIUS_ASSERT, which throws mobius::InternalError.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace mobius {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // Returns a copy of this error with `context` prepended: "context: message".
  Error with_context(const std::string& context) const { return Error(context + ": " + what()); }
};

// An error about a config.json field found where the file is not known (the relation checks on a
// built DecoderSpec): "field 'x': message". build_package prepends config.json's path.
class FieldError : public Error {
 public:
  using Error::Error;
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

// Runs fn(); if it throws mobius::Error, rethrows it with `context` prepended.
template <typename Fn>
decltype(auto) with_context(const std::string& context, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const Error& e) {
    throw e.with_context(context);
  }
}

[[noreturn]] void assert_failed(const char* expr, const char* file, int line, const std::string& msg);

}  // namespace mobius

#define MOBIUS_ASSERT(cond, msg)                                        \
  do {                                                                  \
    if (!(cond)) ::mobius::assert_failed(#cond, __FILE__, __LINE__, msg); \
  } while (0)
