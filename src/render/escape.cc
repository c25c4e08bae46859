#include "src/render/escape.h"

#include <algorithm>
#include <cstdio>

namespace aiprof {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid; its code
// point in *code_point when asked.
size_t Utf8SequenceLength(std::string_view s, size_t i, uint32_t* code_point = nullptr) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t min;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) { len = 2; min = 0x80; }
  else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; }
  else if ((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; }
  else return 0;
  if (i + len > s.size()) return 0;
  uint32_t cp = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (code_point) *code_point = cp;
  return len;
}

// Code points a terminal acts on rather than shows: C1 controls (U+009B is
// CSI, U+009D OSC where a terminal honours them in UTF-8) and the bidi
// controls that reorder a line ("Trojan Source"; in a browser too: a file
// "rtl\u202egpj.json" read "rtlnosj.jpg"), plus the line and paragraph
// separators. The one list: the terminal, HTML and Markdown escapers show
// them as \uXXXX text.
bool IsInvisibleControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

// The code point as the text \uXXXX: how every escaper shows an
// IsInvisibleControl one.
void AppendCodePointEscape(std::string* out, uint32_t cp) {
  char buf[12];
  std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(cp));
  out->append(buf);
}

// EscapeControls, also keeping \r when `keep_cr` (CSV cells: a value's CR
// reads back as a CR; it moves no cursor beyond its own line).
std::string ShowControls(std::string_view s, bool keep_line_breaks, bool keep_cr) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    const size_t len = c >= 0x80 ? Utf8SequenceLength(s, i, &cp) : 1;
    if (len == 0 || c == 0x7f ||
        (c < 0x20 && !(keep_line_breaks && (c == '\n' || c == '\t')) && !(keep_cr && c == '\r'))) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out.append(buf);
      ++i;
      continue;
    }
    if (len > 1 && IsInvisibleControl(cp)) {
      AppendCodePointEscape(&out, cp);
      i += len;
      continue;
    }
    out.append(s.substr(i, len));
    i += len;
  }
  return out;
}

}  // namespace

std::string EscapeControls(std::string_view s, bool keep_line_breaks) {
  return ShowControls(s, keep_line_breaks, /*keep_cr=*/false);
}

namespace {

// JSON string content of `s`, piece by piece to `emit`: the one place the
// escaping rules live (AppendJsonEscaped writes, JsonEscapedSize counts).
template <typename Emit>
void JsonEscapedPieces(std::string_view s, Emit&& emit) {
  size_t run = 0;  // start of the bytes that need no escape, emitted as one piece
  auto escape = [&](size_t i, std::string_view with) {
    if (i > run) emit(s.substr(run, i - run));
    emit(with);
  };
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        escape(i, "\\ufffd");
        run = ++i;
      } else {
        i += len;
      }
      continue;
    }
    std::string_view with;
    char buf[8];
    switch (c) {
      case '"': with = "\\\""; break;
      case '\\': with = "\\\\"; break;
      case '\n': with = "\\n"; break;
      case '\r': with = "\\r"; break;
      case '\t': with = "\\t"; break;
      case '<': with = "\\u003c"; break;  // safe to embed in HTML <script>
      case '>': with = "\\u003e"; break;
      case '&': with = "\\u0026"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          with = std::string_view(buf, 6);
        }
    }
    if (!with.empty()) {
      escape(i, with);
      run = i + 1;
    }
    ++i;
  }
  if (s.size() > run) emit(s.substr(run));
}

}  // namespace

void AppendJsonEscaped(std::string* out, std::string_view s) {
  JsonEscapedPieces(s, [out](std::string_view piece) { out->append(piece); });
}

size_t JsonEscapedSize(std::string_view s) {
  size_t n = 0;
  JsonEscapedPieces(s, [&n](std::string_view piece) { n += piece.size(); });
  return n;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  AppendJsonEscaped(&out, s);
  out.push_back('"');
  return out;
}

void AppendDisplayJsonEscaped(std::string* out, std::string_view s) {
  // Only non-ASCII text can hold an invisible control: ASCII goes straight.
  size_t first = 0;
  while (first < s.size() && static_cast<unsigned char>(s[first]) < 0x80) ++first;
  if (first == s.size()) return AppendJsonEscaped(out, s);
  std::string shown(s.substr(0, first));
  for (size_t i = first; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    uint32_t cp = c;
    const size_t len = c >= 0x80 ? Utf8SequenceLength(s, i, &cp) : 1;
    if (len > 1 && IsInvisibleControl(cp)) {
      AppendCodePointEscape(&shown, cp);
    } else {
      shown.append(s.substr(i, len == 0 ? 1 : len));  // invalid bytes: AppendJsonEscaped makes them U+FFFD
    }
    i += len == 0 ? 1 : len;
  }
  AppendJsonEscaped(out, shown);
}

std::string DisplayJsonString(std::string_view s) {
  std::string out = "\"";
  AppendDisplayJsonEscaped(&out, s);
  out.push_back('"');
  return out;
}

std::string CsvField(std::string_view raw) {
  // Terminal controls first (CSV goes to a terminal when there is no -o): a
  // hostile name's ESC or BEL neither recolours nor retitles it. \n, \t
  // and \r stay; every other control becomes text.
  std::string s = ShowControls(raw, /*keep_line_breaks=*/true, /*keep_cr=*/true);  // moved out unquoted
  // A spreadsheet runs a cell that starts with = + - @ (after spaces, tabs
  // and line breaks, which some of them skip) or with a tab or CR: such a
  // cell gets a ' first (OWASP's "CSV injection" advice).
  const size_t first = s.find_first_not_of(" \t\r\n");
  const bool formula =
      !s.empty() && (s[0] == '\t' || s[0] == '\r' ||
                     (first != std::string::npos && std::string_view("=+-@").find(s[first]) != std::string_view::npos));
  // Line breaks and tabs are quoted so that no reader takes them for the end
  // of a field.
  bool quote = formula;
  for (char c : s) quote |= c == ',' || c == '"' || c == '\n' || c == '\r' || c == '\t';
  if (!quote) return s;
  std::string out = formula ? "\"'" : "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

namespace {

// Valid UTF-8 of `s`, with U+FFFD for each invalid byte.
std::string ValidUtf8(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      out.append("\xEF\xBF\xBD");
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace

std::string HtmlEscape(std::string_view raw) {
  std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Bidi controls (and C1 controls, line separators), as the terminal
      // shows them: visible \uXXXX text. An entity (&#x202E;) would be
      // decoded back into the character and reorder the line as before
      // ("rtl\u202egpj.json" read as "rtlnosj.jpg"); the text cannot.
      uint32_t cp = 0;
      const size_t len = Utf8SequenceLength(s, i, &cp);  // valid: ValidUtf8
      if (IsInvisibleControl(cp)) {
        AppendCodePointEscape(&out, cp);
      } else {
        out.append(s, i, len);
      }
      i += len;
      continue;
    }
    switch (c) {
      case '&': out.append("&amp;"); break;
      case '<': out.append("&lt;"); break;
      case '>': out.append("&gt;"); break;
      case '"': out.append("&quot;"); break;
      case '\'': out.append("&#39;"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out.append("&#xFFFD;");
        } else {
          out.push_back(c);
        }
    }
    ++i;
  }
  return out;
}

std::string MarkdownEscape(std::string_view raw) {
  std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Bidi controls as HtmlEscape shows them, the backslash escaped so
      // that Markdown shows it: \\u202e reads \u202e.
      uint32_t cp = 0;
      const size_t len = Utf8SequenceLength(s, i, &cp);  // valid: ValidUtf8
      if (IsInvisibleControl(cp)) {
        out.push_back('\\');
        AppendCodePointEscape(&out, cp);
      } else {
        out.append(s, i, len);
      }
      i += len - 1;
      continue;
    }
    switch (c) {
      case '&': out.append("&amp;"); break;
      case '<': out.append("&lt;"); break;
      case '>': out.append("&gt;"); break;
      case '\n':
      case '\r': out.push_back(' '); break;
      case '\\': case '`': case '*': case '_': case '{': case '}': case '[': case ']': case '(': case ')':
      case '|': case '~':
        out.push_back('\\');
        out.push_back(c);
        break;
      case '#': case '+': case '-': case '.': case '!':
        // Block markers (heading, list, numbered list) only matter first.
        if (out.empty()) out.push_back('\\');
        out.push_back(c);
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out.push_back(' ');
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

std::string_view Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t cut = max_bytes;
  // Back to a sequence's first byte (a continuation byte is 10xxxxxx).
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut);
}

std::string ShownText(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  return std::string(Utf8Prefix(s, max_bytes)) + "… (" + std::to_string(s.size()) + " bytes in all)";
}

std::string FitLabel(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  return std::string(Utf8Prefix(s, max_bytes)) + "…";
}

std::string ShortenMiddle(std::string_view s, size_t columns) {
  const size_t width = TerminalWidth(s);
  if (width <= columns) return std::string(s);
  if (columns == 0) return "";
  const size_t head = columns / 2, tail = columns - 1 - head;
  // Byte offsets of the head-th code point and of the (width - tail)-th.
  size_t head_end = s.size(), tail_start = s.size(), seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen == head) head_end = std::min(head_end, i);
    if (seen == width - tail) {
      tail_start = i;
      break;
    }
    ++seen;
  }
  return std::string(s.substr(0, head_end)) + "…" + std::string(s.substr(tail_start));
}

std::string TerminalSafe(std::string_view s) { return EscapeControls(s, /*keep_line_breaks=*/false); }

size_t TerminalWidth(std::string_view s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80;
  return w;
}

}  // namespace aiprof
