// Interned strings: every name, category and string arg is stored once and
// referred to by a 32-bit StringId. Bytes live in large arena blocks, so
// interning a string seen before costs one hash lookup and no allocation.
#ifndef AIPROF_SRC_BASE_STRING_POOL_H_
#define AIPROF_SRC_BASE_STRING_POOL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace aiprof {

struct StringId {
  uint32_t raw = 0;  // 0 is the empty string
  bool empty() const { return raw == 0; }
  friend bool operator==(StringId a, StringId b) { return a.raw == b.raw; }
  friend bool operator!=(StringId a, StringId b) { return a.raw != b.raw; }
  friend bool operator<(StringId a, StringId b) { return a.raw < b.raw; }
};

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  // Returns the id of `s`, adding it if new.
  StringId Intern(std::string_view s);
  // Returns the id of `s` if present.
  std::optional<StringId> Find(std::string_view s) const;
  std::string_view Get(StringId id) const { return strings_[id.raw]; }
  // Builds the lookup index now if it is pending (after AdoptExternal), so
  // that later Find calls from several threads only read.
  void BuildIndex() const { EnsureIndex(); }
  // Replaces the pool with `strings` (ids = positions; [0] must be empty),
  // whose bytes live elsewhere and must outlive the pool. The lookup index
  // is built on the first Intern/Find, so loading costs no hashing.
  void AdoptExternal(std::vector<std::string_view> strings);
  size_t size() const { return strings_.size(); }

 private:
  std::string_view CopyToArena(std::string_view s);

  static constexpr size_t kBlockBytes = 1 << 20;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = kBlockBytes;
  void Grow();
  void EnsureIndex() const;

  std::vector<std::string_view> strings_;
  // Open addressing with linear probing: each slot holds id + 1 (0 = empty)
  // and the hash's upper 32 bits, so most misses never touch string bytes.
  struct Slot {
    uint32_t id_plus_one;
    uint32_t hash_tag;
  };
  mutable std::vector<Slot> slots_;
  mutable size_t mask_ = 0;
  mutable bool index_stale_ = false;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_STRING_POOL_H_
