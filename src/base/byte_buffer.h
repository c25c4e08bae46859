// A growable byte buffer whose resize() does not zero the new bytes.
//
// Read and decompression buffers are sized once (1–4 MiB) and then filled by
// read(2) or a decompressor. std::vector<char>::resize writes a zero to every
// byte first, which touches every page: an aiprof run on a 30 KB trace faulted
// in about 17 MiB of zeroes it never read (4,400 of its 5,800 page faults,
// `perf record -e page-faults`). With default-initialised elements, a page is
// touched only when data is written into it.
#ifndef AIPROF_SRC_BASE_BYTE_BUFFER_H_
#define AIPROF_SRC_BASE_BYTE_BUFFER_H_

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace aiprof {

// An allocator whose value-initialisation (resize(n), vector(n)) is default
// initialisation: nothing is written for trivial types.
template <typename T, typename A = std::allocator<T>>
class DefaultInitAllocator : public A {
  using Traits = std::allocator_traits<A>;

 public:
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U, typename Traits::template rebind_alloc<U>>;
  };
  using A::A;

  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    Traits::construct(static_cast<A&>(*this), p, std::forward<Args>(args)...);
  }
};

// Bytes whose resize() leaves new bytes unwritten: write before reading.
using ByteBuffer = std::vector<char, DefaultInitAllocator<char>>;

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_BYTE_BUFFER_H_
