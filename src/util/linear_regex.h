// Regular expressions matched in linear time, for patterns that meet untrusted text
// (docs/security.md "No untrusted text reaches a backtracking regex").
//
// std::regex (libstdc++) backtracks and recurses once per character: a 100,000-character tensor
// name overflows the stack in regex_match, and a pattern like (.*)*(.*)*Z takes exponential time.
// LinearRegex compiles a pattern into a Thompson NFA and runs it as Pike's VM (Cox, "Regular
// Expression Matching: the Virtual Machine Approach"): every input byte is looked at once per
// live NFA state, so a match takes O(text x pattern) time and O(pattern) memory, with no
// recursion on the text. The submatches are those of a backtracking engine (leftmost, greedy
// or lazy quantifiers by priority), so `$1` means what it means to std::regex and to Python's re,
// but for one corner: a repeated group whose body can match empty (`(a*)+`) reports its last
// non-empty iteration, where backtracking engines report a final empty one.
//
// The syntax is the part of ECMAScript (std::regex's default) and Python re that checkpoint names
// need; anything else is refused when the pattern is compiled, never guessed:
//   literals; `.` (any byte but \n, \r); `[...]`, `[^...]` with ranges and the escapes below;
//   `\d \D \w \W \s \S`, `\t \n \r \f \v \0`, `\xHH`, `\` before any punctuation;
//   `^` `$` (start and end of the text), `\b` `\B`; groups `( )` and `(?: )`; `|`;
//   `* + ? {n} {n,} {n,m}`, each optionally lazy (`*?`).
// Refused: backreferences (`\1`), lookaround and named groups (`(?=`, `(?!`, `(?<`, `(?P`),
// flags, `\u`, other letter escapes. Limits: a pattern of at most 1,024 bytes, groups nested at
// most 32 deep, at most 32 capturing groups, a program of at most 8,192 instructions (counted
// repetitions are expanded: `a{1000}` takes 1,000).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mobius {

constexpr size_t kMaxPatternBytes = 1024;

class LinearRegex {
 public:
  // Compiles `pattern`. Throws mobius::Error "pattern '<pattern, escaped>': <why> at byte N"
  // (the caller prepends the file and field) for syntax outside the subset above, an unbalanced
  // group or class, a quantifier with nothing to repeat or {n,m} with n > m, or a limit exceeded.
  explicit LinearRegex(std::string_view pattern);

  // The whole of `text` matches (Python re.fullmatch; std::regex_match).
  bool full_match(std::string_view text) const;

  // `text` with every non-overlapping match, leftmost first, replaced by `replacement`, in which
  // $n and $nn (one or two digits) are group n's text (empty when the group took no part or does
  // not exist), $& the match, $` and $' the text before and after it, $$ a '$'
  // (std::regex_replace with the default format). An empty match advances by one byte.
  std::string replace_all(std::string_view text, std::string_view replacement) const;

  int groups() const { return groups_; }  // capturing groups

  struct Inst {
    enum Op : uint8_t { kByte, kAny, kClass, kSplit, kJmp, kSave, kBegin, kEnd, kWordB, kNotWordB, kMatch } op;
    uint8_t byte = 0;
    int x = 0, y = 0;  // kSplit: x first (preferred), y second; kJmp: x; kSave: slot x; kClass: class x
  };

 private:
  // The leftmost match at or after `from` with its submatch slots (2 per group, group 0 the whole
  // match; -1 when a group took no part), or false. `anchored`: only a match starting at `from`;
  // `to_end`: only a match ending at the end of `text`.
  bool search(std::string_view text, size_t from, bool anchored, bool to_end, std::vector<int>& slots) const;

  std::vector<Inst> prog_;
  std::vector<std::vector<bool>> classes_;  // 256 flags each
  int groups_ = 0;
};

}  // namespace mobius
