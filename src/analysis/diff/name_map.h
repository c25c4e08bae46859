// The user's name map of `aiprof diff --map FILE`: which op, module or
// kernel names of run A are the same node as which names of run B when the
// two runs name them differently (another framework version, another
// vendor's library). docs/diff.md describes the file:
//
//   # aiprof diff name map: run A's names → run B's names
//   map:
//     - a: aten::cudnn_convolution          # a plain name matches exactly
//       b: aten::miopen_convolution
//     - a: /^sm90_xmma_gemm_/                # /.../ is a regex (RE2 syntax), searched in the name
//       b: /^Cijk_/
//
// Every name of A that entry i matches and every name of B it matches get
// the same alignment key ("map entry i"), so the nodes pair under a matched
// parent (several of them: in order of first appearance). The first entry
// that matches a name wins. Limits: kMaxNameMapEntries entries, of which
// kMaxNameMapRegexes patterns (both sides) are regexes; a regex is tried
// once per distinct name, never per event, in time linear in the name (RE2:
// no backreferences or lookaround), its memory (program and match cache) at
// most kMaxNameMapRegexBytes. Measured (release build, one run each, a busy
// 2-core VM): 1,000 regexes of /\pL{10}/, near the size limit, took 9.6 s
// and 119 MB to compile, so 256 take ~2.5 s and ~30 MB at most; before these
// limits 200 entries of /\pL{60}/ took 13.6 s and 255 MB, and the 10,000
// entries allowed would have taken ~10 GB.
#ifndef AIPROF_SRC_ANALYSIS_DIFF_NAME_MAP_H_
#define AIPROF_SRC_ANALYSIS_DIFF_NAME_MAP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace re2 {
class RE2;
}

namespace aiprof {

inline constexpr size_t kMaxNameMapEntries = 10000;
inline constexpr size_t kMaxNameMapRegexes = 256;
inline constexpr int64_t kMaxNameMapRegexBytes = 256 << 10;

class DiffNameMap {
 public:
  struct Pattern {
    std::string text;                    // as written
    std::shared_ptr<const re2::RE2> re;  // null: an exact name
    bool Matches(std::string_view name) const;
  };
  struct Entry {
    Pattern a, b;
    int line = 0;  // in the file, 1-based
  };

  // Parses the YAML text; `file` names the source in errors ("FILE:LINE: ...").
  static StatusOr<DiffNameMap> Parse(std::string_view yaml, const std::string& file);
  static StatusOr<DiffNameMap> Load(const std::string& path);

  // The entry matching a name of run A (side 0) or run B (side 1); -1: none.
  int Find(int side, std::string_view name) const;
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_DIFF_NAME_MAP_H_
