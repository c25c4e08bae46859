// The one HTML page shell: every HTML page aiprof writes (report, diagnose /
// suggest / validate / card / cluster pages, flame, timeline and topology
// views) goes through it, so every page carries the same
// Content-Security-Policy:
//
//   default-src 'none'; script-src 'sha256-…' …; style-src 'unsafe-inline';
//   img-src data:; base-uri 'none'; form-action 'none'
//
// - Scripts: only the page's own inline <script> elements, each allowed by
//   the SHA-256 of its text (no 'unsafe-inline', so neither an injected
//   <script> nor an inline event handler runs). JSON data blocks
//   (<script type="application/json">) are never executed and need no hash.
// - Styles: 'unsafe-inline'. The views and charts set style attributes in
//   markup (legend swatches, bar widths, SVG fills), which hashes cannot
//   allow; CSS cannot run script, and every trace string is escaped anyway.
// - Nothing is fetched: no connect-src, font-src, frame-src or media-src;
//   images only as data: URLs.
// - Frames: an <iframe srcdoc> inherits the parent's policy, so a page that
//   embeds another aiprof page lists it in `embedded_pages`; the parent's
//   script-src then also allows the embedded page's script hashes (read
//   back from the CSP meta that this shell wrote at the top of that page).
#ifndef AIPROF_SRC_RENDER_PAGE_H_
#define AIPROF_SRC_RENDER_PAGE_H_

#include <string>
#include <string_view>
#include <vector>

namespace aiprof::render {

struct PageSpec {
  std::string_view title;                  // plain text (escaped here)
  std::string_view generator;              // e.g. "aiprof view --flame" ("" = none)
  std::vector<std::string_view> styles;    // CSS, each one inline <style>
  std::vector<std::string_view> scripts;   // JavaScript, inline at the end of <body>, in order
  std::vector<std::string_view> embedded_pages;  // aiprof pages shown in <iframe srcdoc>
};

// "sha256-<base64>" of `text`, as CSP writes a hash source.
std::string CspHash(std::string_view text);
// The policy of a page (the content of its CSP meta).
std::string ContentSecurityPolicy(const PageSpec& page);
// The script hash sources a page written by this shell allows (read from its
// CSP meta, which the shell writes before any other content); empty if none.
std::vector<std::string> ScriptHashesOfPage(std::string_view html);

// The page up to and including <body> (doctype, charset, CSP, title,
// generator, viewport, styles).
std::string PageHead(const PageSpec& page);
// The page's scripts and the closing tags.
std::string PageTail(const PageSpec& page);
// A whole page: head, `body` (HTML the caller escaped), tail.
std::string RenderPage(const PageSpec& page, std::string_view body);

}  // namespace aiprof::render

#endif  // AIPROF_SRC_RENDER_PAGE_H_
