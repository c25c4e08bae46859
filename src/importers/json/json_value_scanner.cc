#include "src/importers/json/json_value_scanner.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <cstring>

namespace aiprof {

size_t FindQuoteOrBackslash(const char* data, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    int mask = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < n; ++i) {
    if (data[i] == '"' || data[i] == '\\') return i;
  }
  return n;
}

size_t FindStructural(const char* data, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  // '[' | 0x20 == '{' and ']' | 0x20 == '}', so two compares cover four brackets.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i lower = _mm_set1_epi8(0x20);
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    __m128i folded = _mm_or_si128(v, lower);
    __m128i hits = _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                                _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    int mask = _mm_movemask_epi8(hits);
    if (mask != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  for (; i < n; ++i) {
    char c = data[i];
    if (c == '"' || c == '{' || c == '}' || c == '[' || c == ']') return i;
  }
  return n;
}

void JsonValueScanner::Start(char first) {
  depth_ = 0;
  in_string_ = false;
  escape_ = false;
  quote_pending_ = false;
  scalar_ = false;
  top_string_ = false;
  if (first == '{' || first == '[') return;
  if (first == '"') {
    top_string_ = true;
    return;
  }
  scalar_ = true;
}

size_t JsonValueScanner::Feed(const char* data, size_t n) {
  if (scalar_) return FeedScalar(data, n);
  return FeedContainer(data, n);
}

size_t JsonValueScanner::FeedScalar(const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char c = data[i];
    if (c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t') return i;
  }
  return kNotDone;
}

namespace {

// Bit k set where p[k] == c, for 64 bytes.
inline uint64_t EqMask64(const char* p, char c) {
#if defined(__AVX2__)
  const __m256i v = _mm256_set1_epi8(c);
  uint32_t lo = static_cast<uint32_t>(_mm256_movemask_epi8(
      _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), v)));
  uint32_t hi = static_cast<uint32_t>(_mm256_movemask_epi8(
      _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), v)));
  return uint64_t{lo} | (uint64_t{hi} << 32);
#else
  uint64_t m = 0;
  for (int k = 0; k < 64; ++k) m |= uint64_t{p[k] == c} << k;
  return m;
#endif
}

// Bit k set where p[k] | 0x20 == c: '{' also finds '[', '}' also finds ']'.
inline uint64_t FoldEqMask64(const char* p, char c) {
#if defined(__AVX2__)
  const __m256i v = _mm256_set1_epi8(c);
  const __m256i lower = _mm256_set1_epi8(0x20);
  uint32_t lo = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
      _mm256_or_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), lower), v)));
  uint32_t hi = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
      _mm256_or_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), lower), v)));
  return uint64_t{lo} | (uint64_t{hi} << 32);
#else
  uint64_t m = 0;
  for (int k = 0; k < 64; ++k) m |= uint64_t{(p[k] | 0x20) == c} << k;
  return m;
#endif
}

// A byte that may follow a string's closing quote in a container, once white
// space is skipped.
inline bool CanFollowString(char c) { return c == ',' || c == ':' || c == '}' || c == ']'; }
inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Bit k = xor of bits 0..k: marks bytes from an opening quote up to (not
// including) its closing quote.
inline uint64_t PrefixXor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

}  // namespace

// Scans 64 bytes at a time: quotes give the in-string mask, brackets outside
// strings move the depth. A block holding a backslash (rare in traces) goes
// byte by byte so escapes are exact.
size_t JsonValueScanner::FeedContainer(const char* data, size_t n) {
  if (top_string_ || (depth_ == 0 && in_string_)) return FeedBytes(data, n);  // a top-level string
  size_t i = 0;
  char tail[64];
  while (i < n) {
    size_t len = n - i < 64 ? n - i : 64;
    const char* p = data + i;
    if (len < 64) {
      std::memset(tail, ' ', sizeof(tail));
      std::memcpy(tail, p, len);
      p = tail;
    }
    bool bytewise = escape_ || quote_pending_ || EqMask64(p, '\\') != 0;
    uint64_t quotes = 0, inside = 0, closes = 0;
    if (!bytewise) {
      quotes = EqMask64(p, '"');
      inside = PrefixXor(quotes) ^ (in_string_ ? ~uint64_t{0} : 0);
      closes = FoldEqMask64(p, '}');
      // A closing quote whose next byte cannot follow a string (a raw quote
      // in a name), or may not (white space, the block's end): the bytes
      // after it in this read are looked at, past white space; one that
      // cannot follow a string, or the read's end, sends the block byte by
      // byte (which carries the question into the next read). A quote at
      // the block's last byte is so settled by the next block's first bytes,
      // not by scanning its block byte by byte.
      uint64_t closing = quotes & ~inside;
      uint64_t suspect = closing & ~((closes | EqMask64(p, ',') | EqMask64(p, ':')) >> 1);
      while (suspect != 0 && !bytewise) {
        size_t at = i + static_cast<size_t>(__builtin_ctzll(suspect)) + 1;
        while (at < n && IsJsonSpace(data[at])) ++at;
        bytewise = at >= n || !CanFollowString(data[at]);
        suspect &= suspect - 1;
      }
    }
    if (bytewise) {
      size_t r = FeedBytes(p, len);
      if (r != kNotDone) return r >= kInvalid ? r : i + r;
      i += len;
      continue;
    }
    uint64_t opens = FoldEqMask64(p, '{') & ~inside;
    uint64_t brackets = (opens | closes) & ~inside;
    while (brackets != 0) {
      int k = __builtin_ctzll(brackets);
      if ((opens >> k) & 1) {
        ++depth_;
      } else {
        if (depth_ == 0) return kInvalid;
        if (--depth_ == 0) return i + static_cast<size_t>(k) + 1;
      }
      brackets &= brackets - 1;
    }
    in_string_ = (inside >> 63) & 1;
    i += len;
  }
  return kNotDone;
}

size_t JsonValueScanner::FeedBytes(const char* data, size_t n) {
  size_t i = 0;
  if (top_string_ && depth_ == 0 && !in_string_) {
    // First byte is the opening quote of a top-level string.
    in_string_ = true;
    depth_ = 0;
    i = 1;
    top_string_ = false;
    scalar_ = false;
  }
  while (i < n) {
    if (escape_) {
      escape_ = false;
      ++i;
      continue;
    }
    if (quote_pending_) {
      while (i < n && IsJsonSpace(data[i])) ++i;
      if (i >= n) return kNotDone;
      quote_pending_ = false;
      // The quote ended the string, or was one of its characters: the byte
      // at i is read again in the state that follows.
      if (CanFollowString(data[i])) in_string_ = false;
      continue;
    }
    if (in_string_) {
      i += FindQuoteOrBackslash(data + i, n - i);
      if (i >= n) return kNotDone;
      if (data[i] == '\\') {
        escape_ = true;
        ++i;
        continue;
      }
      ++i;
      if (depth_ == 0) {  // a top-level string ended
        in_string_ = false;
        return i;
      }
      quote_pending_ = true;
      continue;
    }
    i += FindStructural(data + i, n - i);
    if (i >= n) return kNotDone;
    char c = data[i++];
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else {
      if (depth_ == 0) return kInvalid;
      if (--depth_ == 0) return i;
    }
  }
  return kNotDone;
}

}  // namespace aiprof
