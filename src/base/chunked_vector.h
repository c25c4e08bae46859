// Append-only column stored in fixed-size blocks.
//
// Growing never copies old elements, so peak memory stays at the data size
// (a std::vector briefly holds twice its size while it reallocates). A column
// can also adopt memory it does not own (a mapped .aiprof file): its blocks
// then point into that memory, and an append into an adopted block (the
// partial last one, or any after a shrinking resize) copies that block first,
// so the adopted memory is never written.
//
// A block is 2^AIPROF_CHUNK_SHIFT elements: 16 (64 Ki) unless the build sets
// it (CMake's AIPROF_CHUNK_SHIFT). Nothing stored depends on it (a .aiprof
// file holds each column's rows contiguously). The sanitizer build uses 12:
// there a 512 KiB block is an mmap and munmap of ASan's own (its allocator
// caches only chunks up to 128 KiB), which made the fuzzers spend most of
// their time in the kernel, and small blocks put block boundaries inside
// the small traces of the tests.
#ifndef AIPROF_SRC_BASE_CHUNKED_VECTOR_H_
#define AIPROF_SRC_BASE_CHUNKED_VECTOR_H_

#ifndef AIPROF_CHUNK_SHIFT
#define AIPROF_CHUNK_SHIFT 16
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace aiprof {

template <typename T>
class ChunkedVector {
  static_assert(std::is_trivially_copyable_v<T>, "columns hold plain values");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "blocks come from plain operator new");

 public:
  static_assert(AIPROF_CHUNK_SHIFT >= 8 && AIPROF_CHUNK_SHIFT <= 24, "AIPROF_CHUNK_SHIFT: 8 to 24");
  static constexpr size_t kShift = AIPROF_CHUNK_SHIFT;
  static constexpr size_t kBlockSize = size_t{1} << kShift;
  static constexpr size_t kMask = kBlockSize - 1;

  ChunkedVector() = default;
  ChunkedVector(ChunkedVector&&) noexcept = default;
  ChunkedVector& operator=(ChunkedVector&&) noexcept = default;
  ChunkedVector(const ChunkedVector&) = delete;
  ChunkedVector& operator=(const ChunkedVector&) = delete;

  void push_back(const T& v) {
    if ((size_ & kMask) == 0 && (size_ >> kShift) == blocks_.size()) {
      AddOwnedBlock();
    } else if ((size_ >> kShift) < external_) {
      OwnBlock(size_ >> kShift);
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
    owned_.clear();
    size_ = 0;
    external_ = 0;
  }
  // Grows with uninitialised values, or shrinks (keeping the blocks).
  void resize(size_t n) {
    if (n > size_ && (size_ >> kShift) < external_) OwnBlock(size_ >> kShift);
    while (blocks_.size() * kBlockSize < n) AddOwnedBlock();
    size_ = n;
  }
  // Uses `n` values at `data` in place; `data` must outlive this column.
  void AdoptExternal(T* data, size_t n) {
    clear();
    for (size_t start = 0; start < n; start += kBlockSize) blocks_.push_back(data + start);
    size_ = n;
    external_ = blocks_.size();
  }
  // Contiguous runs, for bulk I/O: block b holds min(kBlockSize, size-b*kBlockSize) items.
  size_t block_count() const { return (size_ + kMask) >> kShift; }
  T* block(size_t b) { return blocks_[b]; }
  const T* block(size_t b) const { return blocks_[b]; }
  size_t block_items(size_t b) const {
    size_t start = b << kShift;
    return size_ - start < kBlockSize ? size_ - start : kBlockSize;
  }

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
  void AddOwnedBlock() {
    owned_.push_back(NewBlock());
    blocks_.push_back(owned_.back().get());
  }
  // Copies adopted block `b`, the one the next value goes into, to owned
  // memory (its values below size_). The blocks after it hold no value (size_
  // ends in b): they are dropped, so that every block before external_ is an
  // adopted one below size_.
  void OwnBlock(size_t b) {
    const size_t start = b << kShift;
    const size_t items = size_ - start < kBlockSize ? size_ - start : kBlockSize;
    owned_.push_back(NewBlock());
    std::memcpy(static_cast<void*>(owned_.back().get()), blocks_[b], items * sizeof(T));
    blocks_.resize(b + 1);
    blocks_[b] = owned_.back().get();
    external_ = b;
  }

  // A block's storage is not written until values are (new T[n] would run
  // T's member initialisers over all 64K slots and fault in every page of a
  // block that may hold a handful of rows). T is trivially copyable, so the
  // storage from operator new holds its objects implicitly (C++20 [intro.object]).
  struct FreeBlock {
    void operator()(T* p) const { ::operator delete(p); }
  };
  using Block = std::unique_ptr<T[], FreeBlock>;
  static Block NewBlock() { return Block(static_cast<T*>(::operator new(kBlockSize * sizeof(T)))); }

  std::vector<T*> blocks_;
  std::vector<Block> owned_;
  size_t size_ = 0;
  size_t external_ = 0;  // blocks_[0, external_) point into adopted memory
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_CHUNKED_VECTOR_H_
