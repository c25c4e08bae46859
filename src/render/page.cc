#include "src/render/page.h"

#include <nettle/base64.h>
#include <nettle/sha2.h>

#include "src/base/ascii.h"
#include "src/base/check.h"
#include "src/render/escape.h"

namespace aiprof::render {
namespace {

constexpr std::string_view kCspMetaStart = "<meta http-equiv=\"Content-Security-Policy\" content=\"";

// A script or style text must not end its own element early: they are ours
// (embedded sources), never trace content, so this is an invariant.
void CheckNoClosingTag(std::string_view text, std::string_view tag) {
  std::string close = "</" + std::string(tag);
  AIPROF_CHECK(!ContainsIgnoreCase(text, close));
}

}  // namespace

std::string CspHash(std::string_view text) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, text.size(), reinterpret_cast<const uint8_t*>(text.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
  char b64[BASE64_ENCODE_RAW_LENGTH(SHA256_DIGEST_SIZE)];
  base64_encode_raw(b64, SHA256_DIGEST_SIZE, digest);
  return "sha256-" + std::string(b64, sizeof b64);
}

std::vector<std::string> ScriptHashesOfPage(std::string_view html) {
  std::vector<std::string> hashes;
  size_t at = html.find(kCspMetaStart);
  // The shell writes the meta within the first few hundred bytes, before any
  // content that a trace could influence.
  if (at == std::string_view::npos || at > 512) return hashes;
  std::string_view rest = html.substr(at + kCspMetaStart.size());
  // The meta's content is attribute-escaped: a quote is &#39;.
  std::string policy(rest.substr(0, rest.find('"')));
  for (size_t q = policy.find("&#39;"); q != std::string::npos; q = policy.find("&#39;", q + 1)) {
    policy.replace(q, 5, "'");
  }
  size_t script = policy.find("script-src ");
  if (script == std::string::npos) return hashes;
  std::string_view sources = std::string_view(policy).substr(script + 11);
  sources = sources.substr(0, sources.find(';'));
  while (!sources.empty()) {
    size_t space = sources.find(' ');
    std::string_view token = sources.substr(0, space);
    if (token.size() > 9 && token.starts_with("'sha256-") && token.ends_with("'")) {
      hashes.emplace_back(token.substr(1, token.size() - 2));
    }
    sources = space == std::string_view::npos ? std::string_view() : sources.substr(space + 1);
  }
  return hashes;
}

std::string ContentSecurityPolicy(const PageSpec& page) {
  std::vector<std::string> hashes;
  auto add = [&](std::string hash) {
    for (const std::string& h : hashes) {
      if (h == hash) return;
    }
    hashes.push_back(std::move(hash));
  };
  for (std::string_view script : page.scripts) add(CspHash(script));
  for (std::string_view embedded : page.embedded_pages) {
    for (std::string& h : ScriptHashesOfPage(embedded)) add(std::move(h));
  }
  std::string policy = "default-src 'none'; script-src";
  if (hashes.empty()) policy += " 'none'";
  for (const std::string& h : hashes) policy += " '" + h + "'";
  policy += "; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
  return policy;
}

std::string PageHead(const PageSpec& page) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out.append(kCspMetaStart).append(HtmlEscape(ContentSecurityPolicy(page))).append("\">\n");
  out.append("<title>").append(HtmlEscape(page.title)).append("</title>\n");
  if (!page.generator.empty()) {
    out.append("<meta name=\"generator\" content=\"").append(HtmlEscape(page.generator)).append("\">\n");
  }
  out.append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
  for (std::string_view style : page.styles) {
    CheckNoClosingTag(style, "style");
    out.append("<style>").append(style).append("</style>\n");
  }
  out.append("</head><body>\n");
  return out;
}

std::string PageTail(const PageSpec& page) {
  std::string out;
  for (std::string_view script : page.scripts) {
    CheckNoClosingTag(script, "script");
    out.append("<script>").append(script).append("</script>\n");
  }
  out.append("</body></html>\n");
  return out;
}

std::string RenderPage(const PageSpec& page, std::string_view body) {
  std::string out = PageHead(page);
  out.append(body);
  out.append(PageTail(page));
  return out;
}

}  // namespace aiprof::render
