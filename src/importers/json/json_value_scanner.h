// Finds where one JSON value ends in a byte stream that arrives in chunks.
//
// The scanner only tracks nesting depth and string/escape state; it does not
// validate (simdjson does that for each event). It resumes where the last
// chunk stopped, so a value split across reads is scanned once.
//
// Inside a container, an unescaped quote ends a string only when the next
// byte that is not white space can follow a string there (',', ':', '}' or
// ']'); any other quote is read as a character of the string. On valid JSON
// that is every closing quote, so nothing changes; it keeps the cut right
// where a writer put a name's quote in raw, as torch 1.13's
// export_chrome_trace and libkineto do (record_function('say "hi') wrote
// "name": "say "hi", whose odd quote turned the scan inside out: the rest of
// the file became one value, read as a truncated file).
#ifndef AIPROF_SRC_IMPORTERS_JSON_JSON_VALUE_SCANNER_H_
#define AIPROF_SRC_IMPORTERS_JSON_JSON_VALUE_SCANNER_H_

#include <cstddef>
#include <cstdint>

namespace aiprof {

class JsonValueScanner {
 public:
  static constexpr size_t kNotDone = SIZE_MAX;
  static constexpr size_t kInvalid = SIZE_MAX - 1;

  // Starts a value whose first (non-space) byte is `first`.
  void Start(char first);
  // Scans data[0, n) continuing the current value. Returns the number of
  // bytes up to and including the value's last byte, kNotDone when more
  // input is needed, or kInvalid on a bracket mismatch. For a scalar the
  // value ends before the delimiter, which is not consumed.
  size_t Feed(const char* data, size_t n);
  // At end of input: a scalar may end there, nothing else may.
  bool CanEndAtEof() const { return scalar_; }
  uint32_t depth() const { return depth_; }

 private:
  size_t FeedContainer(const char* data, size_t n);
  size_t FeedScalar(const char* data, size_t n);
  size_t FeedBytes(const char* data, size_t n);  // byte-wise, handles escapes

  uint32_t depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool quote_pending_ = false;  // in a string, after a quote whose next non-space byte is not read yet
  bool scalar_ = false;
  bool top_string_ = false;  // the value itself is a string
};

// Bytes of `data` up to the first '"' or '\\' (n if none). Visible for testing.
size_t FindQuoteOrBackslash(const char* data, size_t n);
// Bytes up to the first '"', '{', '}', '[' or ']' (n if none). Visible for testing.
size_t FindStructural(const char* data, size_t n);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_JSON_VALUE_SCANNER_H_
