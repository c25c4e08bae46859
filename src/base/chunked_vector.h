// Append-only column stored in fixed-size blocks.
//
// Growing never copies old elements, so peak memory stays at the data size
// (a std::vector briefly holds twice its size while it reallocates).
#ifndef AIPROF_SRC_BASE_CHUNKED_VECTOR_H_
#define AIPROF_SRC_BASE_CHUNKED_VECTOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace aiprof {

template <typename T>
class ChunkedVector {
  static_assert(std::is_trivially_copyable_v<T>, "columns hold plain values");

 public:
  static constexpr size_t kShift = 16;
  static constexpr size_t kBlockSize = size_t{1} << kShift;
  static constexpr size_t kMask = kBlockSize - 1;

  void push_back(const T& v) {
    if ((size_ & kMask) == 0 && (size_ >> kShift) == blocks_.size()) {
      blocks_.push_back(std::unique_ptr<T[]>(new T[kBlockSize]));
    }
    blocks_[size_ >> kShift][size_ & kMask] = v;
    ++size_;
  }
  T& operator[](size_t i) { return blocks_[i >> kShift][i & kMask]; }
  const T& operator[](size_t i) const { return blocks_[i >> kShift][i & kMask]; }
  T& back() { return (*this)[size_ - 1]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    blocks_.clear();
    size_ = 0;
  }
  void resize(size_t n) {
    while (blocks_.size() * kBlockSize < n) blocks_.push_back(std::unique_ptr<T[]>(new T[kBlockSize]));
    size_ = n;
  }
  // Contiguous runs, for bulk I/O: block b holds min(kBlockSize, size-b*kBlockSize) items.
  size_t block_count() const { return (size_ + kMask) >> kShift; }
  T* block(size_t b) { return blocks_[b].get(); }
  const T* block(size_t b) const { return blocks_[b].get(); }
  size_t block_items(size_t b) const {
    size_t start = b << kShift;
    return size_ - start < kBlockSize ? size_ - start : kBlockSize;
  }
  size_t bytes_reserved() const { return blocks_.size() * kBlockSize * sizeof(T); }

  // Reorders so that new[i] = old[order[i]]. The new column is written
  // sequentially; the old one is freed right after, so a table of many
  // columns never holds more than one extra column at a time.
  void Permute(const std::vector<uint32_t>& order) {
    ChunkedVector<T> out;
    out.resize(size_);
    for (size_t i = 0; i < order.size(); ++i) out[i] = (*this)[order[i]];
    *this = std::move(out);
  }

 private:
  std::vector<std::unique_ptr<T[]>> blocks_;
  size_t size_ = 0;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_CHUNKED_VECTOR_H_
