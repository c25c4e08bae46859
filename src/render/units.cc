#include "src/render/units.h"

namespace aiprof {

std::string NsToUsText(int64_t ns) {
  bool negative = ns < 0;
  uint64_t v = negative ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string out = (negative ? "-" : "") + std::to_string(v / 1000);
  unsigned frac = static_cast<unsigned>(v % 1000);
  if (frac != 0) {
    char digits[4] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                      static_cast<char>('0' + frac % 10), 0};
    std::string f(digits);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

}  // namespace aiprof
