// LinearRegex (util/linear_regex.h) against std::regex, the engine it replaces, on short texts
// where the backtracking engine is safe; and the inputs std::regex cannot take.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <string>

#include "util/error.h"
#include "util/linear_regex.h"

namespace mobius {
namespace {

const char* kPatterns[] = {
    "^transformer\\.h\\.", "\\.attn\\.wq\\.", "^model\\.layers\\.(\\d+)\\.attn\\.(q|k|v)\\.", "(a|ab)(c|bcd)(d*)",
    "a*?b", "(a+)+b", "x{2,3}", "x{2,}?", "x{3}", "[a-c.]+\\d", "[^.]+$", "\\bh\\b", "\\Bx", "(?:ab|a)c", "(a+)*b",
    "", "q_proj", "(.*\\.)?(q_proj|v_proj)", "\\w+\\s?\\W", "layers\\.(\\d+)\\.", "(x)?y", "\\x41\\-",
};
const char* kTexts[] = {
    "transformer.h.0.attn.wq.weight", "model.layers.12.attn.k.weight", "abcd", "abcbcdd", "aaab", "xxxxx",
    "a.b.c1", "h h", "xx", "abc", "", "model.layers.0.self_attn.q_proj", "a{,2}", "y", "A-", "foo bar!",
};

TEST(LinearRegex, AgreesWithStdRegex) {
  for (const char* p : kPatterns) {
    const std::regex ref(p);
    const LinearRegex re(p);
    for (const char* t : kTexts) {
      EXPECT_EQ(re.full_match(t), std::regex_match(t, ref)) << p << " on " << t;
      for (const char* fmt : {"<$&>", "[$1|$2]", "$$", "-", "$`$'", "$12", "$"})
        EXPECT_EQ(re.replace_all(t, fmt), std::regex_replace(t, ref, fmt)) << p << " on " << t << " with " << fmt;
    }
  }
}

TEST(LinearRegex, LongTextsAndPathologicalPatternsTakeLinearTime) {
  const auto start = std::chrono::steady_clock::now();
  const std::string name = "base_model.model." + std::string(100000, 'x') + ".lora_A.weight";
  EXPECT_TRUE(LinearRegex("base_model\\.model\\.(.+)\\.lora_([AB])\\.weight").full_match(name));
  EXPECT_EQ(LinearRegex("x+").replace_all(name, "y"), "base_model.model.y.lora_A.weight");
  EXPECT_FALSE(LinearRegex("(.*)*(.*)*(.*)*Z").full_match(std::string(5000, 'a')));
  EXPECT_FALSE(LinearRegex("(a|a)*b").full_match(std::string(5000, 'a')));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(LinearRegex, RefusesWhatItDoesNotImplement) {
  for (const char* p : {"(a)\\1", "(?=a)", "(?!a)", "(?<n>a)", "(?P<n>a)", "(?i)a", "\\u0041", "a**", "*a", "a)",
                        "(a", "[a", "[]", "x{3,2}", "x{1001}", "a++", "\\", "[z-a]", "^*", "{", "a{,2}", "a{2"})
    EXPECT_THROW(LinearRegex{p}, Error) << p;
  EXPECT_THROW(LinearRegex(std::string(60000, '(') + std::string(60000, ')')), Error);
  EXPECT_THROW(LinearRegex(std::string(40, '(') + std::string(40, ')')), Error);  // nesting
  EXPECT_THROW(LinearRegex("(a{1000}){1000}"), Error);                             // program size
  try {
    LinearRegex("ab(?=c)");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pattern 'ab(?=c)': lookaround"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mobius
