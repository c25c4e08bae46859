#include "src/serve/serve.h"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <variant>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/trace_identity.h"
#include "src/analysis/window/window_analysis.h"
#include "src/base/atomic_file.h"
#include "src/base/http_server.h"
#include "src/base/mapped_inputs.h"
#include "src/importers/common/import_confinement.h"
#include "src/model/native_file.h"
#include "src/query/query_engine.h"
#include "src/query/query_format.h"
#include "src/render/escape.h"
#include "src/render/page.h"
#include "src/render/renderers.h"
#include "src/render/units.h"
#include "src/report/page/report_data.h"
#include "src/report/validation/validation_report.h"
#include "src/serve/compare_timeline.h"
#include "src/serve/indexer.h"
#include "src/serve/run_document.h"
#include "src/serve/run_index.h"
#include "src/serve/serve_log.h"
#include "src/serve/timeline_tiles.h"
#include "src/session/prediction_check.h"
#include "src/session/session.h"
#include "src/session/validate_runs.h"
#include "src/view/view_registry.h"
#include "src/view/view_sink.h"

namespace aiprof {
namespace fs = std::filesystem;

namespace {

// Limits of a query run from a page or the API (docs/serve.md).
inline constexpr size_t kQueryMaxRows = 1000;
inline constexpr int64_t kQueryMaxMemoryBytes = int64_t{512} << 20;
inline constexpr size_t kQueryMaxResultBytes = size_t{64} << 20;  // the rows held, outside SQLite's heap
inline constexpr size_t kMaxNameBytes = 200;
inline constexpr size_t kMaxSmallBodyBytes = 4096;

constexpr std::string_view kCss = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#fafbfc}
nav{background:#1d2330;padding:8px 16px}nav a{color:#fff;margin-right:16px;text-decoration:none;font-weight:600}
main{padding:12px 20px;max-width:1400px}
table{border-collapse:collapse;margin:8px 0}div.table{overflow-x:auto;max-width:100%}td,th{border-bottom:1px solid #dde;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef0f4}.failed{color:#a40000}.queued,.converting{color:#7a5b00}.ready{color:#0a6b2a}
.box{margin:8px 0;padding:8px;background:#fff;border:1px solid #dde;display:inline-block}
input,textarea{font:inherit;margin-right:6px}textarea{width:60em;height:5em;display:block;margin-bottom:6px}
.err{white-space:pre-wrap;color:#a40000}.note{color:#555}
dl.kv{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 16px}dl.kv dd{margin:0;min-width:0;overflow-wrap:anywhere}
.finding{border-left:4px solid #889;padding:4px 10px;margin:8px 0;background:#fff}.finding.high{border-color:#c00}
.finding.medium{border-color:#e90}.sev{font-size:11px;margin-right:6px;color:#666}td.n{text-align:right}
)css";

// Navigation without forms (the CSP has form-action 'none'): a box with
// data-go="/path" sends its data-param inputs as the query string.
constexpr std::string_view kJs = R"js(
document.querySelectorAll('[data-go]').forEach(function (box) {
  function go() {
    var p = new URLSearchParams();
    box.querySelectorAll('[data-param]').forEach(function (i) {
      if (i.value) p.set(i.getAttribute('data-param'), i.value);
    });
    location.href = box.getAttribute('data-go') + '?' + p.toString();
  }
  box.querySelectorAll('button').forEach(function (b) { b.addEventListener('click', go); });
  box.querySelectorAll('input').forEach(function (i) {
    i.addEventListener('keydown', function (e) { if (e.key === 'Enter') go(); });
  });
});
)js";

// Zoom and pan on the run's timeline page and the compare page's aligned
// timeline. Every view is a new page whose drawing the server made from one
// tile (the CSP lets a page fetch nothing, and the browser never holds more
// than the tile it shows). The navigation element (data-zoom-base, ending
// in '?' or '&') says the window [data-start, data-end) of [0, data-span)
// drawn data-px pixels wide; on the drawings (svg#timeline, #timeline-a,
// #timeline-b; 220 px of labels first) a click zooms in 4x around that
// time, a drag pans by the distance dragged (the drawing follows the mouse
// meanwhile); keys: arrows left / right pan by half the window, + and -
// zoom 2x around its middle, 0 shows the whole span.
constexpr std::string_view kZoomJs = R"js(
(function () {
  var nav = document.querySelector('[data-zoom-base]');
  if (!nav) return;
  var d = nav.dataset;
  var start = Number(d.start), end = Number(d.end), span = Number(d.span), px = Number(d.px);
  var perPx = (end - start) / px;
  function go(a, len) {
    len = Math.max(1, Math.min(span, Math.round(len)));
    a = Math.max(0, Math.min(span - len, Math.round(a)));
    var url = d.zoomBase + 'start=' + a + '&end=' + (a + len);
    if (a !== start || a + len !== end) location.href = url;
  }
  function zoomAround(t, factor) { var len = (end - start) / factor; go(t - len / 2, len); }
  var drag = null;
  document.querySelectorAll('svg#timeline, svg#timeline-a, svg#timeline-b').forEach(function (svg) {
    svg.style.cursor = 'grab';
    svg.addEventListener('mousedown', function (e) {
      if (e.button !== 0) return;
      drag = {svg: svg, x: e.clientX, dx: 0};
      e.preventDefault();
    });
  });
  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    drag.dx = e.clientX - drag.x;
    if (Math.abs(drag.dx) >= 5) drag.svg.style.transform = 'translateX(' + drag.dx + 'px)';
  });
  window.addEventListener('mouseup', function (e) {
    if (!drag) return;
    var g = drag;
    drag = null;
    if (Math.abs(g.dx) >= 5) { go(start - g.dx * perPx, end - start); return; }
    var x = e.clientX - g.svg.getBoundingClientRect().left - 220;
    if (x >= 0) zoomAround(start + x * perPx, 4);
  });
  document.addEventListener('keydown', function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || e.ctrlKey || e.metaKey || e.altKey) return;
    var len = end - start, mid = (start + end) / 2;
    if (e.key === 'ArrowLeft') go(start - len / 2, len);
    else if (e.key === 'ArrowRight') go(start + len / 2, len);
    else if (e.key === '+' || e.key === '=') zoomAround(mid, 2);
    else if (e.key === '-' || e.key === '_') zoomAround(mid, 0.5);
    else if (e.key === '0') go(0, span);
    else return;
    e.preventDefault();
  });
})();
)js";

HttpResponse Html(int status, const std::string& title, const std::string& body, std::string_view extra_script = {}) {
  render::PageSpec page;
  page.title = title;
  page.generator = "aiprof serve";
  page.styles = {kCss};
  page.scripts = {kJs};
  if (!extra_script.empty()) page.scripts.push_back(extra_script);
  HttpResponse r;
  r.status = status;
  r.content_type = "text/html; charset=utf-8";
  r.body = render::RenderPage(page, "<nav><a href=\"/\">Runs</a><a href=\"/compare\">Compare</a><a href=\"/history\">History</a><a href=\"/cards\">Cards</a></nav><main>" + body +
                                        "</main>");
  // The policy is the page shell's CSP meta, first in <head> (a header with
  // the same policy would only report each violation twice). nosniff: the
  // HTTP server's, on every answer.
  return r;
}

HttpResponse Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  if (r.body.empty() || r.body.back() != '\n') r.body += '\n';
  return r;
}

// On every answer: no page of this server may be framed by another site
// (clickjacking; frame-ancestors works only in a header, the pages' own
// policy is their CSP meta). No answer is sniffed as another type: the HTTP
// server says nosniff on every answer, its own refusals included.
void AddPageHeaders(HttpResponse* r) {
  r->headers.emplace_back("X-Frame-Options", "DENY");
  r->headers.emplace_back("Content-Security-Policy", "frame-ancestors 'none'");
}

// Names, services and tags hold no control characters (a NUL-led run name
// was stored, found by review).
bool HasControl(std::string_view v) {
  return std::any_of(v.begin(), v.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

HttpResponse JsonError(int status, const std::string& message) {
  return Json(status, "{\"error\": " + JsonString(message) + "}");
}

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    if (slash > pos) out.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return out;
}

std::optional<int64_t> ParseId(const std::string& s) {
  if (s.empty() || s.size() > 15 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(s);
}

// An uploaded file's name: letters, digits, '.', '_' and '-' (others become
// '_'), no leading dot, at most 100 bytes: it never names another folder.
std::string SafeFileName(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 100)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  while (!out.empty() && out[0] == '.') out[0] = '_';
  return out.empty() ? "upload" : out;
}

// An upload's body, written to a hidden file in the uploads folder as it
// arrives (on the HTTP server's thread), so the server never holds it
// whole. Kept only when the handler renames it into place (Keep); a refused,
// failed or broken-off upload's file is removed with the sink.
// `reserved` counts the bytes that admitted uploads have yet to write:
// the storage limit's check adds them to what the folders hold, so uploads
// admitted at once cannot each pass it (20 concurrent 1 MB uploads under
// --max-storage-mb 1 were all taken, 20 MB stored: trial_limits).
class UploadSink : public BodySink {
 public:
  static StatusOr<std::shared_ptr<UploadSink>> Create(const std::string& dir, const std::string& hidden_name,
                                                      std::shared_ptr<std::atomic<uint64_t>> reserved,
                                                      uint64_t declared) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto sink = std::shared_ptr<UploadSink>(new UploadSink((fs::path(dir) / hidden_name).string()));
    sink->fd_ = ::open(sink->path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);  // data, never executable
    if (sink->fd_ < 0) return ErrStatus("cannot store the upload: " + std::string(std::strerror(errno)));
    sink->reserved_ = std::move(reserved);
    sink->left_ = declared;
    *sink->reserved_ += declared;
    return sink;
  }
  ~UploadSink() override {
    Release(left_);
    if (fd_ >= 0) ::close(fd_);
    if (!kept_) ::unlink(path_.c_str());
  }
  Status Write(std::string_view bytes) override {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ErrStatus("cannot store the upload: " + std::string(std::strerror(errno)));
      bytes.remove_prefix(static_cast<size_t>(n));
      Release(static_cast<uint64_t>(n));  // now in the file, which the folders' size counts
    }
    return OkStatus();
  }
  // Closes the file and renames it to `final_path`; the file is then kept.
  Status Keep(const std::string& final_path) {
    Release(left_);
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) return ErrStatus("cannot store the upload: " + std::string(std::strerror(errno)));
    if (::rename(path_.c_str(), final_path.c_str()) != 0) {
      return ErrStatus("cannot store the upload: " + std::string(std::strerror(errno)));
    }
    kept_ = true;
    return OkStatus();
  }

 private:
  explicit UploadSink(std::string path) : path_(std::move(path)) {}
  void Release(uint64_t bytes) {
    bytes = std::min(bytes, left_);
    left_ -= bytes;
    if (reserved_ && bytes) *reserved_ -= bytes;
  }
  std::string path_;
  int fd_ = -1;
  bool kept_ = false;
  std::shared_ptr<std::atomic<uint64_t>> reserved_;
  uint64_t left_ = 0;  // of this upload's reservation
};

// Removes the hidden files of uploads that broke off when a server died
// (untouched for 10 minutes: a live upload writes at least every 120 s, its
// body deadline). Another server on the same logdir keeps its live ones.
void RemoveStaleUploadParts(const std::string& dir) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(".upload-", 0) != 0 || name.size() < 5 || name.substr(name.size() - 5) != ".part") continue;
    std::error_code e;
    const auto mtime = fs::last_write_time(it->path(), e);
    if (!e && now - mtime > std::chrono::minutes(10)) fs::remove(it->path(), e);
  }
}

std::string RunJson(const RunRow& r) {
  return "{\"id\": " + std::to_string(r.id) + ", \"path\": " + JsonString(r.path) +
         ", \"state\": " + JsonString(RunStateName(r.state)) + ", \"error\": " + JsonString(r.error) +
         "}";
}


std::string Fmt(double v, render::Unit u) { return render::FormatQuantity(v, u); }

// The relative latency change a stored validation measured (its report's
// "latency" metric), if it has one.
std::optional<double> LatencyChange(const std::string& report_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::array metrics;
  if (parser.parse(report_json).get(doc) != simdjson::SUCCESS || doc["metrics"].get_array().get(metrics)) {
    return std::nullopt;
  }
  for (simdjson::dom::element m : metrics) {
    std::string_view name;
    double change = 0;
    if (m["metric"].get_string().get(name) == simdjson::SUCCESS && name == "latency" &&
        m["change_rel"].get_double().get(change) == simdjson::SUCCESS) {
      return change;
    }
  }
  return std::nullopt;
}

// Files and folders an older server made under the usual umask (0644,
// 0755): made 0640 / 0750 at start, as new ones are (D3 of the serve trial).
void RestrictServerFiles(const std::string& cache_dir, const std::string& state_dir, const std::string& db_path,
                         const std::string& uploads_dir) {
  auto restrict = [](const fs::path& p, mode_t keep) {
    struct stat st{};
    if (::lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return;
    if ((st.st_mode & 07777 & ~keep) != 0) ::chmod(p.c_str(), st.st_mode & 07777 & keep);
  };
  for (const std::string& dir : {cache_dir, state_dir, uploads_dir}) {
    if (dir.empty()) continue;
    restrict(dir, 0750);
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) restrict(it->path(), 0640);
    }
  }
  for (const char* end : {"", "-wal", "-shm"}) restrict(db_path + end, 0640);
}

}  // namespace

StatusOr<std::vector<ServeToken>> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return ErrStatus("--token-file " + path + ": cannot read it");
  // Secrets: as ssh does for its keys, say so when others may read them.
  if (struct stat st{}; ::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    std::fprintf(stderr, "aiprof serve: warning: --token-file %s is open to other users (mode %s): chmod 600 it\n",
                 path.c_str(), mode);
  }
  std::vector<ServeToken> out;
  std::vector<int> line_of;  // each token's line
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const size_t sp = line.find_first_of(" \t", start);
    const std::string where = "--token-file " + path + ":" + std::to_string(n);
    if (sp == std::string::npos) return ErrStatus(where + ": expected \"ROLE TOKEN\" (ROLE read or upload)");
    const std::string role = line.substr(start, sp - start);
    const std::string token = line.substr(line.find_first_not_of(" \t", sp));
    if (role != "read" && role != "upload") return ErrStatus(where + ": role \"" + role + "\": expected read or upload");
    if (token.size() < kMinTokenBytes || token.find_first_of(" \t") != std::string::npos) {
      return ErrStatus(where + ": a token is one word of at least " + std::to_string(kMinTokenBytes) + " characters");
    }
    const TokenRole r = role == "upload" ? TokenRole::kUpload : TokenRole::kRead;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].token == token && out[i].role != r) {
        return ErrStatus(where + ": this token is also on line " + std::to_string(line_of[i]) +
                         " with another role: give each token one role");
      }
    }
    out.push_back({r, token});
    line_of.push_back(n);
  }
  if (out.empty()) return ErrStatus("--token-file " + path + ": no token in it");
  return out;
}

// A run opened for pages: its trace (mapped from the native file), its
// session and the report data built from it, once.
struct OpenRun {
  RunRow row;
  std::mutex mu;  // one page at a time works on the session
  std::unique_ptr<AnalysisSession> session;
  std::optional<StatusOr<ReportData>> report;
  std::optional<TileIndex> tiles;
};

struct ServeServer::Impl {
  ServeOptions options;
  std::string host, logdir, cache_dir, db_path, uploads_dir, baselines_db;
  int port = 0;
  std::vector<ServeToken> tokens;
  std::unique_ptr<RunIndex> index;
  std::unique_ptr<Indexer> indexer;
  std::unique_ptr<HttpServer> http;
  std::atomic<uint64_t> upload_seq{0};
  // Bytes the uploads in flight have yet to write (UploadSink).
  std::shared_ptr<std::atomic<uint64_t>> upload_reserved = std::make_shared<std::atomic<uint64_t>>(0);

  // Workers and their queue of requests (at most kServeQueueLimit waiting).
  struct Pool {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool stopping = false;
    std::vector<std::thread> workers;

    void Start(int threads) {
      for (int i = 0; i < std::max(1, threads); ++i) workers.emplace_back([this] { Work(); });
    }
    // False when the queue is full.
    bool Push(std::function<void()> job) {
      std::lock_guard<std::mutex> lock(mu);
      if (queue.size() >= kServeQueueLimit) return false;
      queue.push_back(std::move(job));
      cv.notify_one();
      return true;
    }
    // Drops what is queued (no one would get the answers: the HTTP server
    // is gone), or with `drain` runs it (queries end at once when stopping),
    // lets the running jobs end, and joins.
    void Stop(bool drain = false) {
      {
        std::lock_guard<std::mutex> lock(mu);
        stopping = true;
        if (!drain) queue.clear();
      }
      cv.notify_all();
      for (std::thread& t : workers) t.join();
      workers.clear();
    }
    void Work() {
      std::unique_lock<std::mutex> lock(mu);
      for (;;) {
        cv.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        std::function<void()> job = std::move(queue.front());
        queue.pop_front();
        lock.unlock();
        job();
        lock.lock();
      }
    }
  };
  // Pages, the API and uploads; SQL queries (up to --query-timeout each) on
  // their own workers, so a long query never holds a page's worker.
  Pool pages, queries;
  // Set when the server stops: running queries end at their next progress
  // check (QueryLimits::cancel) instead of at their time limit.
  std::atomic<bool> stopping_queries{false};
  // Each running query's cancel flag: its request's `gone` (set by the HTTP
  // server when the client leaves), which the stop sets too, so one flag
  // (QueryLimits::cancel) stops a query for either reason.
  std::mutex running_mu;
  std::vector<std::shared_ptr<std::atomic<bool>>> running_queries;
  // Queries not run, or stopped, because their client had gone (the log
  // says each).
  std::atomic<uint64_t> gone_queries{0};

  // Recently opened runs, most recent first.
  std::mutex cache_mu;
  std::list<std::shared_ptr<OpenRun>> open_runs;

  ~Impl() {
    // Running and queued queries end at once, answered 503 ("the server is
    // stopping") while the listener still sends answers; then no new requests.
    {
      std::lock_guard<std::mutex> lock(running_mu);
      stopping_queries = true;
      for (const auto& cancel : running_queries) cancel->store(true);
    }
    queries.Stop(/*drain=*/true);
    http.reset();
    pages.Stop();
    indexer.reset();
  }

  std::optional<TokenRole> RoleOf(const HttpRequest& r) const {
    const std::string presented = BearerToken(r.authorization);
    std::optional<TokenRole> role;
    for (const ServeToken& t : tokens) {
      if (SameSecret(presented, t.token) && (!role || t.role == TokenRole::kUpload)) role = t.role;
    }
    return role;
  }

  // The methods `path` answers, for the Allow header (RFC 9110 15.5.6).
  static std::string AllowedMethods(const std::string& path) {
    const std::vector<std::string> parts = Split(path);
    const bool run = parts.size() >= 3 && parts[0] == "api" && parts[1] == "runs" && ParseId(parts[2]);
    if (path == "/api/runs") return "GET, HEAD, POST";
    if (path == "/api/rescan") return "POST";
    if (run && parts.size() == 4 && parts[3] == "name") return "POST";
    if (run && parts.size() == 3) return "GET, HEAD, DELETE";
    return "GET, HEAD";
  }

  // Bytes in the uploads folder and the cache (the storage limit's count).
  uint64_t StorageUsed() const {
    uint64_t used = 0;
    for (const std::string& dir : {uploads_dir, cache_dir}) {
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec)) used += it->file_size(ec);
      }
    }
    return used;
  }

  std::optional<HttpResponse> Admit(const HttpRequest& head, size_t* max_body) const {
    // The API answers its refusals in JSON, as its other errors; pages in text.
    const bool api = head.path.starts_with("/api/");
    auto refuse = [api](int status, const std::string& why) {
      return api ? JsonError(status, why) : TextResponse(status, why + "\n");
    };
    const std::string allow = AllowedMethods(head.path);
    if (!MethodAllowed(head.method, allow)) {
      return MethodNotAllowed(allow, refuse(405, "use " + allow + " on " + head.path.substr(0, 200)));
    }
    const bool writes = head.method == "POST" || head.method == "DELETE";
    if (std::optional<HttpResponse> refused = RefuseFromOtherSites(head, !tokens.empty())) return refused;
    if (!tokens.empty()) {
      const std::optional<TokenRole> role = RoleOf(head);
      if (!role) return refuse(401, "needs Authorization: Bearer <a token of the --token-file>");
      if (writes && *role != TokenRole::kUpload) return refuse(403, "this token may only read");
    }
    if (writes) {
      const bool upload = head.method == "POST" && head.path == "/api/runs";
      *max_body = upload ? options.max_upload_bytes : kMaxSmallBodyBytes;
      if (upload && options.max_storage_bytes > 0) {
        // What the folders hold and what the uploads admitted before this
        // one have yet to write (each its Content-Length, a chunked one the
        // upload limit): only the one upload admitted under the limit may pass it.
        const uint64_t arriving = upload_reserved->load();
        if (const uint64_t used = StorageUsed() + arriving; used >= options.max_storage_bytes) {
          // One decimal: whole MiB said "hold 1 MiB, the limit is 1 MiB" for 1.5 MiB held.
          char held[32], coming[32];
          std::snprintf(held, sizeof held, "%.1f", static_cast<double>(used - arriving) / (1 << 20));
          std::snprintf(coming, sizeof coming, "%.1f", static_cast<double>(arriving) / (1 << 20));
          return JsonError(507, "storage full: the uploads and the cache hold " + std::string(held) + " MiB" +
                                    (arriving ? " and uploads still arriving add " + std::string(coming) + " MiB"
                                              : std::string()) +
                                    ", the limit is " + std::to_string(options.max_storage_bytes >> 20) +
                                    " MiB (--max-storage-mb): delete runs (DELETE /api/runs/ID) or raise the limit");
        }
      }
      if (upload && head.content_length && *head.content_length > options.max_upload_bytes) {
        // In the API's words, naming the flag (the server's own 413 says only
        // "body over N bytes"; it still stops a chunked upload at the limit).
        char size[32];
        std::snprintf(size, sizeof size, "%.1f", static_cast<double>(*head.content_length) / (1 << 20));
        return JsonError(413, "the upload is " + std::string(size) + " MiB, over this server's limit of " +
                                  std::to_string(options.max_upload_bytes >> 20) +
                                  " MiB (aiprof serve --max-upload-mb)");
      }
      if (upload) {  // refused from the headers, before any of the body travels
        const std::string given = QueryParam(head.query, "name").value_or("upload.json");
        const std::string service = QueryParam(head.query, "service").value_or("");
        const std::string tag = QueryParam(head.query, "tag").value_or("");
        if (given.empty() || given.size() > kMaxNameBytes || service.size() > kMaxNameBytes ||
            tag.size() > kMaxNameBytes || HasControl(given) || HasControl(service) || HasControl(tag)) {
          return JsonError(400, "name (1 to " + std::to_string(kMaxNameBytes) + " bytes), service and tag (at most " +
                                    std::to_string(kMaxNameBytes) + " bytes each), without control characters");
        }
      }
    }
    return std::nullopt;
  }

  // An upload's body goes to a hidden file in the uploads folder as it
  // arrives; other bodies (at most kMaxSmallBodyBytes) stay in memory.
  StatusOr<std::shared_ptr<BodySink>> OpenBodySink(const HttpRequest& head) {
    if (head.method != "POST" || head.path != "/api/runs") return std::shared_ptr<BodySink>();
    const std::string hidden = ".upload-" + std::to_string(NowUnixMs()) + "-" + std::to_string(getpid()) + "-" +
                               std::to_string(++upload_seq) + ".part";
    ASSIGN_OR_RETURN(std::shared_ptr<UploadSink> sink,
                     UploadSink::Create(uploads_dir, hidden, upload_reserved,
                                        head.content_length.value_or(options.max_upload_bytes)));
    return std::shared_ptr<BodySink>(std::move(sink));
  }

  // GET /runs/ID/query and /api/runs/ID/query with SQL to run (the form
  // alone is a page like the others; Route decides what is valid).
  static bool IsQuery(const HttpRequest& r) {
    const std::vector<std::string> p = Split(r.path);
    const size_t b = !p.empty() && p[0] == "api" ? 1 : 0;
    return r.method != "POST" && p.size() == b + 3 && p[b] == "runs" && p[b + 2] == "query" &&
           !QueryParam(r.query, "sql").value_or("").empty();
  }

  void Handle(HttpRequest request, HttpServer::Responder respond) {
    Pool& pool = IsQuery(request) ? queries : pages;
    // The responder is copied into the job: when the queue is full the job
    // is dropped and the copy answers.
    HttpServer::Responder busy = respond;
    const bool queued = pool.Push([this, request = std::move(request), respond = std::move(respond)]() mutable {
      HttpResponse r;
      try {
        r = Route(request);
      } catch (const std::exception& e) {
        r = TextResponse(500, std::string("internal error: ") + e.what() + "\n");
      }
      AddPageHeaders(&r);
      respond(std::move(r));
    });
    if (!queued) busy(TextResponse(503, "busy: " + std::to_string(kServeQueueLimit) + " requests are waiting\n"));
  }

  HttpResponse Route(const HttpRequest& req) {
    const std::vector<std::string> p = Split(req.path);
    const bool api = !p.empty() && p[0] == "api";
    const size_t b = api ? 1 : 0;  // first segment after /api
    const size_t n = p.size() - b;
    auto param = [&](const char* key) { return QueryParam(req.query, key).value_or(""); };
    if (req.method == "DELETE") return DeleteRun(ParseId(p[2]).value_or(0));
    if (req.method == "POST") {
      if (req.path == "/api/runs") return Upload(req);
      if (req.path == "/api/rescan") {
        indexer->RequestScan();
        return Json(202, "{\"scan\": \"requested\"}");
      }
      return Rename(ParseId(p[2]).value_or(0), param("name"), param("tag"));
    }
    if (n == 0) return api ? Json(200, "{\"runs\": \"/api/runs\", \"compare\": \"/api/compare?a=ID&b=ID\"}") : RunsPage(param("q"), param("group"), false);
    if (p[b] == "runs" && n == 1) return RunsPage(param("q"), param("group"), api);
    if (p[b] == "compare" && n == 1) return Compare(param("a"), param("b"), param("step"), param("start"), param("end"), param("fix"), api);
    if (api && p[b] == "compare" && n == 2 && p[b + 1] == "timeline") {
      return CompareTimeline(param("a"), param("b"), param("step"), param("start"), param("end"), param("width"), true);
    }
    if (p[b] == "history" && n == 1) return History(param("service"), api);
    if (p[b] == "cards" && n == 1) return Cards(api);
    if (p[b] == "runs" && (n == 2 || n == 3)) {
      const std::optional<int64_t> id = ParseId(p[b + 1]);
      if (!id) return NotFound(api);
      if (n == 2) return RunPage(*id, api);
      if (p[b + 2] == "query") return Query(*id, param("sql"), api, req.gone);
      if (p[b + 2] == "report" && !api) return Report(*id);
      if (!api && (p[b + 2] == "flame" || p[b + 2] == "topology")) return View(*id, p[b + 2]);
      if (p[b + 2] == "timeline") return Timeline(*id, param("start"), param("end"), param("width"), api);
    }
    return NotFound(api);
  }

  HttpResponse NotFound(bool api) {
    if (api) return JsonError(404, "not found (docs/serve.md lists the API)");
    return Html(404, "Not found", "<h1>Not found</h1><p><a href=\"/\">All runs</a></p>");
  }

  // A failure of the server itself (its index, cache or knowledge
  // database): the message, which names the server's own files, goes to
  // its log; the client is told only that it happened.
  HttpResponse ServerError(bool api, const std::string& message) {
    ServeLog("error: " + message);
    return Failure(api, 500, "internal error: the server could not complete this request (its log says why)");
  }

  HttpResponse Failure(bool api, int status, const std::string& message) {
    if (api) return JsonError(status, message);
    return Html(status, "Error", "<h1>Error</h1><p class=\"err\">" + Esc(message) + "</p>");
  }

  // The run with `id`, or the response saying why it cannot be shown.
  std::variant<RunRow, HttpResponse> ReadyRun(int64_t id, bool api) {
    StatusOr<std::optional<RunRow>> row = index->Get(id);
    if (!row.ok()) return ServerError(api, row.status().message());
    if (!row->has_value()) return NotFound(api);
    RunRow r = std::move(**row);
    if (r.state == RunState::kReady) return r;
    const int status = r.state == RunState::kFailed ? 409 : 503;
    if (api) return Json(status, RunJson(r));
    std::string body = "<h1>" + Esc(r.name) + "</h1><p>State: <span class=\"" + RunStateName(r.state) + "\">" +
                       RunStateName(r.state) + "</span></p>";
    if (r.state == RunState::kFailed) {
      body += "<p>The import failed:</p><p class=\"err\" id=\"run-error\">" + Esc(r.error) + "</p>";
    } else {
      body += "<p class=\"note\">Being converted; reload in a moment.</p>";
    }
    return Html(200, r.name, body);  // the page itself is fine: it says the run's state
  }

  // The open run for `row` (LRU of kServeSessionCache), opening its native file.
  StatusOr<std::shared_ptr<OpenRun>> Open(const RunRow& row) {
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      for (auto it = open_runs.begin(); it != open_runs.end(); ++it) {
        if ((*it)->row.id == row.id && (*it)->row.indexed_unix_ms == row.indexed_unix_ms) {
          open_runs.splice(open_runs.begin(), open_runs, it);
          return open_runs.front();
        }
      }
    }
    const std::string cache = (fs::path(cache_dir) / row.cache).string();
    if (row.cache.empty() || row.cache.find('/') != std::string::npos) return ErrStatus("run " + std::to_string(row.id) + ": no cache file");
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ReadNativeFile(cache));
    auto run = std::make_shared<OpenRun>();
    run->row = row;
    SessionOptions so;
    so.input = row.path;
    so.db = baselines_db;  // suggestions carry the knowledge cards' measured gains
    run->session = std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(std::move(trace)), so);
    std::lock_guard<std::mutex> lock(cache_mu);
    open_runs.remove_if([&](const std::shared_ptr<OpenRun>& o) { return o->row.id == row.id; });
    open_runs.push_front(run);
    while (open_runs.size() > kServeSessionCache) open_runs.pop_back();
    return run;
  }

  // The run's report data (built once per open run); `run->mu` held by the caller.
  static StatusOr<const ReportData*> ReportOf(OpenRun* run) {
    if (!run->report) {
      ReportInputs in;
      in.session = run->session.get();
      run->report = BuildReport(in);
    }
    if (!run->report->ok()) return run->report->status();
    return &run->report->value();
  }

  // The runs list: searchable (?q=), grouped by service (default), tag or
  // date (?group=); the API's list is flat unless ?group= is given.
  HttpResponse RunsPage(const std::string& search, const std::string& group_text, bool api) {
    const std::optional<RunGrouping> grouping =
        ParseRunGrouping(group_text.empty() ? (api ? "none" : "service") : group_text);
    if (!grouping) return Failure(api, 400, "group is one of service, tag, date, none");
    StatusOr<std::vector<RunRow>> runs = index->List(search, kServeListLimit);
    if (!runs.ok()) return ServerError(api, runs.status().message());
    if (api) return Json(200, render::RenderJson(RunsToDocument(*runs, search, *grouping)));
    std::string body = "<h1>Runs</h1><div class=\"box\" data-go=\"/\" id=\"search\"><input data-param=\"q\" value=\"" +
                       Esc(search) + "\" placeholder=\"search name, file, service, tag, finding\" size=\"40\">"
                       "<input type=\"hidden\" data-param=\"group\" value=\"" + Esc(group_text) + "\"><button>Search</button></div> "
                       "<div class=\"box\" data-go=\"/compare\" id=\"compare\">Compare run <input data-param=\"a\" size=\"4\"> "
                       "with run <input data-param=\"b\" size=\"4\"><button>Compare</button></div><p id=\"grouping\">Group by:";
    const std::string q = search.empty() ? "" : "&amp;q=" + Esc(PercentEncode(search));
    for (const char* g : {"service", "tag", "date", "none"}) {
      body += ParseRunGrouping(g) == grouping ? std::string(" <b>") + g + "</b>"
                                              : std::string(" <a href=\"/?group=") + g + q + "\">" + g + "</a>";
    }
    body += "</p><div id=\"runs\">";
    const char* label = *grouping == RunGrouping::kService ? "Service" : *grouping == RunGrouping::kTag ? "Tag" : "Date";
    const char* none = *grouping == RunGrouping::kService ? "(no service)" : "(no tag)";
    for (const RunGroup& group : GroupRuns(*runs, *grouping)) {
      if (*grouping != RunGrouping::kNone) {
        body += "<h2 class=\"group\" data-group=\"" + Esc(group.key) + "\">" + label + ": " +
                (group.key.empty() ? std::string(none) : Esc(group.key)) + " <span class=\"note\">(" +
                std::to_string(group.runs.size()) + " run" + (group.runs.size() == 1 ? "" : "s") + ")</span></h2>";
      }
      body += RunsTable(group.runs);
    }
    body += "</div>";
    if (runs->empty()) body += "<p class=\"note\">No runs" + std::string(search.empty() ? " yet" : " match") + ".</p>";
    return Html(200, "aiprof serve: runs", body);
  }

  static std::string RunsTable(const std::vector<const RunRow*>& runs) {
    std::string body = "<table class=\"runs\"><tr><th>Run</th><th>Name</th><th>Service</th><th>Tag</th><th>Date</th>"
                       "<th>State</th><th>Steps</th><th>Median step</th><th>Device utilisation</th>"
                       "<th>Top finding (impact, share of its base)</th></tr>";
    for (const RunRow* run : runs) {
      const RunRow& r = *run;
      const std::string link = "/runs/" + std::to_string(r.id);
      const bool ready = r.state == RunState::kReady;
      body += "<tr data-run=\"" + std::to_string(r.id) + "\"><td><a href=\"" + link + "\">" + std::to_string(r.id) +
              "</a></td><td><a class=\"run-name\" href=\"" + link + "\">" + Esc(r.name) +
              "</a><br><span class=\"note\">" + Esc(r.path) + "</span></td><td>" + Esc(ServiceOf(r)) + "</td><td>" +
              Esc(r.tag) + "</td><td>" + DateOf(r) + "</td><td class=\"" + RunStateName(r.state) + "\">" +
              RunStateName(r.state) + "</td><td>" + (ready ? std::to_string(r.steps) : "") + "</td><td>" +
              (ready && r.steps > 0 ? Fmt(r.step_p50_ns, render::Unit::kNs) : "") + "</td><td>" +
              Esc(DeviceUtilText(r)) + "</td><td>";
      if (r.state == RunState::kFailed) {
        body += "<span class=\"err\">" + Esc(r.error) + "</span>";
      } else if (!r.top_finding.empty()) {
        body += Esc(r.top_finding);
        if (!r.top_basis.empty()) body += " (" + Fmt(r.top_share, render::Unit::kFraction) + " of " + Esc(r.top_basis) + ")";
      }
      body += "</td></tr>";
    }
    return body + "</table>";
  }

  HttpResponse RunPage(int64_t id, bool api) {
    auto ready = ReadyRun(id, api);
    if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
    const RunRow& row = std::get<RunRow>(ready);
    std::string json, html;
    if (std::optional<StoredRunPage> stored = StoredPage(row)) {
      json = stored->JsonWithTitle(row.name);
      if (!api) html = stored->HtmlWithTitle(row.name);
    } else {
      StatusOr<std::shared_ptr<OpenRun>> run = Open(row);
      if (!run.ok()) return ServerError(api, run.status().message());
      std::lock_guard<std::mutex> lock((*run)->mu);
      StatusOr<const ReportData*> report = ReportOf(run->get());
      if (!report.ok()) return ServerError(api, report.status().message());
      const render::Document doc = RunToDocument(row, **report);
      json = render::RenderJson(doc);
      html = render::RenderHtmlBody(doc);
    }
    if (api) return Json(200, std::move(json));
    const std::string sid = std::to_string(id);
    std::string body = "<p><a href=\"/runs/" + sid + "/report\">Full report</a> · <a href=\"/runs/" + sid +
                       "/timeline\">Timeline</a> · <a href=\"/runs/" + sid + "/flame\">Flame graph</a> · <a href=\"/runs/" +
                       sid + "/topology\">Topology</a> · <a href=\"/runs/" + sid + "/query\">Query (SQL)</a> · <a href=\"/api/runs/" + sid + "\">JSON</a></p>"
                       "<div class=\"box\" data-go=\"/compare\" id=\"compare\"><input type=\"hidden\" data-param=\"a\" value=\"" +
                       sid + "\">Compare with run <input data-param=\"b\" size=\"4\"><button>Compare</button></div>";
    return Html(200, row.name, body + html);
  }

  // The run's page as stored at conversion (docs/serve.md), if there is one
  // built with the knowledge cards there are now.
  std::optional<StoredRunPage> StoredPage(const RunRow& row) {
    std::ifstream in(CacheFilesOf(cache_dir, row.id).page, std::ios::binary);
    if (!in) return std::nullopt;
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::optional<StoredRunPage> page = ParseStoredRunPage(text);
    if (!page || page->cards != CardsFingerprint(baselines_db)) return std::nullopt;
    return page;
  }

  HttpResponse Report(int64_t id) {
    auto ready = ReadyRun(id, false);
    if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
    HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    if (std::optional<StoredRunPage> stored = StoredPage(std::get<RunRow>(ready))) {
      r.body = std::move(stored->report_html);
      return r;
    }
    StatusOr<std::shared_ptr<OpenRun>> run = Open(std::get<RunRow>(ready));
    if (!run.ok()) return ServerError(false, run.status().message());
    std::lock_guard<std::mutex> lock((*run)->mu);
    StatusOr<const ReportData*> report = ReportOf(run->get());
    if (!report.ok()) return ServerError(false, report.status().message());
    r.body = ReportToHtml(**report);  // the report's own page shell and CSP meta
    return r;
  }

  // GET /runs/ID/timeline?start=&end= (a page: the tile drawn as SVG, zoom
  // and pan by links or a click) and /api/runs/ID/timeline?start=&end=&width=
  // (the tile as JSON). Times are ns from the run's first slice (or thread instant, when earlier).
  HttpResponse Timeline(int64_t id, const std::string& start_text, const std::string& end_text,
                        const std::string& width_text, bool api) {
    auto ready = ReadyRun(id, api);
    if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
    const RunRow& row = std::get<RunRow>(ready);
    auto number = [](const std::string& t, int64_t fallback) -> std::optional<int64_t> {
      if (t.empty()) return fallback;
      if (t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
      return std::stoll(t);
    };
    StatusOr<std::shared_ptr<OpenRun>> run = Open(row);
    if (!run.ok()) return ServerError(api, run.status().message());
    std::lock_guard<std::mutex> lock((*run)->mu);
    const Trace& trace = (*run)->session->trace();
    if (!(*run)->tiles) (*run)->tiles = BuildTileIndex(trace);
    const TileIndex& index = *(*run)->tiles;
    const int64_t span = index.end_ns - index.start_ns;
    const std::optional<int64_t> start = number(start_text, 0), end = number(end_text, span),
                                 width = number(width_text, 1000);
    if (!start || !end || !width || *width < 1 || *width > kMaxTileWidth || *end <= *start) {
      return Failure(api, 400, "start and end: ns from the run's first slice or thread instant, end > start; width: 1 to " +
                                   std::to_string(kMaxTileWidth));
    }
    const Tile tile = ComputeTile(trace, index, *start, *end, static_cast<uint32_t>(*width));
    if (api) return Json(200, TileToJson(trace, tile));
    const std::string base = "/runs/" + std::to_string(id) + "/timeline";
    std::string body = "<h1>Timeline of " + Esc(row.name) + "</h1><p id=\"timeline-nav\" data-zoom-base=\"" + base +
                       "?\" data-start=\"" + std::to_string(tile.start_ns) + "\" data-end=\"" + std::to_string(tile.end_ns) +
                       "\" data-span=\"" + std::to_string(span) + "\" data-px=\"" + std::to_string(tile.width) + "\">" +
                       ZoomLinks(base + "?", tile.start_ns, tile.end_ns, span, "whole run") +
                       "· <a href=\"/api" + base + "?start=" + std::to_string(tile.start_ns) + "&amp;end=" +
                       std::to_string(tile.end_ns) + "\">JSON</a></p><p class=\"note\" id=\"timeline-summary\">" +
                       Esc(render::FormatQuantity(static_cast<double>(tile.start_ns), render::Unit::kNs)) + " to " +
                       Esc(render::FormatQuantity(static_cast<double>(tile.end_ns), render::Unit::kNs)) +
                       " after the run's first slice or thread instant (the run lasts " +
                       Esc(render::FormatQuantity(static_cast<double>(span), render::Unit::kNs)) + "); <span id=\"tile-listed\">" +
                       std::to_string(tile.listed) + "</span> slices drawn on their own, <span id=\"tile-merged\">" +
                       std::to_string(tile.merged) + "</span> shorter than a pixel (" +
                       Esc(render::FormatQuantity(tile.bin_ns, render::Unit::kNs)) +
                       ") merged into shaded bins (darker: busier)" + (tile.truncated ? "; more than " +
                       std::to_string(kMaxTileSlices) + " long slices: the rest merged too" : std::string()) +
                       (tile.instant_count > 0
                            ? "; <span id=\"tile-instants\">" + std::to_string(tile.instant_count) +
                                  "</span> thread instants as ticks under their thread (page faults magenta" +
                                  (tile.instants_binned ? ", counted per bin: zoom in for each one" : std::string()) +
                                  "; hover a tick for its counts)"
                            : std::string()) +
                       ".</p><p class=\"note\">Click the drawing to zoom in 4× there, drag it to pan; keys: ← → pan, "
                       "+ − zoom, 0 the whole run.</p><div id=\"timeline-box\">" + TileToSvg(trace, tile) + "</div>";
    return Html(200, "Timeline of " + row.name, body, kZoomJs);
  }

  // The run's flame graph or topology: the view's own page (`aiprof view
  // --flame/--topology`, through the page shell), over the run's session.
  HttpResponse View(int64_t id, const std::string& name) {
    auto ready = ReadyRun(id, false);
    if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
    const RunRow& row = std::get<RunRow>(ready);
    const ViewSpec* spec = FindView(name);
    if (!spec || !HasFormat(*spec, "html")) return NotFound(false);
    StatusOr<std::shared_ptr<OpenRun>> run = Open(row);
    if (!run.ok()) return ServerError(false, run.status().message());
    std::lock_guard<std::mutex> lock((*run)->mu);
    ViewContext context{*(*run)->session, (*run)->session->trace(), nullptr, ViewOptions{}};
    context.options.format = "html";
    context.options.title = row.name;
    StringViewSink sink;
    if (Status st = spec->render(context, &sink); !st.ok()) {
      // The view's own first line says why (e.g. the topology view's
      // Graphviz module is missing); the lines after it can name the
      // server's install paths: to the log only.
      const std::string& why = st.message();
      const size_t eol = why.find('\n');
      if (eol == std::string::npos) return Failure(false, 422, why);
      ServeLog("view " + name + " of run " + std::to_string(id) + ": " + why);
      return Failure(false, 422, why.substr(0, eol) + " (the server's log has the details)");
    }
    HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = sink.str();
    return r;
  }

  // A query whose client has gone: not run, or stopped (`ran_s` >= 0), and
  // said in the log with the count so far.
  void LogGoneQuery(int64_t id, double ran_s) {
    const uint64_t n = ++gone_queries;
    char what[64];
    if (ran_s < 0) {
      std::snprintf(what, sizeof what, "not run");
    } else {
      std::snprintf(what, sizeof what, "cancelled after %.2f s", ran_s);
    }
    ServeLog("query of run " + std::to_string(id) + " " + what + ": its client has gone (" + std::to_string(n) +
             " such so far)");
  }

  // `gone`: the request's flag (HttpRequest::gone), set once its client has
  // left; nullptr for none.
  HttpResponse Query(int64_t id, const std::string& sql, bool api, std::shared_ptr<std::atomic<bool>> gone) {
    if (!gone) gone = std::make_shared<std::atomic<bool>>(false);
    // Queued while its client left (or while the answer deadline passed):
    // no one would read the answer.
    if (!sql.empty() && gone->load() && !stopping_queries.load()) {
      LogGoneQuery(id, -1);
      return Failure(api, 503, "not run: the client has gone");
    }
    auto ready = ReadyRun(id, api);
    if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
    const RunRow& row = std::get<RunRow>(ready);
    const std::string sid = std::to_string(id);
    std::string body = "<h1>Query " + Esc(row.name) + "</h1><p class=\"note\">Read-only SQL over the run's tables "
                       "(docs/query.md); at most " + std::to_string(kQueryMaxRows) + " rows, " +
                       Fmt(options.query_timeout_s * 1e9, render::Unit::kNs) + ".</p><div class=\"box\" data-go=\"/runs/" +
                       sid + "/query\" id=\"query\"><textarea data-param=\"sql\">" +
                       Esc(sql.empty() ? "SELECT name, count(*) AS n, sum(dur) AS total_ns FROM slices GROUP BY name ORDER BY total_ns DESC LIMIT 20" : sql) +
                       "</textarea><button>Run</button></div>";
    if (sql.empty()) {
      if (api) return JsonError(400, "give the query as ?sql=");
      return Html(200, "Query " + row.name, body);
    }
    if (sql.size() > kServeMaxSqlBytes) return Failure(api, 413, "query over " + std::to_string(kServeMaxSqlBytes) + " bytes");
    StatusOr<std::shared_ptr<OpenRun>> run = Open(row);
    if (!run.ok()) return ServerError(api, run.status().message());
    StatusOr<std::unique_ptr<QueryEngine>> engine = QueryEngine::Open((*run)->session->trace());
    if (!engine.ok()) return ServerError(api, engine.status().message());
    QueryLimits limits;
    limits.max_rows = kQueryMaxRows;
    limits.timeout_s = options.query_timeout_s;
    // One flag for both reasons to stop: the client gone, the server
    // stopping (the stop sets every running query's flag; one registered
    // after it is set here).
    limits.cancel = gone.get();
    {
      std::lock_guard<std::mutex> lock(running_mu);
      if (stopping_queries.load()) gone->store(true);
      running_queries.push_back(gone);
    }
    struct Unregister {
      Impl* impl;
      const std::atomic<bool>* flag;
      ~Unregister() {
        std::lock_guard<std::mutex> lock(impl->running_mu);
        std::erase_if(impl->running_queries, [this](const auto& f) { return f.get() == flag; });
      }
    } unregister{this, gone.get()};
    const auto started = std::chrono::steady_clock::now();
    limits.max_memory_bytes = kQueryMaxMemoryBytes;
    limits.max_result_bytes = kQueryMaxResultBytes;
    limits.max_value_bytes = kServerQueryMaxValueBytes;
    StatusOr<QueryResult> result = (*engine)->Execute(sql, limits, "(serve)");
    if (!result.ok()) {
      // A query stopped by the server (its time limit, its client gone, or
      // the server stopping) is 503, not 400: the SQL may be fine
      // (docs/serve.md).
      const int status = (*engine)->stopped_by_limit() ? 503 : 400;
      if ((*engine)->stopped_by_limit() && gone->load() && !stopping_queries.load()) {
        LogGoneQuery(id, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      }
      if (api) return JsonError(status, result.status().message());
      return Html(status, "Query " + row.name, body + "<p class=\"err\" id=\"query-error\">" + Esc(result.status().message()) + "</p>");
    }
    if (api) return Json(200, QueryResultToJson(*result));
    return Html(200, "Query " + row.name, body + render::RenderHtmlBody(QueryToDocument(sql, *result)));
  }

  HttpResponse Compare(const std::string& a, const std::string& b, const std::string& step, const std::string& start,
                       const std::string& end, const std::string& fix, bool api) {
    const std::optional<int64_t> ia = ParseId(a), ib = ParseId(b);
    if (!ia || !ib) {
      if (api) return JsonError(400, "give two runs: ?a=ID&b=ID (a before, b after)");
      return Html(200, "Compare", "<h1>Compare two runs</h1><div class=\"box\" data-go=\"/compare\" id=\"compare\">Run "
                                  "(before) <input data-param=\"a\" size=\"4\" value=\"" + Esc(a) + "\"> with run (after) "
                                  "<input data-param=\"b\" size=\"4\" value=\"" + Esc(b) + "\"><button>Compare</button></div>");
    }
    const int64_t ids[2] = {*ia, *ib};
    std::shared_ptr<OpenRun> runs[2];
    std::string names[2];
    for (int i = 0; i < 2; ++i) {
      auto ready = ReadyRun(ids[i], api);
      if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
      StatusOr<std::shared_ptr<OpenRun>> run = Open(std::get<RunRow>(ready));
      if (!run.ok()) return ServerError(api, run.status().message());
      runs[i] = *run;
      names[i] = "run " + std::to_string(ids[i]) + " (" + std::get<RunRow>(ready).name + ")";
    }
    if (fix.size() > kMaxNameBytes) return Failure(api, 400, "fix: a suggestion id of run a (at most 200 bytes)");
    // As `aiprof validate --before A --after B [--fix-id F]` (ValidateRuns,
    // src/session/validate_runs.h): the runs' steps validated, and the
    // prediction made from run a for the fix run b applied (&fix=ID, else
    // matched by the finding that went away). The check reads a session of
    // run a's own in which a card of these very runs does not correct the
    // prediction checked against them, as in `aiprof validate` (each run's
    // file is hashed, about 1 s per 100 MB); the run's page keeps every
    // card, as `aiprof suggest`. Runs are named by their labels, so no
    // error names a path on the server.
    auto validate = [&]() -> StatusOr<ValidationResult> {
      SessionOptions so = runs[0]->session->options();
      for (const auto& run : runs) {
        StatusOr<std::string> id = InputIdentity((fs::path(logdir) / run->row.path).string());
        if (id.ok()) so.history_checked_inputs.push_back(*id);
      }
      AnalysisSession before(runs[0]->session->shared_trace(), so);
      // A fix run a has no suggestion of is the request's fault (400).
      if (!fix.empty()) {
        ASSIGN_OR_RETURN(const SuggestResult* sug, before.suggestions());
        if (FindSuggestionOutcome(*sug, fix) == nullptr) {
          return ErrStatus("fix " + fix + ": run a has no such suggestion");
        }
      }
      ValidateRunsOptions vo;
      vo.prediction.fix_id = fix;
      vo.before_side = "run a";
      vo.after_side = "run b";
      vo.fix_id_argument = "fix";
      return ValidateRuns({ValidateRun::Loaded(names[0], &before)},
                          {ValidateRun::Loaded(names[1], runs[1]->session.get())}, vo);
    };
    // Both runs' locks at once (the same run may be both sides).
    StatusOr<ValidationResult> validated = ErrStatus("");
    if (ids[0] != ids[1]) {
      std::scoped_lock lock(runs[0]->mu, runs[1]->mu);
      validated = validate();
    } else {
      std::lock_guard<std::mutex> lock(runs[0]->mu);
      validated = validate();
    }
    if (!validated.ok()) {
      const std::string why = validated.status().message();
      const bool bad_fix = !fix.empty() && why.rfind("fix " + fix + ":", 0) == 0;
      return Failure(api, bad_fix ? 400 : 422, why);
    }
    ValidationResult result = std::move(*validated);
    if (api) return Json(200, ValidationToJson(result));
    render::Document doc = ValidationToDocument(result);
    const HttpResponse timeline = CompareTimeline(a, b, step, start, end, "1000", false, fix);  // a fragment, also when it fails
    return Html(200, doc.title, "<p><a href=\"/runs/" + std::to_string(ids[0]) + "\">Run " + std::to_string(ids[0]) +
                                    "</a> → <a href=\"/runs/" + std::to_string(ids[1]) + "\">Run " +
                                    std::to_string(ids[1]) + "</a> · <a href=\"/api/compare?a=" + std::to_string(ids[0]) +
                                    "&amp;b=" + std::to_string(ids[1]) +
                                    (fix.empty() ? "" : "&amp;fix=" + Esc(PercentEncode(fix))) + "\">JSON</a></p>" + render::RenderHtmlBody(doc) +
                                    timeline.body, kZoomJs);
  }

  // The timeline of both runs aligned on steps (compare_timeline.h): steady
  // step `step` (0-based, default 0) of each, same time per pixel. The API
  // answers JSON; for the page, the body is an HTML fragment (a note when
  // a run has no steps with starts).
  HttpResponse CompareTimeline(const std::string& a, const std::string& b, const std::string& step_text,
                               const std::string& start_text, const std::string& end_text,
                               const std::string& width_text, bool api, const std::string& fix = "") {
    // The page's fragment says what went wrong where the API answers an error.
    auto fail = [&](int status, const std::string& why) {
      if (api) return JsonError(status, why);
      HttpResponse r;
      r.status = status;
      r.body = "<h2>Timeline aligned on steps</h2><p class=\"err\" id=\"compare-timeline\">" + Esc(why) + "</p>";
      return r;
    };
    const std::optional<int64_t> ia = ParseId(a), ib = ParseId(b);
    const std::optional<int64_t> step = step_text.empty() ? std::optional<int64_t>(0) : ParseId(step_text);
    const std::optional<int64_t> width = width_text.empty() ? std::optional<int64_t>(1000) : ParseId(width_text);
    const std::optional<int64_t> from = start_text.empty() ? std::optional<int64_t>(0) : ParseId(start_text);
    const std::optional<int64_t> to = end_text.empty() ? std::optional<int64_t>(-1) : ParseId(end_text);
    if (!ia || !ib || !step || !width || *width < 1 || *width > kMaxTileWidth || !from || !to) {
      return fail(400, "give ?a=ID&b=ID[&step=K][&start=NS&end=NS][&width=1.." + std::to_string(kMaxTileWidth) + "]");
    }
    const int64_t ids[2] = {*ia, *ib};
    std::shared_ptr<OpenRun> runs[2];
    for (int i = 0; i < 2; ++i) {
      auto ready = ReadyRun(ids[i], api);
      if (auto* r = std::get_if<HttpResponse>(&ready)) return std::move(*r);
      StatusOr<std::shared_ptr<OpenRun>> run = Open(std::get<RunRow>(ready));
      if (!run.ok()) return fail(500, run.status().message());
      runs[i] = std::move(*run);
    }
    // One run at a time holds its lock (the same run may be both sides).
    std::vector<AlignedStep> steps[2];
    for (int i = 0; i < 2; ++i) {
      std::lock_guard<std::mutex> lock(runs[i]->mu);
      const Trace& trace = runs[i]->session->trace();
      if (!runs[i]->tiles) runs[i]->tiles = BuildTileIndex(trace);
      steps[i] = AlignableSteps(trace, runs[i]->session->results().Get(kWindow));
    }
    const size_t count = std::min(steps[0].size(), steps[1].size());
    if (count == 0) {
      const std::string why = "no steady steps with start times in run " +
                              std::to_string(steps[0].empty() ? ids[0] : ids[1]) + ": nothing to align";
      return fail(422, why);
    }
    if (static_cast<size_t>(*step) >= count) {
      return fail(400, "step " + std::to_string(*step) + ": the runs have " + std::to_string(count) +
                                   " steady steps to align (0 to " + std::to_string(count - 1) + ")");
    }
    const size_t k = static_cast<size_t>(*step);
    const std::optional<CompareWindow> window = ClampCompareWindow(steps[0][k], steps[1][k], *from, *to);
    if (!window) {
      return fail(400, "start and end: ns from the steps' starts, end > start, start before the longer step's end (" +
                           std::to_string(std::max(steps[0][k].dur_ns, steps[1][k].dur_ns)) + " ns)");
    }
    std::vector<StepTile> tiles;
    {
      std::unique_lock<std::mutex> la(runs[0]->mu, std::defer_lock), lb(runs[1]->mu, std::defer_lock);
      if (runs[0] == runs[1]) {
        la.lock();  // a run compared with itself
      } else {
        std::lock(la, lb);
      }
      tiles = AlignStepTiles(runs[0]->session->trace(), *runs[0]->tiles, steps[0][k], runs[1]->session->trace(),
                             *runs[1]->tiles, steps[1][k], static_cast<uint32_t>(*width), window);
    }
    const Trace* traces[2] = {&runs[0]->session->trace(), &runs[1]->session->trace()};
    if (api) return Json(200, AlignedTilesToJson({traces[0], traces[1]}, {ids[0], ids[1]}, tiles, k, count, *window));
    HttpResponse r;
    r.body = AlignedTilesToHtml({traces[0], traces[1]}, {ids[0], ids[1]}, tiles, k, count, *window,
                                static_cast<uint32_t>(*width), fix);
    return r;
  }

  // The baseline database if it exists (opened per request, never created);
  // nullptr when there is none.
  StatusOr<std::unique_ptr<BaselineStore>> Baselines() {
    struct stat st{};
    if (::stat(baselines_db.c_str(), &st) != 0) return std::unique_ptr<BaselineStore>();
    return BaselineStore::Open(baselines_db);
  }

  // GET /cards, /api/cards: the knowledge cards with their measured gains.
  HttpResponse Cards(bool api) {
    StatusOr<std::unique_ptr<BaselineStore>> store = Baselines();
    if (!store.ok()) return ServerError(api, store.status().message());
    std::vector<KnowledgeCard> cards;
    if (*store) {
      StatusOr<std::vector<KnowledgeCard>> c = (*store)->RecentCards(kServeCardLimit);
      if (!c.ok()) return ServerError(api, c.status().message());
      cards = std::move(*c);
    }
    const render::Document doc = CardsToDocument(cards);
    if (api) return Json(200, render::RenderJson(doc));
    return Html(200, "Knowledge cards", "<p class=\"note\">Cards stored by <code>aiprof card</code> in " +
                                            Esc(baselines_db) + ".</p>" + render::RenderHtmlBody(doc));
  }

  // A service's validations from the baseline database (`aiprof validate
  // --service` / `--baseline` write them), newest first, and the team's
  // knowledge cards; opened per request, never created.
  HttpResponse History(const std::string& service, bool api) {
    std::string body = "<h1>History</h1><div class=\"box\" data-go=\"/history\" id=\"history\">Service <input "
                       "data-param=\"service\" value=\"" + Esc(service) + "\"><button>Show</button></div><p class=\"note\">"
                       "Validations stored by <code>aiprof validate --service NAME</code> or <code>--baseline NAME</code>, "
                       "knowledge cards by <code>aiprof card</code>, in " + Esc(baselines_db) + ".</p>";
    if (service.empty() && api) return JsonError(400, "give ?service=NAME");
    StatusOr<std::unique_ptr<BaselineStore>> store = Baselines();
    if (!store.ok()) return ServerError(api, store.status().message());
    std::vector<ValidationRecord> records;
    std::vector<KnowledgeCard> cards;
    if (*store) {
      if (!service.empty()) {
        StatusOr<std::vector<ValidationRecord>> h = (*store)->History(service, kServeListLimit);
        if (!h.ok()) return ServerError(api, h.status().message());
        records = std::move(*h);
      }
      if (!api) {
        StatusOr<std::vector<KnowledgeCard>> c = (*store)->RecentCards(kServeCardLimit);
        if (!c.ok()) return ServerError(api, c.status().message());
        cards = std::move(*c);
      }
    }
    const std::string cards_html = "<div id=\"cards\">" + render::RenderHtmlBody(CardsToDocument(cards)) + "</div>";
    if (service.empty()) return Html(200, "History", body + cards_html);
    if (api) return Json(200, HistoryToJson(records));
    // The baseline the validations are measured against (the newest one).
    std::string baseline_html = "<p class=\"note\" id=\"baseline\">No baseline stored for this service "
                                "(<code>aiprof set-baseline --service NAME --trace T</code>).</p>";
    if (*store) {
      if (StatusOr<StoredBaseline> base = (*store)->LatestBaseline(service); base.ok()) {
        std::vector<double> lat = base->samples.latency_ns;
        std::string median = "no samples";
        if (!lat.empty()) {
          std::sort(lat.begin(), lat.end());
          const size_t n = lat.size();
          median = "median " + Fmt(n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2, render::Unit::kNs);
        }
        const std::time_t secs = static_cast<std::time_t>(base->created_unix_ms / 1000);
        std::tm tm{};
        gmtime_r(&secs, &tm);
        char when[32];
        std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
        baseline_html = "<p id=\"baseline\">Baseline #" + std::to_string(base->id) + ", stored " + when + " from <code>" +
                        Esc(base->source) + "</code>: " + std::to_string(lat.size()) + " " + Esc(base->samples.unit) +
                        " sample(s), " + Esc(median) + ".</p>";
      }
    }
    render::Document doc = HistoryToDocument(records);
    doc.title = "Validations of " + service;
    // Latency change of each validation, oldest first (the chart over time).
    render::Series series;
    series.key = "latency_change";
    series.title = "Latency change against the baseline, per validation (oldest first)";
    series.x_label = "validation";
    series.y_label = "change";
    series.y_unit = render::Unit::kChange;
    for (size_t i = records.size(); i-- > 0;) {
      if (std::optional<double> c = LatencyChange(records[i].report_json)) {
        series.points.emplace_back(static_cast<double>(records.size() - 1 - i), *c);
      }
    }
    if (series.points.size() >= 2 && !doc.sections.empty()) doc.sections[0].blocks.insert(doc.sections[0].blocks.begin(), series);
    size_t regressed = 0;
    for (const ValidationRecord& r : records) regressed += r.alert;
    return Html(200, "History of " + service, body + "<p id=\"history-summary\">" + std::to_string(records.size()) +
                                                  " validation(s), " + std::to_string(regressed) +
                                                  " with a significant regression.</p>" + baseline_html +
                                                  render::RenderHtmlBody(doc) +
                                                  cards_html);
  }

  // POST /api/runs?name=FILE[&service=S][&tag=T]: the body, already
  // written to a hidden file as it arrived (OpenBodySink), becomes
  // LOGDIR/uploads/<ms>-<pid>-<n>-FILE by a rename, is recorded with its
  // name, service and tag in one statement, and queued.
  HttpResponse Upload(const HttpRequest& req) {
    auto* sink = dynamic_cast<UploadSink*>(req.body_sink.get());
    if (!sink) return JsonError(500, "internal error: the upload was not stored");
    if (req.body_bytes == 0) return JsonError(400, "empty body: POST the trace file's bytes");
    const std::string given = QueryParam(req.query, "name").value_or("upload.json");
    const std::string service = QueryParam(req.query, "service").value_or("");
    const std::string tag = QueryParam(req.query, "tag").value_or("");
    const std::string name = SafeFileName(given);
    const uint64_t seq = ++upload_seq;
    const std::string file = std::to_string(NowUnixMs()) + "-" + std::to_string(getpid()) + "-" +
                             std::to_string(seq) + "-" + name;
    const std::string final_path = (fs::path(uploads_dir) / file).string();
    if (Status s = sink->Keep(final_path); !s.ok()) return ServerError(true, s.message());
    struct stat st{};
    if (::stat(final_path.c_str(), &st) != 0) return JsonError(500, "cannot stat the upload");
    const std::string rel = "uploads/" + file;
    const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    StatusOr<int64_t> id = index->AddUpload(rel, static_cast<int64_t>(st.st_size), mtime, given, service, tag);
    if (!id.ok()) return ServerError(true, id.status().message());
    indexer->Notify();
    RunRow r;
    r.id = *id;
    r.path = rel;
    return Json(202, RunJson(r));
  }

  // DELETE /api/runs/ID: an uploaded run goes, its upload, its cache files
  // and its row; a file of the logdir is the team's own and stays (409).
  HttpResponse DeleteRun(int64_t id) {
    StatusOr<std::optional<RunRow>> row = index->Get(id);
    if (!row.ok()) return ServerError(true, row.status().message());
    if (!row->has_value()) return JsonError(404, "no run " + std::to_string(id));
    const RunRow& r = **row;
    const std::string upload = (fs::path(logdir) / r.path).string();
    if (r.path.rfind("uploads/", 0) != 0 || !PathInside(uploads_dir, upload)) {
      return JsonError(409, "run " + std::to_string(id) + " is " + r.path +
                                " in the logdir, not an upload: only uploads are deleted here (remove the file itself)");
    }
    StatusOr<bool> gone = r.state == RunState::kConverting ? StatusOr<bool>(false) : index->Delete(id);
    if (!gone.ok()) return ServerError(true, gone.status().message());
    if (!*gone) return JsonError(409, "run " + std::to_string(id) + " is being converted: delete it once it is ready or failed");
    std::error_code ec;
    fs::remove(upload, ec);
    const RunCacheFiles files = CacheFilesOf(cache_dir, id);
    for (const std::string* path : {&files.native, &files.page, &files.partial}) fs::remove(*path, ec);
    {
      std::lock_guard<std::mutex> lock(cache_mu);
      open_runs.remove_if([&](const std::shared_ptr<OpenRun>& o) { return o->row.id == id; });
    }
    return Json(200, "{\"id\": " + std::to_string(id) + ", \"deleted\": true, \"path\": " + JsonString(r.path) + "}");
  }

  HttpResponse Rename(int64_t id, const std::string& name, const std::string& tag) {
    if (name.empty() || name.size() > kMaxNameBytes || tag.size() > kMaxNameBytes || HasControl(name) ||
        HasControl(tag)) {
      return JsonError(400, "give ?name= (1 to " + std::to_string(kMaxNameBytes) +
                                " bytes, no control characters) and optionally &tag=");
    }
    StatusOr<std::optional<RunRow>> row = index->Get(id);
    if (!row.ok()) return ServerError(true, row.status().message());
    if (!row->has_value()) return JsonError(404, "no run " + std::to_string(id));
    if (Status s = index->SetName(id, name, tag); !s.ok()) return ServerError(true, s.message());
    return Json(200, "{\"id\": " + std::to_string(id) + ", \"name\": " + JsonString(name) +
                         ", \"tag\": " + JsonString(tag) + "}");
  }
};

ServeServer::ServeServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ServeServer::~ServeServer() = default;
int ServeServer::port() const { return impl_->port; }
const std::string& ServeServer::host() const { return impl_->host; }
const std::string& ServeServer::db_path() const { return impl_->db_path; }

StatusOr<std::unique_ptr<ServeServer>> ServeServer::Start(const ServeOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  int port = 0;
  RETURN_IF_ERROR(ParseListenAddress(options.listen, &impl->host, &port, "--listen"));
  if (!options.token_file.empty()) {
    ASSIGN_OR_RETURN(impl->tokens, ReadTokenFile(options.token_file));
  } else if (!IsLoopbackHost(impl->host)) {
    // A combination of flags no run may use: a usage error (exit 2).
    return UsageStatus("--listen " + options.listen +
                       ": not a loopback address; anyone who can reach it could read "
                       "every run and upload files: give --token-file (lines \"read TOKEN\" / \"upload TOKEN\"), or "
                       "listen on 127.0.0.1");
  }
  // Everything the server writes (uploads, the cache's native files and
  // pages, the index and its WAL, their folders) is the team's data: no
  // access for other users, whatever the umask it was started with.
  ::umask(::umask(0) | 027);
  std::error_code ec;
  const fs::path logdir = fs::canonical(options.logdir, ec);
  if (ec || !fs::is_directory(logdir)) return ErrStatus("--logdir " + options.logdir + ": not a folder");
  impl->logdir = logdir.string();
  impl->uploads_dir = (logdir / "uploads").string();
  RemoveStaleUploadParts(impl->uploads_dir);
  if (!options.baselines_db.empty()) {
    impl->baselines_db = options.baselines_db;
  } else {
    ASSIGN_OR_RETURN(impl->baselines_db, DefaultBaselineDbPath());
  }
  impl->db_path = options.db.empty() ? (logdir / ".aiprof-serve" / "index.db").string() : options.db;
  const fs::path cache = fs::path(impl->db_path).parent_path() / "cache";
  fs::create_directories(cache, ec);
  if (ec) return ErrStatus(cache.string() + ": cannot create the cache folder: " + ec.message());
  impl->cache_dir = fs::canonical(cache).string();
  RestrictServerFiles(impl->cache_dir, options.db.empty() ? cache.parent_path().string() : "", impl->db_path,
                      impl->uploads_dir);
  // Folder runs open their members, and links among them: all must lie in
  // the logdir (or the server's cache).
  RETURN_IF_ERROR(ConfineImportsTo({impl->logdir, impl->cache_dir}));
  ASSIGN_OR_RETURN(impl->index, RunIndex::Open(impl->db_path));
  IndexerOptions io;
  io.logdir = impl->logdir;
  io.cache_dir = impl->cache_dir;
  io.threads = options.index_threads;
  io.scan_interval_ms = options.scan_interval_ms;
  io.baselines_db = impl->baselines_db;
  io.max_convert_bytes = options.max_convert_bytes;
  io.max_convert_events = options.max_convert_events;
  io.max_convert_seconds = options.max_convert_seconds;
  impl->indexer = std::make_unique<Indexer>(impl->index.get(), io);
  impl->pages.Start(options.request_threads);
  impl->queries.Start(options.query_threads);
  HttpServer::Options http;
  http.host = impl->host;
  http.port = port;
  http.flag = "--listen";
  http.limits.max_body_bytes = kMaxSmallBodyBytes;
  http.limits.body_timeout_ns = 120'000'000'000;  // an upload of 64 MiB over a slow link
  Impl* p = impl.get();
  http.open_body_sink = [p](const HttpRequest& head) { return p->OpenBodySink(head); };
  ASSIGN_OR_RETURN(impl->http, HttpServer::Start(
                                   http, [p](const HttpRequest& head, size_t* max) { return p->Admit(head, max); },
                                   [p](HttpRequest r, HttpServer::Responder respond) { p->Handle(std::move(r), std::move(respond)); }));
  impl->port = impl->http->port();
  // A logdir file truncated while it is read in place fails its own
  // conversion (indexer.cc), not the server.
  InstallMappedInputBusHandler();
  SetMappedInputFaultsRecoverable(true);
  impl->indexer->Start();
  return std::unique_ptr<ServeServer>(new ServeServer(std::move(impl)));
}

}  // namespace aiprof
