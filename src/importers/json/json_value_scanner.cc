#include "src/importers/json/json_value_scanner.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

size_t JsonValueScanner::FeedContainer(const char* data, size_t n) {
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
    if (in_string_) {
      i += FindQuoteOrBackslash(data + i, n - i);
      if (i >= n) return kNotDone;
      if (data[i] == '\\') {
        escape_ = true;
        ++i;
        continue;
      }
      in_string_ = false;
      ++i;
      if (depth_ == 0) return i;  // a top-level string ended
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
