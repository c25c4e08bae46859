#include "src/base/string_pool.h"

#include <cstring>
#include <optional>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "src/base/check.h"

namespace aiprof {

size_t StringViewHash::operator()(std::string_view s) const {
  return static_cast<size_t>(XXH3_64bits(s.data(), s.size()));
}

StringPool::StringPool() {
  strings_.push_back(std::string_view());
  index_.emplace(std::string_view(), 0);
}

std::string_view StringPool::CopyToArena(std::string_view s) {
  if (s.size() > kBlockBytes / 4) {
    blocks_.push_back(std::make_unique<char[]>(s.size()));
    arena_bytes_ += s.size();
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    std::string_view out(blocks_.back().get(), s.size());
    // Keep the current small-string block last so it continues to fill.
    if (blocks_.size() >= 2) std::swap(blocks_[blocks_.size() - 1], blocks_[blocks_.size() - 2]);
    return out;
  }
  if (block_used_ + s.size() > kBlockBytes) {
    blocks_.push_back(std::make_unique<char[]>(kBlockBytes));
    arena_bytes_ += kBlockBytes;
    block_used_ = 0;
  }
  char* dst = blocks_.back().get() + block_used_;
  std::memcpy(dst, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(dst, s.size());
}

StringId StringPool::Intern(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return StringId{it->second};
  std::string_view stored = CopyToArena(s);
  AIPROF_CHECK(strings_.size() < UINT32_MAX);
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(stored);
  index_.emplace(stored, id);
  return StringId{id};
}

std::optional<StringId> StringPool::Find(std::string_view s) const {
  auto it = index_.find(s);
  if (it == index_.end()) return std::nullopt;
  return StringId{it->second};
}

}  // namespace aiprof
