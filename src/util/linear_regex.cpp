#include "util/linear_regex.h"

#include <cctype>
#include <memory>

#include "util/error.h"
#include "util/input_files.h"

namespace mobius {

namespace {

constexpr int kMaxDepth = 32;
constexpr int kMaxGroups = 32;
constexpr size_t kMaxProgram = 8192;
constexpr int kMaxCount = 1000;  // n and m of {n,m}

bool is_word(unsigned char c) { return std::isalnum(c) || c == '_'; }

struct SyntaxNode {
  enum Kind { kEmpty, kByte, kAny, kClass, kAssert, kGroup, kConcat, kAlt, kRepeat } kind = kEmpty;
  uint8_t byte = 0;
  int index = -1;                             // kClass: class; kGroup: group (-1 non-capturing)
  LinearRegex::Inst::Op assertion = LinearRegex::Inst::kBegin;
  int min = 0, max = 0;                       // kRepeat; max -1 = unbounded
  bool greedy = true;
  std::vector<std::unique_ptr<SyntaxNode>> kids;
};

class Parser {
 public:
  Parser(std::string_view p, std::vector<std::vector<bool>>& classes) : p_(p), classes_(classes) {}

  std::unique_ptr<SyntaxNode> parse() {
    if (p_.size() > kMaxPatternBytes)
      fail("longer than " + std::to_string(kMaxPatternBytes) + " bytes (" + std::to_string(p_.size()) + ")");
    auto n = alternation(0);
    if (i_ < p_.size()) fail("unbalanced ')'");
    return n;
  }
  int groups() const { return groups_; }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    const std::string shown = p_.size() > 80 ? std::string(p_.substr(0, 80)) + "..." : std::string(p_);
    throw Error("pattern '" + escaped(shown) + "': " + why + " at byte " + std::to_string(i_) +
                " (patterns take literals, . [] \\d \\w \\s ^ $ \\b ( ) (?: ) | * + ? {n,m}; "
                "no backreferences or lookaround)");
  }
  bool more() const { return i_ < p_.size(); }
  char peek() const { return p_[i_]; }

  std::unique_ptr<SyntaxNode> alternation(int depth) {
    if (depth > kMaxDepth) fail("groups nested deeper than " + std::to_string(kMaxDepth));
    auto first = concatenation(depth);
    if (!more() || peek() != '|') return first;
    auto alt = std::make_unique<SyntaxNode>();
    alt->kind = SyntaxNode::kAlt;
    alt->kids.push_back(std::move(first));
    while (more() && peek() == '|') {
      ++i_;
      alt->kids.push_back(concatenation(depth));
    }
    return alt;
  }

  std::unique_ptr<SyntaxNode> concatenation(int depth) {
    auto cat = std::make_unique<SyntaxNode>();
    cat->kind = SyntaxNode::kConcat;
    while (more() && peek() != '|' && peek() != ')') cat->kids.push_back(repetition(depth));
    return cat;
  }

  // {n}, {n,} or {n,m} at i_ (which is '{'): true and the counts, or false.
  bool counted(int& min, int& max) {
    size_t j = i_ + 1;
    auto number = [&](int& out) {
      const size_t start = j;
      long v = 0;
      while (j < p_.size() && std::isdigit(static_cast<unsigned char>(p_[j])) && v <= kMaxCount)
        v = v * 10 + (p_[j++] - '0');
      if (j == start) return false;
      if (v > kMaxCount) {
        i_ = start;
        fail("a repetition count over " + std::to_string(kMaxCount));
      }
      out = static_cast<int>(v);
      return true;
    };
    if (!number(min)) return false;
    max = min;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!number(max)) max = -1;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    if (max >= 0 && max < min) fail("{n,m} with n > m");
    i_ = j + 1;
    return true;
  }

  std::unique_ptr<SyntaxNode> repetition(int depth) {
    auto atom_node = atom(depth);
    bool quantified = false;
    while (more()) {
      int min = 0, max = 0;
      const char c = peek();
      if (c == '*' || c == '+' || c == '?') {
        min = c == '+' ? 1 : 0;
        max = c == '?' ? 1 : -1;
        ++i_;
      } else if (c == '{') {
        if (!counted(min, max)) fail("a '{' that is not a repetition {n}, {n,} or {n,m} (write \\{ for the character)");
      } else {
        break;
      }
      if (quantified) fail("a quantifier after a quantifier");
      if (atom_node->kind == SyntaxNode::kAssert || atom_node->kind == SyntaxNode::kEmpty) fail("a quantifier with nothing to repeat");
      quantified = true;
      auto rep = std::make_unique<SyntaxNode>();
      rep->kind = SyntaxNode::kRepeat;
      rep->min = min;
      rep->max = max;
      if (more() && peek() == '?') {
        rep->greedy = false;
        ++i_;
      }
      if (more() && peek() == '+') fail("possessive quantifiers are not supported");
      rep->kids.push_back(std::move(atom_node));
      atom_node = std::move(rep);
    }
    return atom_node;
  }

  int new_class() {
    classes_.emplace_back(256, false);
    return static_cast<int>(classes_.size() - 1);
  }

  // A class escape (\d \D \w \W \s \S) into `set` (true), or false for another escape.
  static bool class_escape(char e, std::vector<bool>& set) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(e)));
    if (lower != 'd' && lower != 'w' && lower != 's') return false;
    for (int c = 0; c < 256; ++c) {
      const auto u = static_cast<unsigned char>(c);
      const bool in = lower == 'd' ? std::isdigit(u) != 0
                      : lower == 'w' ? is_word(u)
                                     : (u == ' ' || u == '\t' || u == '\n' || u == '\r' || u == '\f' || u == '\v');
      if (in != (e != lower)) set[c] = true;
    }
    return true;
  }

  // The byte of a single-character escape after '\' (i_ past it), or fails.
  uint8_t escape_byte(char e) {
    switch (e) {
      case 't': return '\t';
      case 'n': return '\n';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case '0': return 0;
      case 'x': {
        auto hex = [](char h) {
          return std::isdigit(static_cast<unsigned char>(h)) ? h - '0'
                 : (h >= 'a' && h <= 'f')                   ? h - 'a' + 10
                 : (h >= 'A' && h <= 'F')                   ? h - 'A' + 10
                                                            : -1;
        };
        if (i_ + 2 > p_.size() || hex(p_[i_]) < 0 || hex(p_[i_ + 1]) < 0) fail("\\x without two hex digits");
        const int v = hex(p_[i_]) * 16 + hex(p_[i_ + 1]);
        i_ += 2;
        return static_cast<uint8_t>(v);
      }
      default:
        if (std::isdigit(static_cast<unsigned char>(e))) fail("backreferences are not supported");
        if (std::isalnum(static_cast<unsigned char>(e))) fail(std::string("the escape \\") + e + " is not supported");
        return static_cast<uint8_t>(e);  // \. \\ \( ... : the character itself
    }
  }

  std::unique_ptr<SyntaxNode> atom(int depth) {
    auto n = std::make_unique<SyntaxNode>();
    const char c = p_[i_++];
    switch (c) {
      case '(': {
        int index = -1;
        if (more() && peek() == '?') {
          if (i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
            i_ += 2;
          } else {
            fail("lookaround, named groups and flags are not supported");
          }
        } else {
          if (groups_ >= kMaxGroups) fail("more than " + std::to_string(kMaxGroups) + " capturing groups");
          index = ++groups_;
        }
        n->kind = SyntaxNode::kGroup;
        n->index = index;
        n->kids.push_back(alternation(depth + 1));
        if (!more() || peek() != ')') fail("unbalanced '('");
        ++i_;
        return n;
      }
      case '[': return char_class(std::move(n));
      case '.':
        n->kind = SyntaxNode::kAny;
        return n;
      case '^':
      case '$':
        n->kind = SyntaxNode::kAssert;
        n->assertion = c == '^' ? LinearRegex::Inst::kBegin : LinearRegex::Inst::kEnd;
        return n;
      case '*':
      case '+':
      case '?':
        --i_;
        fail("a quantifier with nothing to repeat");
      case ')':
        --i_;
        fail("unbalanced ')'");
      case '{':
        --i_;
        fail("a '{' that is not a repetition {n}, {n,} or {n,m} (write \\{ for the character)");
      case '\\': {
        if (!more()) fail("a trailing backslash");
        const char e = p_[i_++];
        if (e == 'b' || e == 'B') {
          n->kind = SyntaxNode::kAssert;
          n->assertion = e == 'b' ? LinearRegex::Inst::kWordB : LinearRegex::Inst::kNotWordB;
          return n;
        }
        n->index = new_class();
        if (class_escape(e, classes_[n->index])) {
          n->kind = SyntaxNode::kClass;
          return n;
        }
        classes_.pop_back();
        n->kind = SyntaxNode::kByte;
        n->byte = escape_byte(e);
        return n;
      }
      default:
        n->kind = SyntaxNode::kByte;
        n->byte = static_cast<uint8_t>(c);
        return n;
    }
  }

  std::unique_ptr<SyntaxNode> char_class(std::unique_ptr<SyntaxNode> n) {
    n->kind = SyntaxNode::kClass;
    n->index = new_class();
    std::vector<bool> set(256, false);
    const bool negated = more() && peek() == '^';
    if (negated) ++i_;
    if (more() && peek() == ']') fail("an empty class []");
    // One class member: a byte (returned) or a class escape (added to `set`, -1 returned).
    auto member = [&]() -> int {
      const char c = p_[i_++];
      if (c != '\\') return static_cast<unsigned char>(c);
      if (!more()) fail("a trailing backslash");
      const char e = p_[i_++];
      if (e == 'b') return '\b';
      if (class_escape(e, set)) return -1;
      return escape_byte(e);
    };
    while (true) {
      if (!more()) fail("unbalanced '['");
      if (peek() == ']') {
        ++i_;
        break;
      }
      const int lo = member();
      if (lo >= 0 && i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        const int hi = member();
        if (hi < 0) fail("a range ending in a class escape");
        if (hi < lo) fail("a range out of order");
        for (int b = lo; b <= hi; ++b) set[b] = true;
      } else if (lo >= 0) {
        set[lo] = true;
      }
    }
    if (negated) set.flip();
    classes_[n->index] = std::move(set);
    return n;
  }

  std::string_view p_;
  size_t i_ = 0;
  int groups_ = 0;
  std::vector<std::vector<bool>>& classes_;
};

class Compiler {
 public:
  explicit Compiler(std::vector<LinearRegex::Inst>& prog) : prog_(prog) {}

  void emit(const SyntaxNode& n) {
    using I = LinearRegex::Inst;
    switch (n.kind) {
      case SyntaxNode::kEmpty: return;
      case SyntaxNode::kByte: add({I::kByte, n.byte}); return;
      case SyntaxNode::kAny: add({I::kAny}); return;
      case SyntaxNode::kClass: add({I::kClass, 0, n.index}); return;
      case SyntaxNode::kAssert: add({n.assertion}); return;
      case SyntaxNode::kGroup:
        if (n.index >= 0) add({I::kSave, 0, 2 * n.index});
        emit(*n.kids[0]);
        if (n.index >= 0) add({I::kSave, 0, 2 * n.index + 1});
        return;
      case SyntaxNode::kConcat:
        for (const auto& k : n.kids) emit(*k);
        return;
      case SyntaxNode::kAlt: {
        std::vector<size_t> jumps;
        for (size_t k = 0; k < n.kids.size(); ++k) {
          size_t split = 0;
          if (k + 1 < n.kids.size()) split = add({I::kSplit});
          if (k + 1 < n.kids.size()) prog_[split].x = static_cast<int>(prog_.size());
          emit(*n.kids[k]);
          if (k + 1 < n.kids.size()) {
            jumps.push_back(add({I::kJmp}));
            prog_[split].y = static_cast<int>(prog_.size());
          }
        }
        for (size_t j : jumps) prog_[j].x = static_cast<int>(prog_.size());
        return;
      }
      case SyntaxNode::kRepeat: {
        const SyntaxNode& body = *n.kids[0];
        for (int k = 0; k < n.min; ++k) emit(body);
        if (n.max < 0) {  // L: split body, out; body; jmp L
          const size_t loop = add({I::kSplit});
          emit(body);
          add({I::kJmp, 0, static_cast<int>(loop)});
          branch(loop, loop + 1, prog_.size(), n.greedy);
          return;
        }
        std::vector<size_t> splits;  // (body (body ...)?)? : each optional copy may end the repetition
        for (int k = n.min; k < n.max; ++k) {
          splits.push_back(add({I::kSplit}));
          emit(body);
        }
        for (size_t s : splits) branch(s, s + 1, prog_.size(), n.greedy);
        return;
      }
    }
  }

  size_t add(LinearRegex::Inst inst) {
    if (prog_.size() >= kMaxProgram)
      throw Error("more than " + std::to_string(kMaxProgram) +
                  " instructions once its counted repetitions are expanded; write it shorter");
    prog_.push_back(inst);
    return prog_.size() - 1;
  }

 private:
  // The split at `at` prefers `body` (greedy) or `out` (lazy).
  void branch(size_t at, size_t body, size_t out, bool greedy) {
    prog_[at].x = static_cast<int>(greedy ? body : out);
    prog_[at].y = static_cast<int>(greedy ? out : body);
  }
  std::vector<LinearRegex::Inst>& prog_;
};

}  // namespace

LinearRegex::LinearRegex(std::string_view pattern) {
  Parser parser(pattern, classes_);
  const std::unique_ptr<SyntaxNode> root = parser.parse();
  groups_ = parser.groups();
  Compiler c(prog_);
  try {
    c.add({Inst::kSave, 0, 0});
    c.emit(*root);
    c.add({Inst::kSave, 0, 1});
    c.add({Inst::kMatch});
  } catch (const Error& e) {
    throw Error("pattern '" + escaped(pattern.substr(0, 80)) + "': " + e.what());
  }
}

bool LinearRegex::search(std::string_view text, size_t from, bool anchored, bool to_end,
                         std::vector<int>& slots) const {
  // Pike's VM: `list` holds the threads at the current position in priority order, each a
  // program counter of a consuming instruction (or kMatch) and its slots.
  const size_t nslots = 2 * (static_cast<size_t>(groups_) + 1);
  const size_t n = text.size();
  struct List {
    std::vector<int> pcs;
    std::vector<int> slots;  // nslots per thread
    std::vector<size_t> mark;  // per instruction: the position + 1 it was last added at
  };
  List lists[2];
  for (List& l : lists) l.mark.assign(prog_.size(), 0);
  struct Pending {
    int pc;
    std::vector<int> slots;
  };
  std::vector<Pending> stack;
  // Follows the non-consuming instructions from `pc` at position `pos` (depth first, the
  // preferred branch first) and appends the consuming ones reached to `l`.
  auto add = [&](List& l, int pc0, const int* slots0, size_t pos) {
    stack.push_back({pc0, std::vector<int>(slots0, slots0 + nslots)});
    while (!stack.empty()) {
      Pending p = std::move(stack.back());
      stack.pop_back();
      int pc = p.pc;
      while (true) {
        if (l.mark[pc] == pos + 1) break;
        l.mark[pc] = pos + 1;
        const Inst& in = prog_[pc];
        bool dead = false;
        switch (in.op) {
          case Inst::kJmp: pc = in.x; continue;
          case Inst::kSplit:
            stack.push_back({in.y, p.slots});
            pc = in.x;
            continue;
          case Inst::kSave:
            p.slots[in.x] = static_cast<int>(pos);
            ++pc;
            continue;
          case Inst::kBegin: dead = pos != 0; break;
          case Inst::kEnd: dead = pos != n; break;
          case Inst::kWordB:
          case Inst::kNotWordB: {
            const bool before = pos > 0 && is_word(static_cast<unsigned char>(text[pos - 1]));
            const bool after = pos < n && is_word(static_cast<unsigned char>(text[pos]));
            dead = (before != after) != (in.op == Inst::kWordB);
            break;
          }
          default:
            l.pcs.push_back(pc);
            l.slots.insert(l.slots.end(), p.slots.begin(), p.slots.end());
            dead = true;  // this path is in the list
        }
        if (dead) break;
        ++pc;
      }
    }
  };
  const std::vector<int> fresh(nslots, -1);
  bool matched = false;
  List* cur = &lists[0];
  List* next = &lists[1];
  add(*cur, 0, fresh.data(), from);
  for (size_t pos = from;; ++pos) {
    next->pcs.clear();
    next->slots.clear();
    for (size_t t = 0; t < cur->pcs.size(); ++t) {
      const Inst& in = prog_[cur->pcs[t]];
      const int* ts = cur->slots.data() + t * nslots;
      if (in.op == Inst::kMatch) {
        if (to_end && pos != n) continue;  // a priority match may end early ("a|ab" on "ab")
        slots.assign(ts, ts + nslots);
        matched = true;
        break;  // the threads after it have lower priority
      }
      if (pos >= n) continue;
      const auto c = static_cast<unsigned char>(text[pos]);
      const bool ok = in.op == Inst::kByte ? c == in.byte
                      : in.op == Inst::kAny ? (c != '\n' && c != '\r')
                                            : classes_[in.x][c];
      if (ok) add(*next, cur->pcs[t] + 1, ts, pos + 1);
    }
    if (pos >= n) break;
    if (!matched && !anchored) add(*next, 0, fresh.data(), pos + 1);
    if (next->pcs.empty() && (matched || anchored)) break;
    std::swap(cur, next);
  }
  return matched;
}

bool LinearRegex::full_match(std::string_view text) const {
  std::vector<int> slots;
  return search(text, 0, true, true, slots);
}

std::string LinearRegex::replace_all(std::string_view text, std::string_view replacement) const {
  std::string out;
  std::vector<int> slots;
  size_t pos = 0, last = 0;  // where the search goes on; the end of the previous match
  while (pos <= text.size() && search(text, pos, false, false, slots)) {
    const auto begin = static_cast<size_t>(slots[0]), end = static_cast<size_t>(slots[1]);
    out.append(text.substr(last, begin - last));
    for (size_t i = 0; i < replacement.size(); ++i) {
      const char c = replacement[i];
      if (c != '$' || i + 1 >= replacement.size()) {
        out += c;
        continue;
      }
      const char d = replacement[i + 1];
      if (d == '$') {
        out += '$';
        ++i;
      } else if (d == '&') {
        out.append(text.substr(begin, end - begin));
        ++i;
      } else if (d == '`') {
        out.append(text.substr(last, begin - last));  // since the previous match, as libstdc++
        ++i;
      } else if (d == '\'') {
        out.append(text.substr(end));
        ++i;
      } else if (std::isdigit(static_cast<unsigned char>(d))) {  // one or two digits, as libstdc++ reads them
        int g = d - '0';
        ++i;
        if (i + 1 < replacement.size() && std::isdigit(static_cast<unsigned char>(replacement[i + 1])))
          g = g * 10 + (replacement[++i] - '0');
        if (g <= groups_ && slots[2 * g] >= 0)
          out.append(text.substr(static_cast<size_t>(slots[2 * g]), static_cast<size_t>(slots[2 * g + 1] - slots[2 * g])));
      } else {
        out += c;
      }
    }
    last = end;
    pos = end == begin ? end + 1 : end;
  }
  if (last < text.size()) out.append(text.substr(last));
  return out;
}

}  // namespace mobius
