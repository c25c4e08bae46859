#include "src/render/format.h"

#include <algorithm>

#include "src/base/ascii.h"
#include "src/base/atomic_file.h"

namespace aiprof::render {
namespace {

bool EndsWithIgnoreCase(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && EqualsIgnoreCase(s.substr(s.size() - suffix.size()), suffix);
}

std::string Names(std::span<const OutputFormat> offered) {
  std::string out;
  for (const OutputFormat& f : offered) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

std::string Endings(std::span<const OutputFormat> offered) {
  std::string out;
  for (const OutputFormat& f : offered) {
    for (std::string_view e : f.extensions) out += (out.empty() ? "" : ", ") + std::string(e);
  }
  return out;
}

}  // namespace

OutputFormat TextFormat() { return {"text", {".txt"}}; }
OutputFormat MarkdownFormat() { return {"md", {".md", ".markdown"}}; }
OutputFormat HtmlFormat() { return {"html", {".html", ".htm"}}; }
OutputFormat JsonFormat() { return {"json", {".json"}}; }
OutputFormat YamlFormat() { return {"yaml", {".yaml", ".yml"}}; }
OutputFormat CsvFormat() { return {"csv", {".csv"}}; }
OutputFormat PdfFormat() { return {"pdf", {".pdf"}}; }
OutputFormat SpeedscopeFormat() { return {"speedscope", {".speedscope.json"}}; }

std::string FormatForPath(std::span<const OutputFormat> offered, std::string_view path) {
  std::string best;
  size_t best_len = 0;
  for (const OutputFormat& format : offered) {
    for (std::string_view ext : format.extensions) {
      if (ext.size() > best_len && EndsWithIgnoreCase(path, ext)) {
        best = format.name;
        best_len = ext.size();
      }
    }
  }
  return best;
}

bool OffersFormat(std::span<const OutputFormat> offered, std::string_view name) {
  return std::any_of(offered.begin(), offered.end(), [&](const OutputFormat& f) { return f.name == name; });
}

StatusOr<std::string> ResolveFormat(std::span<const OutputFormat> offered, const FormatRequest& request,
                                    std::string_view stdout_format) {
  if (offered.empty()) return ErrStatus("no output format offered");
  if (!request.format.empty()) {
    if (OffersFormat(offered, request.format)) return std::string(request.format);
    return ErrStatus("--format " + std::string(request.format) + ": unknown format (choose one of " +
                     Names(offered) + ")");
  }
  auto standard_output = [&]() -> StatusOr<std::string> {
    std::string_view name = stdout_format.empty() ? offered.front().name : stdout_format;
    if (OffersFormat(offered, name)) return std::string(name);
    return ErrStatus("standard output: format " + std::string(name) + " is not offered");
  };
  if (request.output.empty() || request.output == "-") return standard_output();
  std::string found = FormatForPath(offered, request.output);
  if (!found.empty()) return found;
  // A standard stream's name (/dev/stdout, /dev/fd/N: whatever it is
  // redirected to, a regular file too), a device or a pipe (/dev/null, a
  // FIFO) is written in place, as a shell's `>` would (OutputTarget
  // decides, for the writer too): its name tells no format, so it gets what
  // standard output would.
  std::string target;
  bool in_place = false;
  if (OutputTarget(std::string(request.output), &target, &in_place).ok() && in_place) return standard_output();
  return ErrStatus(std::string(request.output) + ": cannot tell the output format from the file name (use " +
                   Endings(offered) + ", or --format " + Names(offered) + ")");
}

}  // namespace aiprof::render
