// PDF output: the HTML rendering printed by headless Chromium (Debian's
// `chromium`; $AIPROF_CHROMIUM names another binary). aiprof does not
// paginate or lay out text itself. When no Chromium is installed the error
// says so and how to get it, and nothing is written.
#ifndef AIPROF_SRC_REPORT_PDF_HTML_TO_PDF_H_
#define AIPROF_SRC_REPORT_PDF_HTML_TO_PDF_H_

#include <string>

#include "src/base/status.h"

namespace aiprof {

// The Chromium binary to use, or an error saying none was found.
StatusOr<std::string> FindChromium();

// Prints `html` (a self-contained page) to `pdf_path`, written atomically.
// Waits at most `timeout_s` seconds for Chromium.
Status HtmlToPdf(const std::string& html, const std::string& pdf_path, int timeout_s = 120);

// True if `path` ends in ".pdf" (case-insensitive).
bool IsPdfPath(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_PDF_HTML_TO_PDF_H_
