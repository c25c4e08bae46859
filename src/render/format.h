// Output format resolution, in one place for every command: the --format
// value when given, else the output file's name (the longest matching ending
// wins, so ".speedscope.json" beats ".json"), else the command's default for
// standard output (also for a device or pipe such as /dev/null). Each
// command lists the formats it offers; anything else is an error that names
// the value or the path.
#ifndef AIPROF_SRC_RENDER_FORMAT_H_
#define AIPROF_SRC_RENDER_FORMAT_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace aiprof::render {

// One output format a command offers: its --format name and the file-name
// endings that select it (matched without regard to ASCII case).
struct OutputFormat {
  std::string_view name;                     // "md"
  std::vector<std::string_view> extensions;  // {".md", ".markdown"}
};

// The standard formats, with their usual endings. A command offers a list of
// these (and of its own, e.g. a view's "folded" or "dot").
OutputFormat TextFormat();        // "text": .txt
OutputFormat MarkdownFormat();    // "md": .md, .markdown
OutputFormat HtmlFormat();        // "html": .html, .htm
OutputFormat JsonFormat();        // "json": .json
OutputFormat YamlFormat();        // "yaml": .yaml, .yml
OutputFormat CsvFormat();         // "csv": .csv
OutputFormat PdfFormat();         // "pdf": .pdf
OutputFormat SpeedscopeFormat();  // "speedscope": .speedscope.json

// What the user asked for. An empty `output` or "-" is standard output.
struct FormatRequest {
  std::string_view format;  // --format ("" when not given)
  std::string_view output;  // -o / --output path
};

// The format of `request` among `offered`:
// - --format given: it must name one of `offered` (error lists them);
// - else standard output: `stdout_format` (must be in `offered`; "" means
//   the first of `offered`);
// - else the offered format with the longest ending of `output`;
// - else, when `output` is written in place (a standard stream's name such
//   as /dev/stdout or /dev/fd/N, whatever it is redirected to; a device or
//   pipe such as /dev/null or a FIFO: OutputTarget in
//   src/base/atomic_file.h), the standard output's format, as if -o were
//   not given;
// - else (a regular file, or nothing yet, with no known ending) an error
//   naming the path and the endings that would work.
StatusOr<std::string> ResolveFormat(std::span<const OutputFormat> offered, const FormatRequest& request,
                                    std::string_view stdout_format = "");

// The offered format selected by `path`'s ending (longest wins), or "".
std::string FormatForPath(std::span<const OutputFormat> offered, std::string_view path);

// True if `offered` has a format named `name`.
bool OffersFormat(std::span<const OutputFormat> offered, std::string_view name);

}  // namespace aiprof::render

#endif  // AIPROF_SRC_RENDER_FORMAT_H_
