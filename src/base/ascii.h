// ASCII case folding for matching names (kernel, op and thread names are
// ASCII identifiers): no locale lookup per byte, as std::tolower does.
#ifndef AIPROF_SRC_BASE_ASCII_H_
#define AIPROF_SRC_BASE_ASCII_H_

#include <algorithm>
#include <string_view>

namespace aiprof {

inline char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return AsciiLower(x) == AsciiLower(y); });
}

inline bool ContainsIgnoreCase(std::string_view hay, std::string_view needle) {
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                     [](char x, char y) { return AsciiLower(x) == AsciiLower(y); }) != hay.end();
}

// Whether `needle` occurs in `hay`, case as written (std::string_view gains
// contains() only in C++23).
inline bool Contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

// `s` without leading and trailing ASCII whitespace (space, \t, \r, \n, \v, \f).
inline std::string_view TrimAsciiSpace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_ASCII_H_
