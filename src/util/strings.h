// Small string helpers shared by the option parsers and the config readers.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace mobius {

// `s` with ASCII letters lower-cased (option words and config values compared in any case).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace mobius
