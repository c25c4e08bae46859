#include "src/base/string_pool.h"

#include <cstring>
#include <optional>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "src/base/check.h"

namespace aiprof {

StringPool::StringPool() {
  strings_.push_back(std::string_view());
  slots_.assign(1024, Slot{0, 0});
  mask_ = slots_.size() - 1;
}

void StringPool::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.size() * 2, Slot{0, 0});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.id_plus_one == 0) continue;
    uint64_t h = XXH3_64bits(strings_[s.id_plus_one - 1].data(), strings_[s.id_plus_one - 1].size());
    size_t pos = h & mask_;
    while (slots_[pos].id_plus_one != 0) pos = (pos + 1) & mask_;
    slots_[pos] = s;
  }
}

std::string_view StringPool::CopyToArena(std::string_view s) {
  if (s.size() > kBlockBytes / 4) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(s.size()));
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    std::string_view out(blocks_.back().get(), s.size());
    // Keep the current small-string block last so it continues to fill.
    if (blocks_.size() >= 2) std::swap(blocks_[blocks_.size() - 1], blocks_[blocks_.size() - 2]);
    return out;
  }
  if (block_used_ + s.size() > kBlockBytes) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockBytes));
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(dst, s.size());
}

void StringPool::AdoptExternal(std::vector<std::string_view> strings) {
  AIPROF_CHECK(!strings.empty() && strings[0].empty());
  strings_ = std::move(strings);
  index_stale_ = true;
}

void StringPool::EnsureIndex() const {
  if (!index_stale_) return;
  index_stale_ = false;
  size_t capacity = 1024;
  while (capacity < strings_.size() * 2 + 2) capacity *= 2;
  slots_.assign(capacity, Slot{0, 0});
  mask_ = capacity - 1;
  for (size_t id = 1; id < strings_.size(); ++id) {
    uint64_t h = XXH3_64bits(strings_[id].data(), strings_[id].size());
    size_t pos = h & mask_;
    while (slots_[pos].id_plus_one != 0) pos = (pos + 1) & mask_;
    slots_[pos] = Slot{static_cast<uint32_t>(id + 1), static_cast<uint32_t>(h >> 32)};
  }
}

StringId StringPool::Intern(std::string_view s) {
  if (s.empty()) return StringId{0};
  EnsureIndex();
  uint64_t h = XXH3_64bits(s.data(), s.size());
  uint32_t tag = static_cast<uint32_t>(h >> 32);
  size_t pos = h & mask_;
  for (;; pos = (pos + 1) & mask_) {
    Slot& slot = slots_[pos];
    if (slot.id_plus_one == 0) break;
    if (slot.hash_tag == tag && strings_[slot.id_plus_one - 1] == s) return StringId{slot.id_plus_one - 1};
  }
  AIPROF_CHECK(strings_.size() < UINT32_MAX - 1);
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(CopyToArena(s));
  slots_[pos] = Slot{id + 1, tag};
  if (strings_.size() * 2 > slots_.size()) Grow();  // load factor <= 1/2
  return StringId{id};
}

std::optional<StringId> StringPool::Find(std::string_view s) const {
  if (s.empty()) return StringId{0};
  EnsureIndex();
  uint64_t h = XXH3_64bits(s.data(), s.size());
  uint32_t tag = static_cast<uint32_t>(h >> 32);
  for (size_t pos = h & mask_;; pos = (pos + 1) & mask_) {
    const Slot& slot = slots_[pos];
    if (slot.id_plus_one == 0) return std::nullopt;
    if (slot.hash_tag == tag && strings_[slot.id_plus_one - 1] == s) return StringId{slot.id_plus_one - 1};
  }
}

}  // namespace aiprof
