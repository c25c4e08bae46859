// aiprof mcp: a Model Context Protocol server over stdio (JSON-RPC 2.0, one
// message per line) whose tools are aiprof's figures on traces the client
// names: load_trace, list_traces, summary, analyze, query, schema. File
// paths are confined to the directories given with --allow. Errors are
// JSON-RPC errors (bad message, unknown method or tool, bad arguments) or
// tool results with isError (a trace that does not import, a query that
// fails); nothing a client sends ends the server except end of input.
#include <simdjson.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "src/analysis/analyze.h"
#include "src/analysis/attribution/attribution_analysis.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/diff/attribution_diff.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/validation/knowledge_card.h"
#include "src/analysis/whatif/whatif.h"
#include "src/base/file_stamp.h"
#include "src/cli/command.h"
#include "src/importers/common/import_confinement.h"
#include "src/query/query_engine.h"
#include "src/query/query_format.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"
#include "src/report/analysis/analyze_report.h"
#include "src/report/diagnosis/diagnosis_report.h"
#include "src/report/diff/diff_report.h"
#include "src/report/summary/summary_report.h"
#include "src/report/validation/validation_report.h"
#include "src/report/whatif/whatif_report.h"
#include "src/session/session.h"
#include "src/session/validate_runs.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxMessageBytes = 16 << 20;   // longer lines are refused (parse error)
constexpr size_t kMaxLoadedTraces = 8;
constexpr size_t kMaxQueuedMessages = 32;  // more waiting for the worker: -32000 busy
constexpr size_t kMcpDefaultMaxRows = 1000;
constexpr size_t kMcpMaxRows = 100000;
// The rows an answer holds, as kept in memory (docs/query.md): a client's
// context is smaller still.
constexpr size_t kMcpMaxResultBytes = size_t{64} << 20;
constexpr size_t kMaxWhatIfScenarios = 16;  // per whatif call
// The argument of every tool of one loaded trace (McpServer::McpTool::on_trace).
constexpr std::string_view kTraceArgument = R"("trace":{"type":"string","description":"id from load_trace, e.g. t1"})";
// One answer (a JSON-RPC message) is at most 8 MiB: the official MCP
// TypeScript SDK's stdio client refuses a message over 10 MiB and closes
// the session (the server with it). A query's rows are cut to fit
// (QueryAnswer); any other answer past it is a tool error saying its size.
constexpr size_t kMaxAnswerBytes = size_t{8} << 20;
// Not 2025-03-26: it requires JSON-RPC batches, which 2025-06-18 removed and
// this server does not accept (a client asking for it is offered 2025-06-18).
constexpr const char* kProtocolVersions[] = {"2025-06-18", "2024-11-05"};

// A JSON-RPC error: code and message.
struct RpcError {
  int code;
  std::string message;
};

// A loaded trace: its analysis session (results computed once across tool
// calls) and its query database.
struct LoadedTrace {
  std::string path;
  FileStamp identity;  // loading the same path again, unchanged, gives the same trace id
  std::unique_ptr<AnalysisSession> session;
  std::unique_ptr<QueryEngine> engine;
  const Trace& trace() const { return session->trace(); }
  // A session over the same trace with other options (analyses, target).
  std::unique_ptr<AnalysisSession> With(SessionOptions options) const {
    options.input = path;
    return std::make_unique<AnalysisSession>(session->shared_trace(), std::move(options));
  }
};

// The member `key` of the object `e`, as operator[] but for a key given
// twice: the last one, as JSON.parse and Python's json read it, so that the
// server and its client agree on which request a reply answers
// ({"id":10,...,"id":11} is request 11). Not an object: INCORRECT_TYPE; no
// such member: NO_SUCH_FIELD.
simdjson::simdjson_result<simdjson::dom::element> Field(simdjson::simdjson_result<simdjson::dom::element> e,
                                                        std::string_view key) {
  simdjson::dom::object object;
  if (auto error = e.get(object)) return error;
  simdjson::simdjson_result<simdjson::dom::element> found(simdjson::NO_SUCH_FIELD);
  for (auto [k, v] : object) {
    if (k == key) found = simdjson::simdjson_result<simdjson::dom::element>(simdjson::dom::element(v));
  }
  return found;
}
simdjson::simdjson_result<simdjson::dom::element> Field(simdjson::dom::element e, std::string_view key) {
  return Field(simdjson::simdjson_result<simdjson::dom::element>(std::move(e)), key);
}

// Whether the numbers in `line` (outside strings) are all JSON numbers by
// the grammar: simdjson answers NUMBER_ERROR both for a malformed number
// and for one out of range (an integer past 64 bits, 1e400), which is
// valid JSON.
bool NumbersWellFormed(std::string_view line) {
  bool in_string = false;
  for (size_t i = 0; i < line.size();) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character
      } else if (c == '"') {
        in_string = false;
      }
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      ++i;
      continue;
    }
    if (c != '-' && !(c >= '0' && c <= '9')) {
      ++i;
      continue;
    }
    auto digit = [&](size_t k) { return k < line.size() && line[k] >= '0' && line[k] <= '9'; };
    size_t k = i + (c == '-');
    if (!digit(k)) return false;
    if (line[k] == '0') {
      ++k;
    } else {
      while (digit(k)) ++k;
    }
    if (k < line.size() && line[k] == '.') {
      if (!digit(++k)) return false;
      while (digit(k)) ++k;
    }
    if (k < line.size() && (line[k] == 'e' || line[k] == 'E')) {
      ++k;
      if (k < line.size() && (line[k] == '+' || line[k] == '-')) ++k;
      if (!digit(k)) return false;
      while (digit(k)) ++k;
    }
    if (k < line.size() && (digit(k) || line[k] == '.' || line[k] == 'e' || line[k] == 'E')) return false;
    i = k;
  }
  return true;
}

// Minified JSON (valid UTF-8, control characters already escaped) as text
// a terminal may show: DEL, C1 and bidi controls and the line separators
// become JSON escapes, so it still parses to the same value.
std::string JsonForText(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i <= json.size();) {
    const size_t del = std::min(json.find('\x7f', i), json.size());
    out += EscapeControls(json.substr(i, del - i), /*keep_line_breaks=*/true);
    if (del == json.size()) break;
    out += "\\u007f";
    i = del + 1;
  }
  return out;
}

// Messages are read on the calling thread and handled in order on one
// worker thread, so a notifications/cancelled arrives while a tool call runs:
// the call's cancel flag is set (a query stops within kQueryProgressInstructions SQLite
// instructions; an analysis, which cannot stop midway, runs to its end), and
// no response is sent for it, as the MCP specification's cancellation
// section says. `ping` is answered on the reading thread at once.
class McpServer {
 public:
  explicit McpServer(std::vector<fs::path> allowed) : allowed_(std::move(allowed)) {}

  // Serves until end of input, then answers what is still queued.
  void Serve(std::FILE* in, std::FILE* out) {
    out_ = out;
    std::thread worker([this] { Work(); });
    std::string line;
    while (ReadLine(in, &line)) Receive(std::move(line));
    {
      std::lock_guard<std::mutex> lock(mu_);
      input_done_ = true;
    }
    cv_.notify_one();
    worker.join();
  }

 private:
  // An MCP tool: what tools/list says of it and the member that answers it
  // (McpTools). A tool of one loaded trace (`on_trace`) takes 'trace' as
  // its first, required argument, checked before the handler runs.
  struct McpTool {
    std::string name = {};
    std::string description = {};            // as JSON string content (as written: no quote or backslash)
    std::string properties = {};             // the inputSchema's properties besides 'trace' (JSON members)
    std::vector<std::string> required = {};  // required arguments besides 'trace'
    std::string output_schema = {};          // JSON; "" for none
    std::optional<RpcError> (McpServer::*handler)(simdjson::dom::element args, std::string* result) = nullptr;
    std::optional<RpcError> (McpServer::*on_trace)(const LoadedTrace& t, simdjson::dom::element args,
                                                   std::string* result) = nullptr;
  };
  static const std::vector<McpTool>& McpTools();
  static std::string ToolsJson(bool with_output_schema = true);

  // A request waiting for, or in, the worker. `cancelled` is shared with
  // the reading thread.
  struct Pending {
    std::string line;
    std::string id;  // minified JSON id; "" for a notification or a bad message
    std::shared_ptr<std::atomic<bool>> cancelled;
  };

  void Send(const std::string& reply) {
    std::lock_guard<std::mutex> lock(out_mu_);
    std::fputs(reply.c_str(), out_);
    std::fputc('\n', out_);
    std::fflush(out_);
  }

  // On the reading thread: cancellations and pings are handled here, the
  // rest is queued for the worker.
  void Receive(std::string line) {
    Pending p;
    simdjson::dom::element message, id_element;
    std::string_view method;
    const bool parsed = !line.empty() && reader_parser_.parse(line).get(message) == simdjson::SUCCESS;
    if (parsed && message.is_array()) {
      // JSON-RPC batches: the protocol versions offered (kProtocolVersions)
      // do not have them (2025-06-18 removed them; 2025-03-26, which
      // required them, is not offered).
      Send(Error("null", {-32600,
                          "invalid request: batches are not supported (MCP 2025-06-18); send one message "
                          "per line"}));
      return;
    }
    if (parsed && message.is_object()) {
      // A response from the client (result or error, no method) is dropped
      // here, as Handle would: never queued, never answered, even busy.
      if (Field(message, "method").error() == simdjson::NO_SUCH_FIELD &&
          (Field(message, "result").error() == simdjson::SUCCESS ||
           Field(message, "error").error() == simdjson::SUCCESS)) {
        return;
      }
      if (Field(message, "id").get(id_element) == simdjson::SUCCESS) p.id = simdjson::minify(id_element);
      if (Field(message, "method").get(method) == simdjson::SUCCESS) {
        if (method == "notifications/cancelled" && p.id.empty()) {
          simdjson::dom::element request_id;
          std::string_view reason;
          if (Field(Field(message, "params"), "requestId").get(request_id) != simdjson::SUCCESS) {
            return;  // malformed: ignored
          }
          if (Field(Field(message, "params"), "reason").get(reason) != simdjson::SUCCESS) reason = {};
          Cancel(simdjson::minify(request_id), reason);
          return;
        }
        std::string_view version;
        if (method == "ping" && !p.id.empty() && (id_element.is_string() || id_element.is_int64()) &&
            Field(message, "jsonrpc").get(version) == simdjson::SUCCESS && version == "2.0") {
          Send(Reply(p.id, "{}"));
          return;
        }
      }
    }
    p.line = std::move(line);
    p.cancelled = std::make_shared<std::atomic<bool>>(false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queue_.size() >= kMaxQueuedMessages) {
        if (!p.id.empty()) Send(Error(p.id, {-32000, "busy: " + std::to_string(kMaxQueuedMessages) +
                                                  " messages are waiting; send fewer at a time"}));
        return;
      }
      if (!p.id.empty()) in_flight_.emplace(p.id, p.cancelled);
      queue_.push_back(std::move(p));
    }
    cv_.notify_one();
  }

  // Marks the requests with this id (queued or running) cancelled.
  void Cancel(const std::string& id, std::string_view reason) {
    std::lock_guard<std::mutex> lock(mu_);
    auto [first, last] = in_flight_.equal_range(id);
    for (auto it = first; it != last; ++it) it->second->store(true);
    // The id and reason are the client's: shown, not sent to the terminal
    // (an ESC [2J in a reason cleared the log's terminal).
    std::fprintf(stderr, "aiprof mcp: request %s cancelled by the client%s%s%s\n", TerminalSafe(id).c_str(),
                 reason.empty() ? "" : " (", TerminalSafe(reason).c_str(), reason.empty() ? "" : ")");
  }

  void Work() {
    for (;;) {
      Pending p;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return input_done_ || !queue_.empty(); });
        if (queue_.empty()) return;
        p = std::move(queue_.front());
        queue_.pop_front();
      }
      std::string reply;
      const auto start = std::chrono::steady_clock::now();
      if (!p.cancelled->load()) {
        cancel_ = p.cancelled.get();
        reply = Handle(p.line);
        cancel_ = nullptr;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto [first, last] = in_flight_.equal_range(p.id);
        for (auto it = first; it != last; ++it) {
          if (it->second == p.cancelled) {
            in_flight_.erase(it);
            break;
          }
        }
      }
      if (p.cancelled->load()) {
        std::fprintf(stderr, "aiprof mcp: request %s stopped after %.0f ms; no response sent\n",
                     TerminalSafe(p.id).c_str(),
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        continue;
      }
      if (!reply.empty()) Send(reply);  // empty: a notification
    }
  }

  // True when the running call was cancelled (checked between the steps of
  // a tool that cannot stop midway).
  bool Cancelled() const { return cancel_ && cancel_->load(); }

  // One line, at most kMaxMessageBytes (longer: the rest is skipped and the
  // line comes back empty, which is a parse error). getc_unlocked under one
  // lock of the stream: std::cin, synced with stdio, took a getc and an
  // ungetc per byte, 1.0 s for a 16 MiB line (trial_limits, session 46).
  // NUL bytes are kept (and fail the parse), as any other byte.
  static bool ReadLine(std::FILE* in, std::string* line) {
    line->clear();
    bool too_long = false;
    int c;
    flockfile(in);
    while ((c = getc_unlocked(in)) != EOF) {
      if (c == '\n') break;
      if (too_long) continue;
      if (line->size() >= kMaxMessageBytes) {
        too_long = true;
        line->clear();
        continue;
      }
      line->push_back(static_cast<char>(c));
    }
    const bool ended = c == EOF;
    funlockfile(in);
    return !ended || !line->empty() || too_long;
  }

  static std::string Reply(const std::string& id, const std::string& result) {
    return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + result + "}";
  }
  // The message is for people (a client shows it): control and bidi
  // characters of a path or name in it are shown as \xNN / \uXXXX.
  static std::string Error(const std::string& id, const RpcError& e) {
    return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":" + std::to_string(e.code) +
           ",\"message\":" + JsonString(EscapeControls(e.message, /*keep_line_breaks=*/true)) + "}}";
  }

  std::string Handle(const std::string& line) {
    simdjson::dom::element message;
    const simdjson::error_code parsed = line.empty() ? simdjson::EMPTY : parser_.parse(line).get(message);
    if (parsed == simdjson::NUMBER_ERROR && NumbersWellFormed(line)) {
      // Valid JSON with a number past what a 64-bit integer or a double
      // holds (an id 12345678901234567890123 or 1e400): not a parse error;
      // its id cannot be read, so the answer's id is null.
      return Error("null", {-32600,
                            "invalid request: a number out of range; an id must be a string or an integer "
                            "of at most 64 bits"});
    }
    if (parsed != simdjson::SUCCESS) {
      return Error("null", {-32700, "parse error: not one JSON message per line (at most 16 MiB)"});
    }
    if (!message.is_object()) return Error("null", {-32600, "invalid request: not a message object"});
    // A response from the client (result or error, no method): JSON-RPC
    // answers nothing to a response. This server asks the client nothing, so
    // it is dropped.
    if (Field(message, "method").error() == simdjson::NO_SUCH_FIELD &&
        (Field(message, "result").error() == simdjson::SUCCESS ||
         Field(message, "error").error() == simdjson::SUCCESS)) {
      return "";
    }
    simdjson::dom::element id_element;
    const bool has_id = Field(message, "id").get(id_element) == simdjson::SUCCESS;
    std::string id = has_id ? simdjson::minify(id_element) : "null";
    if (has_id && !id_element.is_string() && !id_element.is_int64() && !id_element.is_uint64()) {
      // MCP's ids are strings or integers. A number with a fraction is a
      // JSON-RPC id all the same, so it is echoed (the client can tell
      // which request failed); an object, array or boolean is not one: null.
      return Error(id_element.is_double() ? id : "null",
                   {-32600, "invalid request: id must be a string or an integer"});
    }
    std::string_view version;
    if (Field(message, "jsonrpc").get(version) != simdjson::SUCCESS || version != "2.0") {
      return Error(id, {-32600, "invalid request: \"jsonrpc\" must be \"2.0\""});
    }
    std::string_view method;
    if (Field(message, "method").get(method) != simdjson::SUCCESS) {
      return Error(id, {-32600, "invalid request: no method"});
    }
    if (!has_id) return "";  // notifications (notifications/initialized, cancelled) need no answer
    std::string result;
    std::optional<RpcError> error = Dispatch(method, message, &result);
    if (!error && result.size() > kMaxAnswerBytes) {
      const std::string too_big =
          "this answer would be " + MiB(result.size()) + ", over the " + MiB(kMaxAnswerBytes) +
          " one answer may hold here (an MCP client may close the session on a larger message: the TypeScript "
          "SDK's does past 10 MiB); ask for less (query: fewer rows or columns; analyze: 'only'; summary: 'top')";
      if (method == "tools/call") {
        result = ToolResult(too_big, "", true);
      } else {
        error = RpcError{-32603, too_big};
      }
    }
    return error ? Error(id, *error) : Reply(id, result);
  }

  std::optional<RpcError> Dispatch(std::string_view method, simdjson::dom::element message, std::string* result) {
    simdjson::dom::element params;
    const bool has_params = Field(message, "params").get(params) == simdjson::SUCCESS && params.is_object();
    if (method == "initialize") {
      std::string_view asked;
      std::string version = kProtocolVersions[0];
      if (has_params && Field(params, "protocolVersion").get(asked) == simdjson::SUCCESS) {
        for (const char* v : kProtocolVersions) {
          if (asked == v) version = v;
        }
      }
      // 2024-11-05 has no structuredContent (nor outputSchema): the text
      // carries the document either way (ToolResult).
      structured_content_.store(version != "2024-11-05");
      *result = "{\"protocolVersion\":" + JsonString(version) +
                ",\"capabilities\":{\"tools\":{\"listChanged\":false},\"resources\":{\"listChanged\":false}},"
                "\"serverInfo\":{\"name\":\"aiprof\",\"version\":" + JsonString(AIPROF_VERSION) + "}}";
      return std::nullopt;
    }
    if (method == "ping") {
      *result = "{}";
      return std::nullopt;
    }
    if (method == "tools/list") {
      *result = "{\"tools\":" + ToolsJson(structured_content_.load()) + "}";
      return std::nullopt;
    }
    if (method == "resources/list") {
      std::string list = "[";
      for (const auto& [id, t] : traces_) {
        if (list.size() > 1) list += ',';
        list += "{\"uri\":" + JsonString("aiprof://trace/" + id) + ",\"name\":" + JsonString(id) +
                ",\"description\":" + JsonString(TerminalSafe(t.path)) + ",\"mimeType\":\"application/json\"}";
      }
      *result = "{\"resources\":" + list + "]}";
      return std::nullopt;
    }
    if (method == "resources/templates/list") {
      *result = "{\"resourceTemplates\":[]}";
      return std::nullopt;
    }
    if (method == "resources/read") {
      // A loaded trace's summary (the summary tool's document).
      std::string_view uri;
      if (!has_params || Field(params, "uri").get(uri) != simdjson::SUCCESS) {
        return RpcError{-32602, "invalid params: resources/read needs a uri"};
      }
      constexpr std::string_view kPrefix = "aiprof://trace/";
      auto it = uri.starts_with(kPrefix) ? traces_.find(std::string(uri.substr(kPrefix.size()))) : traces_.end();
      if (it == traces_.end()) {
        // The specification's code for a resource that does not exist.
        return RpcError{-32002,
                        "resource not found: " + std::string(uri) + " (resources/list names the loaded traces)"};
      }
      *result = "{\"contents\":[{\"uri\":" + JsonString(uri) +
                ",\"mimeType\":\"application/json\",\"text\":" + JsonString(SummaryJson(it->second)) + "}]}";
      return std::nullopt;
    }
    if (method == "tools/call") {
      std::string_view name;
      if (!has_params || Field(params, "name").get(name) != simdjson::SUCCESS) {
        return RpcError{-32602, "invalid params: tools/call needs a tool name"};
      }
      simdjson::dom::element args;
      if (Field(params, "arguments").get(args) != simdjson::SUCCESS) {
        args = simdjson::dom::element();
        if (parser_args_.parse(std::string_view("{}")).get(args) != simdjson::SUCCESS) return RpcError{-32603, "internal"};
      }
      if (!args.is_object()) return RpcError{-32602, "invalid params: arguments must be an object"};
      if (auto e = CheckArguments(name, args)) return e;
      return CallTool(name, args, result);
    }
    return RpcError{-32601, "method not found: " + std::string(method)};
  }

  // A tool's answer, on one line (stdio framing is one message per line;
  // reports are pretty-printed): a short text for people, then the
  // document serialized as JSON in a second text block, and the document
  // as structuredContent. The MCP specification (2025-06-18, "Structured
  // content") says a tool that returns structured content SHOULD also
  // return it as JSON text, and 2024-11-05 has no structuredContent, so
  // under that version only the text carries it (clients that hand only
  // `content` to the model get the data either way).
  // The text is for people (clients show it, terminal ones too): control
  // and bidi characters of a path or a trace's name in it are shown as
  // \xNN / \uXXXX (line breaks and tabs kept); in the JSON text they are
  // JSON escapes (\u001b, \u202e), so it parses back to the document. The
  // structured document is data: paths and names as they are, JSON-escaped.
  std::string ToolResult(const std::string& text, const std::string& structured, bool is_error = false) {
    std::string r =
        "{\"content\":[{\"type\":\"text\",\"text\":" + JsonString(EscapeControls(text, /*keep_line_breaks=*/true)) +
        "}";
    if (!structured.empty()) {
      simdjson::dom::element doc;
      if (parser_doc_.parse(structured).get(doc) != simdjson::SUCCESS) {
        return ToolResult("internal error: a report was not valid JSON", "", true);
      }
      const std::string json = simdjson::minify(doc);
      r += ",{\"type\":\"text\",\"text\":" + JsonString(JsonForText(json)) + "}]";
      if (structured_content_.load()) r += ",\"structuredContent\":" + json;
    } else {
      r += "]";
    }
    r += std::string(",\"isError\":") + (is_error ? "true" : "false") + "}";
    return r;
  }

  // Validation of two loaded traces, each read through its own session (no
  // second import): the validation document of `aiprof validate`, by the
  // same sequence (ValidateRuns).
  std::optional<RpcError> ValidateTool(simdjson::dom::element args, std::string* result) {
    LoadedTrace *before = nullptr, *after = nullptr;
    if (auto e = TraceArg(args, &before, "before")) return e;
    if (auto e = TraceArg(args, &after, "after")) return e;
    ValidateRunsOptions options;
    std::string_view unit;
    if (Field(args, "unit").get(unit) == simdjson::SUCCESS) {
      if (unit.empty()) return RpcError{-32602, "invalid params: 'unit' is 'step' or a span name"};
      options.inputs.unit = std::string(unit);
    }
    double alpha = 0;
    simdjson::dom::element alpha_element;
    if (Field(args, "alpha").get(alpha_element) == simdjson::SUCCESS) {
      if (alpha_element.get(alpha) != simdjson::SUCCESS || !(alpha > 0 && alpha <= 0.5)) {
        return RpcError{-32602, "invalid params: 'alpha' is a number in (0, 0.5]"};
      }
      options.validation.alpha = alpha;
    }
    std::string_view fix, scenario_text, statistic;
    if (Field(args, "fix_id").get(fix) == simdjson::SUCCESS) options.prediction.fix_id = std::string(fix);
    // Present but of another type is an error, not "not given".
    const bool has_scenario = Field(args, "scenario").error() != simdjson::NO_SUCH_FIELD;
    const bool has_statistic = Field(args, "statistic").error() != simdjson::NO_SUCH_FIELD;
    if (has_scenario && Field(args, "scenario").get(scenario_text) != simdjson::SUCCESS) {
      return RpcError{-32602, "invalid params: 'scenario' is a string"};
    }
    if (has_statistic && (!has_scenario || Field(args, "statistic").get(statistic) != simdjson::SUCCESS)) {
      return RpcError{-32602, "invalid params: 'statistic' is 'median' or 'mean', with 'scenario'"};
    }
    if (has_scenario && !options.prediction.fix_id.empty()) {
      return RpcError{-32602, "invalid params: give 'fix_id' or 'scenario', not both"};
    }
    if (has_scenario) {
      StatusOr<bool> mean = JudgeOnMean(scenario_text, statistic);
      if (!mean.ok()) return RpcError{-32602, "invalid params: " + mean.status().message()};
      options.prediction.scenario = std::string(scenario_text);
      options.prediction.mean = *mean;
      // Corrected by the past cases in the session's knowledge database (the
      // default one), as `aiprof validate --scenario` and the fix_id path.
      StatusOr<std::vector<KnowledgeCard>> cards = AllCards(before->session->options().db);
      if (!cards.ok()) {
        *result = ToolResult(cards.status().message(), "", true);
        return std::nullopt;
      }
      options.prediction.cards = std::move(*cards);
    }
    options.prediction.fix_id_argument = "'fix_id'";
    options.before_side = "before";
    options.after_side = "after";
    options.fix_id_argument = "'fix_id'";
    options.scenario_argument = "'scenario'";
    // The loaded sessions keep every card for their suggestions, as `aiprof
    // suggest`; the check reads the before trace through a session of its
    // own where a card of these very inputs must not correct it.
    StatusOr<ValidationResult> v = ValidateRuns({ValidateRun::Loaded(before->path, before->session.get())},
                                                {ValidateRun::Loaded(after->path, after->session.get())}, options);
    if (!v.ok()) {
      *result = ToolResult(v.status().message(), "", true);
      return std::nullopt;
    }
    *result = ToolResult("validation of " + after->path + " against " + before->path + ": " + VerdictText(v->overall),
                         ValidationToJson(*v));
    return std::nullopt;
  }

  // The structural diff of two loaded traces, each through its own session:
  // the document of `aiprof diff` as structured content.
  std::optional<RpcError> DiffTool(simdjson::dom::element args, std::string* result) {
    LoadedTrace *a = nullptr, *b = nullptr;
    if (auto e = TraceArg(args, &a, "a")) return e;
    if (auto e = TraceArg(args, &b, "b")) return e;
    DiffOptions options;
    int64_t top = 20;
    simdjson::dom::element top_element;
    if (Field(args, "top").get(top_element) == simdjson::SUCCESS &&
        (top_element.get(top) != simdjson::SUCCESS || top < 1 || top > 1000)) {
      return RpcError{-32602, "invalid params: 'top' is an integer in [1, 1000]"};
    }
    options.top_n = static_cast<size_t>(top);
    DiffNameMap map;
    std::string_view map_path;
    if (Field(args, "map").get(map_path) == simdjson::SUCCESS) {
      std::string why;
      std::optional<fs::path> confined = Confine(map_path, &why);
      if (!confined) return RpcError{-32602, "invalid params: " + why};
      auto loaded = DiffNameMap::Load(confined->string());
      if (!loaded.ok()) {
        *result = ToolResult(loaded.status().message(), "", true);
        return std::nullopt;
      }
      map = std::move(*loaded);
      options.map = &map;
    }
    // 'warmup_steps': both runs over one window, through sessions of their
    // own (the loaded ones keep the detected warm-up for the other tools).
    int64_t warmup = -1;
    simdjson::dom::element warmup_element;
    if (Field(args, "warmup_steps").get(warmup_element) == simdjson::SUCCESS &&
        (warmup_element.get(warmup) != simdjson::SUCCESS || warmup < 0 || warmup > 1'000'000)) {
      return RpcError{-32602, "invalid params: 'warmup_steps' is an integer in [0, 1000000]"};
    }
    std::unique_ptr<AnalysisSession> own_a, own_b;
    auto session_of = [warmup](const LoadedTrace& t, std::unique_ptr<AnalysisSession>* own) {
      if (warmup < 0) return t.session.get();
      SessionOptions o = t.session->options();
      o.analyze.warmup_steps = static_cast<int>(warmup);
      *own = t.With(std::move(o));
      return own->get();
    };
    AnalysisSession* sa = session_of(*a, &own_a);
    AnalysisSession* sb = session_of(*b, &own_b);
    const AttributionResult& ra = sa->results().Get(kAttributionByShape);
    const AttributionResult& rb = sb->results().Get(kAttributionByShape);
    if (!ra.available || !rb.available) {
      *result = ToolResult((!ra.available ? a->path + ": " + ra.problem : b->path + ": " + rb.problem), "", true);
      return std::nullopt;
    }
    AttributionDiff d = DiffAttribution(a->trace(), ra, b->trace(), rb, options);
    const int w = static_cast<int>(warmup);
    render::Document doc = DiffToDocument(
        {a->path, &a->trace(), &ra, w, SteadyStepsAreHostOnly(sa->results().Get(kCriticalPath))},
        {b->path, &b->trace(), &rb, w, SteadyStepsAreHostOnly(sb->results().Get(kCriticalPath))}, d, options.top_n);
    *result = ToolResult("diff of " + b->path + " against " + a->path + ": " + std::to_string(d.matched) +
                             " nodes matched, " + std::to_string(d.added) + " added, " + std::to_string(d.removed) +
                             " removed",
                         render::RenderJson(doc));
    return std::nullopt;
  }

  std::optional<RpcError> TraceArg(simdjson::dom::element args, LoadedTrace** out, const char* key = "trace") {
    std::string_view id;
    if (Field(args, key).get(id) != simdjson::SUCCESS) {
      return RpcError{-32602, std::string("invalid params: '") + key + "' (a string) is required"};
    }
    auto it = traces_.find(std::string(id));
    if (it == traces_.end()) return RpcError{-32602, "invalid params: no trace " + std::string(id) + " (load_trace first)"};
    *out = &it->second;
    return std::nullopt;
  }

  // The summary tool's document (also a trace resource's content).
  static std::string SummaryJson(const LoadedTrace& t, size_t top = 0) {
    SummaryReportOptions options;
    options.top_n = top;
    AddResultFigures(t.session->results(), &options);
    return SummaryToJson(t.trace(), t.session->results().Get(kSummary), options);
  }

  // The tool's arguments against its inputSchema (ToolsJson): every
  // argument is one the tool takes, of its JSON type; the tool's own code
  // checks values and required ones.
  std::optional<RpcError> CheckArguments(std::string_view tool, simdjson::dom::element args) {
    if (schemas_.empty()) {
      simdjson::dom::parser p;
      simdjson::dom::array tools;
      if (p.parse(ToolsJson()).get(tools) != simdjson::SUCCESS) return RpcError{-32603, "internal: tool schemas"};
      for (simdjson::dom::element t : tools) {
        std::string_view tool_name;
        simdjson::dom::object props;
        if (t["name"].get(tool_name) != simdjson::SUCCESS ||
            t["inputSchema"]["properties"].get(props) != simdjson::SUCCESS) {
          continue;
        }
        auto& args_of = schemas_[std::string(tool_name)];
        for (auto [key, schema] : props) {
          std::vector<std::string> types;
          std::string_view type;
          simdjson::dom::array one_of;
          if (schema["type"].get(type) == simdjson::SUCCESS) {
            types.emplace_back(type);
          } else if (schema["oneOf"].get(one_of) == simdjson::SUCCESS) {
            for (simdjson::dom::element alt : one_of) {
              if (alt["type"].get(type) == simdjson::SUCCESS) types.emplace_back(type);
            }
          }
          args_of.emplace_back(std::string(key), std::move(types));
        }
      }
    }
    auto tool_it = schemas_.find(std::string(tool));
    if (tool_it == schemas_.end()) return std::nullopt;  // CallTool names an unknown tool
    simdjson::dom::object given = args;
    for (auto [key, value] : given) {
      const std::vector<std::string>* types = nullptr;
      for (const auto& [name, t] : tool_it->second) {
        if (name == key) types = &t;
      }
      if (types == nullptr) {
        std::string takes;
        for (const auto& [name, t] : tool_it->second) takes += (takes.empty() ? "" : ", ") + name;
        return RpcError{-32602, "invalid params: " + std::string(tool) + " takes no argument '" + std::string(key) +
                                    "' (it takes: " + (takes.empty() ? "none" : takes) + ")"};
      }
      auto is = [&, value = value](const std::string& t) {
        switch (value.type()) {
          case simdjson::dom::element_type::ARRAY: return t == "array";
          case simdjson::dom::element_type::OBJECT: return t == "object";
          case simdjson::dom::element_type::STRING: return t == "string";
          case simdjson::dom::element_type::INT64:
          case simdjson::dom::element_type::UINT64: return t == "integer" || t == "number";
          case simdjson::dom::element_type::DOUBLE: return t == "number";
          case simdjson::dom::element_type::BOOL: return t == "boolean";
          case simdjson::dom::element_type::NULL_VALUE: return t == "null";
          default: return false;
        }
      };
      if (!types->empty() && std::none_of(types->begin(), types->end(), is)) {
        std::string want;
        for (const std::string& t : *types) want += (want.empty() ? "" : " or ") + t;
        return RpcError{-32602, "invalid params: '" + std::string(key) + "' must be " +
                                    (want == "array" || want == "integer" ? "an " : "a ") + want};
      }
    }
    return std::nullopt;
  }

  // The canonical path if it lies inside an allowed directory.
  std::optional<fs::path> Confine(std::string_view path, std::string* why) const {
    if (path.find('\0') != std::string_view::npos) {  // the OS would read it as shorter (found by review)
      *why = "a path with a NUL byte";
      return std::nullopt;
    }
    auto inside = [&](const fs::path& p) {
      for (const fs::path& dir : allowed_) {
        auto [d, q] = std::mismatch(dir.begin(), dir.end(), p.begin(), p.end());
        if (d == dir.end()) return true;
      }
      return false;
    };
    const std::string outside = std::string(path) + ": outside the directories this server was allowed (--allow)";
    std::error_code ec;
    fs::path canonical = fs::canonical(fs::path(path), ec);
    if (ec) {
      // Whether a path outside the allowed directories exists is not told:
      // one answer for all of them. The part of the path that exists is
      // resolved (symlinks included), the rest taken as written.
      // Made absolute first: weakly_canonical leaves a relative path whose
      // first part does not exist relative, which no allowed directory
      // holds ("nonexist.json" was "outside" where "./nonexist.json" was
      // "No such file or directory").
      const std::string error = ec.message();
      const fs::path absolute = fs::absolute(fs::path(path), ec);
      const fs::path resolved = ec ? fs::path() : fs::weakly_canonical(absolute, ec);
      *why = !ec && inside(resolved) ? std::string(path) + ": " + error : outside;
      return std::nullopt;
    }
    if (inside(canonical)) return canonical;
    *why = outside;
    return std::nullopt;
  }

  // The tools, one entry each (McpTools); the handlers follow.
  std::optional<RpcError> CallTool(std::string_view name, simdjson::dom::element args, std::string* result) {
    for (const McpTool& tool : McpTools()) {
      if (tool.name != name) continue;
      if (tool.on_trace == nullptr) return (this->*tool.handler)(args, result);
      LoadedTrace* t = nullptr;
      if (auto e = TraceArg(args, &t)) return e;
      return (this->*tool.on_trace)(*t, args, result);
    }
    return RpcError{-32602, "invalid params: no tool named " + std::string(name)};
  }

  std::optional<RpcError> LoadTraceTool(simdjson::dom::element args, std::string* result) {
    std::string_view path;
    if (Field(args, "path").get(path) != simdjson::SUCCESS)
      return RpcError{-32602, "invalid params: 'path' (a string) is required"};
    std::string why;
    std::optional<fs::path> confined = Confine(path, &why);
    if (!confined) return RpcError{-32602, "invalid params: " + why};
    // The same file or folder, unchanged (StampOf: a folder's files are
    // read, so one rewritten in place counts), loaded before: its id again,
    // no second import (8 loads of one path filled the session).
    const std::optional<FileStamp> identity = StampOf(*confined);
    for (const auto& [id, t] : traces_) {
      if (identity && t.path == confined->string() && t.identity == *identity) {
        const size_t slices = t.trace().slices.size();
        *result = ToolResult(
            "already loaded " + t.path + " as " + id + " (" + std::to_string(slices) + " slices; unchanged since)",
            "{\"trace\":" + JsonString(id) + ",\"path\":" + JsonString(t.path) +
                ",\"slices\":" + std::to_string(slices) + ",\"reused\":true}");
        return std::nullopt;
      }
    }
    if (traces_.size() >= kMaxLoadedTraces) {
      *result = ToolResult(
          "at most " + std::to_string(kMaxLoadedTraces) + " traces may be loaded; unload_trace forgets one", "", true);
      return std::nullopt;
    }
    SessionOptions options;
    options.input = confined->string();
    auto session = AnalysisSession::Open(options);
    if (!session.ok()) {
      *result = ToolResult(session.status().message(), "", true);
      return std::nullopt;
    }
    auto engine = QueryEngine::Open((*session)->trace());
    if (!engine.ok()) {
      *result = ToolResult(engine.status().message(), "", true);
      return std::nullopt;
    }
    if (Cancelled()) return std::nullopt;  // no response is sent; the import is dropped
    std::string id = "t" + std::to_string(++next_id_);
    const size_t slices = (*session)->trace().slices.size();
    traces_[id] =
        LoadedTrace{confined->string(), identity.value_or(FileStamp{}), std::move(*session), std::move(*engine)};
    *result = ToolResult("loaded " + confined->string() + " as " + id + " (" + std::to_string(slices) + " slices)",
                         "{\"trace\":" + JsonString(id) + ",\"path\":" + JsonString(confined->string()) +
                             ",\"slices\":" + std::to_string(slices) + ",\"reused\":false}");
    return std::nullopt;
  }

  std::optional<RpcError> UnloadTraceTool(const LoadedTrace& t, simdjson::dom::element, std::string* result) {
    auto it = std::find_if(traces_.begin(), traces_.end(), [&t](const auto& e) { return &e.second == &t; });
    const std::string key = it->first, path = t.path;
    traces_.erase(it);
    *result = ToolResult("unloaded " + key + " (" + path + ")",
                         "{\"trace\":" + JsonString(key) + ",\"path\":" + JsonString(path) + "}");
    return std::nullopt;
  }

  std::optional<RpcError> ListTracesTool(simdjson::dom::element, std::string* result) {
    std::string list = "[";
    for (const auto& [id, t] : traces_) {
      if (list.size() > 1) list += ',';
      list += "{\"trace\":" + JsonString(id) + ",\"path\":" + JsonString(t.path) +
              ",\"slices\":" + std::to_string(t.trace().slices.size()) + "}";
    }
    *result = ToolResult(std::to_string(traces_.size()) + " traces loaded", "{\"traces\":" + list + "]}");
    return std::nullopt;
  }

  std::optional<RpcError> SummaryTool(const LoadedTrace& t, simdjson::dom::element args, std::string* result) {
    // 'top': the N ops with the most self time, as `aiprof summary --top N`
    // (0, the default: every op), so a trace with very many op names
    // still has a summary that fits one answer.
    int64_t top = 0;
    simdjson::dom::element top_element;
    if (Field(args, "top").get(top_element) == simdjson::SUCCESS &&
        (top_element.get(top) != simdjson::SUCCESS || top < 0)) {
      return RpcError{-32602, "invalid params: 'top' is an integer >= 0 (0: every op)"};
    }
    const Summary& summary = t.session->results().Get(kSummary);
    *result = ToolResult("summary of " + t.path + ": " + std::to_string(summary.ops.size()) + " ops" +
                             (top > 0 && static_cast<size_t>(top) < summary.ops.size()
                                  ? " (the " + std::to_string(top) + " with the most self time listed)"
                                  : "") +
                             ", " + std::to_string(summary.slice_count) + " slices",
                         SummaryJson(t, static_cast<size_t>(top)));
    return std::nullopt;
  }

  std::optional<RpcError> AnalyzeTool(const LoadedTrace& t, simdjson::dom::element args, std::string* result) {
    AnalyzeOptions options;
    simdjson::dom::array only;
    if (Field(args, "only").get(only) == simdjson::SUCCESS) {
      for (simdjson::dom::element e : only) {
        std::string_view n;
        if (e.get(n) != simdjson::SUCCESS) return RpcError{-32602, "invalid params: 'only' holds analysis names"};
        bool known = false;
        for (std::string_view a : AnalysisNames()) known |= a == n;
        if (!known) {
          std::string names;
          for (std::string_view a : AnalysisNames()) names += (names.empty() ? "" : ", ") + std::string(a);
          return RpcError{-32602,
                          "invalid params: no analysis named " + std::string(n) + " (there are: " + names + ")"};
        }
        options.only.emplace_back(n);
      }
    }
    std::unique_ptr<AnalysisSession> own;
    if (!options.only.empty()) {
      SessionOptions o;
      o.analyze = options;
      own = t.With(std::move(o));
    }
    AnalysisSession& session = own ? *own : *t.session;
    *result = ToolResult("analyses of " + t.path,
                         render::RenderJson(AnalyzeToDocument(session.analyses(), session.results())));
    return std::nullopt;
  }

  std::optional<RpcError> DiagnoseTool(const LoadedTrace& t, simdjson::dom::element args, std::string* result) {
    return Diagnose(/*suggest=*/false, t, args, result);
  }

  std::optional<RpcError> SuggestTool(const LoadedTrace& t, simdjson::dom::element args, std::string* result) {
    return Diagnose(/*suggest=*/true, t, args, result);
  }

  std::optional<RpcError> SchemaTool(const LoadedTrace& t, simdjson::dom::element, std::string* result) {
    *result = ToolResult(t.engine->Schema(), "");
    return std::nullopt;
  }

  std::optional<RpcError> QueryTool(const LoadedTrace& t, simdjson::dom::element args, std::string* result) {
    std::string_view sql;
    if (Field(args, "sql").get(sql) != simdjson::SUCCESS)
      return RpcError{-32602, "invalid params: 'sql' (a string) is required"};
    QueryLimits limits;
    limits.max_rows = kMcpDefaultMaxRows;
    limits.max_result_bytes = kMcpMaxResultBytes;
    limits.max_value_bytes = kServerQueryMaxValueBytes;
    limits.max_sql_bytes = kServerQueryMaxSqlBytes;
    limits.cancel = cancel_;
    int64_t max_rows = 0;
    simdjson::dom::element max_rows_element;
    if (Field(args, "max_rows").get(max_rows_element) == simdjson::SUCCESS) {
      if (max_rows_element.get(max_rows) != simdjson::SUCCESS || max_rows < 1 ||
          max_rows > static_cast<int64_t>(kMcpMaxRows)) {
        return RpcError{-32602, "invalid params: 'max_rows' is an integer from 1 to 100000"};
      }
      limits.max_rows = static_cast<size_t>(max_rows);
    }
    auto r = t.engine->Execute(sql, limits, "(mcp)");
    if (!r.ok()) {
      *result = ToolResult(r.status().message(), "", true);
      return std::nullopt;
    }
    *result = QueryAnswer(*std::move(r), limits.max_rows);
    return std::nullopt;
  }

  // A query's answer: its rows, cut where the whole message would pass
  // kMaxAnswerBytes (the rows are in it twice: the JSON text and
  // structuredContent), with `truncated` set and the text saying so.
  std::string QueryAnswer(QueryResult r, size_t max_rows) {
    const size_t fetched = r.rows.size();
    const bool cut_by_rows = r.truncated;
    for (;;) {
      std::string json = QueryResultToJson(r);
      while (!json.empty() && json.back() == '\n') json.pop_back();
      if (r.rows.empty() && fetched > 0) {
        return ToolResult("the query's first row alone passes the " + MiB(kMaxAnswerBytes) +
                              " one answer may hold here: select fewer or shorter columns (substr, length)",
                          "", true);
      }
      std::string text = std::to_string(r.rows.size()) + " rows";
      if (r.rows.size() < fetched) {
        text += " (cut from " + std::to_string(fetched) + (cut_by_rows ? "+" : "") + " to keep this answer under " +
                MiB(kMaxAnswerBytes) + ": select fewer or shorter columns, or page with LIMIT/OFFSET)";
      } else if (r.truncated) {
        text += " (cut at max_rows " + std::to_string(max_rows) + ")";
      }
      std::string answer = ToolResult(text, json);
      // A row of one reply ~= its share; 90% of the proportion leaves room
      // for the text, so this ends in a step or two.
      if (answer.size() <= kMaxAnswerBytes - 4096 || r.rows.empty()) return answer;
      const size_t keep = std::min(r.rows.size() - 1, static_cast<size_t>(static_cast<double>(r.rows.size()) * 0.9 *
                                                                          static_cast<double>(kMaxAnswerBytes) /
                                                                          static_cast<double>(answer.size())));
      r.rows.resize(keep);
      r.truncated = true;
    }
  }

  static std::string MiB(size_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
    return buf;
  }

  // diagnose / suggest from the trace's session (no second import).
  std::optional<RpcError> Diagnose(bool suggest, const LoadedTrace& t, simdjson::dom::element args,
                                   std::string* result) {
    SuggestOptions options;
    std::string_view target = "latency", constraints;
    if (suggest) {
      simdjson::dom::element e;
      if (Field(args, "target").get(e) == simdjson::SUCCESS && e.get(target) != simdjson::SUCCESS) {
        return RpcError{-32602, "invalid params: 'target' is latency, throughput or memory"};
      }
      if (target != "latency" && target != "throughput" && target != "memory") {
        return RpcError{-32602, "invalid params: 'target' is latency, throughput or memory"};
      }
      if (Field(args, "constraints").get(e) == simdjson::SUCCESS && e.get(constraints) != simdjson::SUCCESS) {
        return RpcError{-32602, "invalid params: 'constraints' is a string"};
      }
      options.target = std::string(target);
      auto parsed = ParseConstraints(std::string(constraints));
      if (!parsed.ok()) return RpcError{-32602, "invalid params: " + parsed.status().message()};
      options.constraints = std::move(*parsed);
    }
    // The trace's own session unless the target or constraints differ.
    std::unique_ptr<AnalysisSession> own;
    if (options.target != SuggestOptions{}.target || !options.constraints.empty()) {
      SessionOptions o;
      o.suggest = options;
      own = t.With(std::move(o));
    }
    AnalysisSession& session = own ? *own : *t.session;
    auto diagnosis = session.diagnosis();
    if (!diagnosis.ok()) {
      *result = ToolResult(diagnosis.status().message(), "", true);
      return std::nullopt;
    }
    const SuggestResult* suggestions = nullptr;
    if (suggest) {
      auto s = session.suggestions();
      if (!s.ok()) {
        *result = ToolResult(s.status().message(), "", true);
        return std::nullopt;
      }
      suggestions = *s;
    }
    DiagnosisReport report{t.path, &session.metrics(), *diagnosis, suggestions, suggest ? &options : nullptr};
    const size_t findings = (*diagnosis)->findings.size();
    std::string text = std::string(suggest ? "suggestions" : "diagnosis") + " of " + t.path + ": " +
                       std::to_string(findings) + " findings";
    if (suggestions) text += ", " + std::to_string(suggestions->kept.size()) + " suggestions kept";
    *result = ToolResult(text, TreeToJson(DiagnosisTree(report)));
    return std::nullopt;
  }

  // whatif: each scenario replayed over the trace's critical path (computed
  // once in its session); the whatif document, as `aiprof whatif --format json`.
  std::optional<RpcError> WhatIfTool(const LoadedTrace& t, simdjson::dom::element args, std::string* result) {
    std::vector<std::string_view> texts;
    simdjson::dom::element arg;
    std::string_view one;
    simdjson::dom::array many;
    if (Field(args, "scenario").get(arg) != simdjson::SUCCESS) {
      return RpcError{-32602, "invalid params: 'scenario' (a string or an array of strings) is required"};
    }
    if (arg.get(one) == simdjson::SUCCESS) {
      texts.push_back(one);
    } else if (arg.get(many) == simdjson::SUCCESS) {
      for (simdjson::dom::element e : many) {
        if (e.get(one) != simdjson::SUCCESS) return RpcError{-32602, "invalid params: 'scenario' holds strings"};
        texts.push_back(one);
      }
    }
    if (texts.empty() || texts.size() > kMaxWhatIfScenarios) {
      return RpcError{-32602, "invalid params: 'scenario' is a string or 1 to " + std::to_string(kMaxWhatIfScenarios) +
                                  " strings"};
    }
    std::vector<Scenario> scenarios;
    for (std::string_view text : texts) {
      auto parsed = ParseScenario(text);
      if (!parsed.ok()) return RpcError{-32602, "invalid params: " + parsed.status().message()};
      // device NAME: looked up in the devices files (LoadDevices' order).
      if (Status st = ResolveScenarioDevices(t.trace(), "", &*parsed); !st.ok()) {
        return RpcError{-32602, "invalid params: " + st.message()};
      }
      scenarios.push_back(std::move(*parsed));
    }
    std::vector<WhatIfResult> results;
    for (const Scenario& sc : scenarios) {
      if (Cancelled()) return std::nullopt;  // no response is sent
      results.push_back(t.session->WhatIf(sc));
    }
    auto json = render::RenderDocument(
        WhatIfToDocument(results, WholeTraceWindows(t.session->results().Get(kCriticalPath))), "json");
    if (!json.ok()) {
      *result = ToolResult(json.status().message(), "", true);
      return std::nullopt;
    }
    std::string text = "what-if on " + t.path + " (time base: step wall time, from the step's start to the end of the "
                       "last work it launched; medians of the steady steps)";
    for (const WhatIfResult& r : results) {
      text += "\n" + r.scenario + ": ";
      if (r.steady_steps == 0) {
        text += "no step to predict";
      } else {
        text += "measured " + FormatDurationNs(r.measured_ns) + ", predicted " + FormatDurationNs(r.predicted_ns) +
                " per steady step (" + std::to_string(r.steady_steps) + " steps; " + std::to_string(r.slices_changed) +
                " slice durations changed)";
      }
    }
    *result = ToolResult(text, *json);
    return std::nullopt;
  }

  std::vector<fs::path> allowed_;
  std::FILE* out_ = nullptr;
  // Whether tool results carry structuredContent: not for a client that
  // negotiated 2024-11-05 (set by initialize on the reading thread).
  std::atomic<bool> structured_content_{true};
  std::mutex out_mu_;  // one reply at a time on stdout
  simdjson::dom::parser reader_parser_;  // the reading thread's
  std::mutex mu_;  // guards queue_, in_flight_, input_done_
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  std::multimap<std::string, std::shared_ptr<std::atomic<bool>>> in_flight_;
  bool input_done_ = false;
  const std::atomic<bool>* cancel_ = nullptr;  // the worker's running call
  // The worker's (everything below).
  simdjson::dom::parser parser_;
  simdjson::dom::parser parser_args_;
  simdjson::dom::parser parser_doc_;
  // Per tool, its arguments and their JSON types (from ToolsJson, parsed once).
  std::map<std::string, std::vector<std::pair<std::string, std::vector<std::string>>>> schemas_;
  std::map<std::string, LoadedTrace> traces_;
  int next_id_ = 0;
};

// The tools, in the order tools/list gives them. Every inputSchema refuses
// arguments it does not name (additionalProperties false), as
// CheckArguments does, and analyze's `only` lists the analyses' names, so a
// client validates what the server checks. To add a tool: one entry here
// and its handler.
const std::vector<McpServer::McpTool>& McpServer::McpTools() {
  static const std::vector<McpTool> tools = [] {
    std::string analysis_names;
    for (std::string_view a : AnalysisNames()) analysis_names += (analysis_names.empty() ? "" : ",") + JsonString(a);
    return std::vector<McpTool>{
        {.name = "load_trace",
         .description = "Import a trace file or folder (Kineto/Chrome JSON, nsys SQLite, Ascend, .aiprof) under an "
                        "allowed directory; returns its id; a path already loaded and unchanged since keeps its id",
         .properties = R"("path":{"type":"string"})",
         .required = {"path"},
         .handler = &McpServer::LoadTraceTool},
        {.name = "list_traces", .description = "Traces loaded so far", .handler = &McpServer::ListTracesTool},
        {.name = "unload_trace",
         .description = "Forget a loaded trace: its id no longer answers; at most 8 are loaded at once",
         .on_trace = &McpServer::UnloadTraceTool},
        {.name = "summary",
         .description = "aiprof summary: per-op statistics, devices, steps, event counts, import diagnostics, as "
                        "docs/summary-schema.md describes; 'top' lists only the N ops with the most self time, "
                        "profiler wrappers (ProfilerStep#N, ...) left out, as aiprof summary --top N and its text "
                        "table; 0, the default, lists every op, the wrappers last",
         .properties = R"("top":{"type":"integer","minimum":0})",
         .on_trace = &McpServer::SummaryTool},
        {.name = "analyze",
         .description = "aiprof analyze: the analyses' metrics and evidence; 'only' names some of them",
         .properties = R"("only":{"type":"array","items":{"type":"string","enum":[)" + analysis_names + "]}}",
         .on_trace = &McpServer::AnalyzeTool},
        {.name = "query",
         .description = "Read-only SQL over the trace's tables and views (docs/query.md); rows limited (default 1000, "
                        "at most 100000; cut to fit one 8 MiB answer, said in the text), 30 s; the SQL at most 64 KiB",
         .properties = R"("sql":{"type":"string"},"max_rows":{"type":"integer","minimum":1,"maximum":100000})",
         .required = {"sql"},
         .on_trace = &McpServer::QueryTool},
        {.name = "diagnose",
         .description = "aiprof diagnose: findings of the built-in rules with their evidence and impact",
         .on_trace = &McpServer::DiagnoseTool},
        {.name = "suggest",
         .description = "aiprof suggest: ranked fixes for a target under constraints, e.g. memory<3GB,effort<=medium",
         .properties =
             R"("target":{"type":"string","enum":["latency","throughput","memory"]},"constraints":{"type":"string"})",
         .on_trace = &McpServer::SuggestTool},
        {.name = "whatif",
         .description =
             "aiprof whatif (docs/whatif.md): predicted step time if idle, ops or kernels changed, by replaying the "
             "critical path's dependency graph; scenario clauses separated by ';': remove-idle "
             "data_loading|host_bound|sync|other|startup, remove PATTERN, scale PATTERN FACTOR, every N PATTERN, "
             "overlap-data-loading N, graph-launch, fuse PATTERN PATTERN..., overlap-comm, device NAME [from NAME]",
         .properties =
             R"("scenario":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":16}]})",
         .required = {"scenario"},
         .output_schema =
             R"({"type":"object","properties":{"scenarios":{"type":"array","items":{"type":"object","properties":{"scenario":{"type":"string"},"time_base":{"type":"string"},"statistic":{"type":"string"},"steady_steps":{"type":"integer","minimum":0},"measured_ns":{"type":"integer"},"predicted_ns":{"type":"integer"},"predicted_interval_ns":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},"slices_changed":{"type":"integer"},"edges_changed":{"type":"integer"},"notes":{"type":"array","items":{"type":"string"}},"steps":{"type":"array","items":{"type":"object","properties":{"rank":{"type":"integer"},"step":{"type":"integer"},"steady":{"type":"boolean"},"measured_ns":{"type":"integer"},"predicted_ns":{"type":"integer"}},"required":["rank","step","steady","measured_ns","predicted_ns"]}}},"required":["scenario","time_base","steady_steps","measured_ns","predicted_ns","predicted_interval_ns","steps"]}}},"required":["scenarios"]})",
         .on_trace = &McpServer::WhatIfTool},
        {.name = "validate",
         .description = "aiprof validate: did the change between two loaded traces (before, after) make the steps "
                        "faster? Verdicts per metric with intervals and p-values (docs/validation.md), and the "
                        "prediction made for the before run for the applied fix against the measured after run "
                        "(docs/whatif.md); 'unit' is 'step' or the name of the spans that are samples",
         .properties =
             R"("before":{"type":"string","description":"id of the trace before the change"},"after":{"type":"string","description":"id of the trace after the change"},"fix_id":{"type":"string","description":"the suggestion id the after run applied; default: the fix of the finding that went away"},"scenario":{"type":"string","description":"instead of fix_id: the fix stated as a what-if scenario (docs/whatif.md), replayed on the before trace"},"statistic":{"type":"string","enum":["median","mean"],"description":"with scenario: the steady steps' figure it is checked on; default: mean for an 'every N' scenario, else median"},"unit":{"type":"string"},"alpha":{"type":"number","exclusiveMinimum":0,"maximum":0.5})",
         .required = {"before", "after"},
         .handler = &McpServer::ValidateTool},
        {.name = "diff",
         .description = "aiprof diff: the attribution trees of two loaded traces (a: before, b: after) aligned module "
                        "→ op → kernel; what was added, removed, slower, faster, or called fewer or more times "
                        "(calls_removed, calls_added) per steady step, with validate's statistics per node where there "
                        "are enough steps; an op whose change sits in one call site or input shape is ranked by those "
                        "rows (docs/diff.md); 'map' is a name-map YAML file under an allowed directory",
         .properties =
             R"("a":{"type":"string","description":"id of run A, before"},"b":{"type":"string","description":"id of run B, after"},"map":{"type":"string"},"top":{"type":"integer","minimum":1,"maximum":1000},"warmup_steps":{"type":"integer","minimum":0,"maximum":1000000,"description":"leading warm-up steps left out of both runs; default: found in each run on its own"})",
         .required = {"a", "b"},
         .handler = &McpServer::DiffTool},
        {.name = "schema",
         .description = "The query tables, their columns and the standard views",
         .on_trace = &McpServer::SchemaTool},
    };
  }();
  return tools;
}

// tools/list's array. `with_output_schema`: whatif's outputSchema, a
// 2025-06-18 field (its structuredContent is not sent under 2024-11-05).
std::string McpServer::ToolsJson(bool with_output_schema) {
  std::string tools = "[";
  for (const McpTool& t : McpTools()) {
    std::string properties = t.properties, required;
    if (t.on_trace) {
      properties = std::string(kTraceArgument) + (properties.empty() ? "" : ",") + properties;
      required = "\"trace\"";
    }
    for (const std::string& r : t.required) required += (required.empty() ? "" : ",") + JsonString(r);
    tools += std::string(tools.size() > 1 ? "," : "") + "{\"name\":" + JsonString(t.name) + ",\"description\":\"" +
             t.description + "\"" + ",\"inputSchema\":{\"type\":\"object\",\"properties\":{" + properties + "}" +
             (required.empty() ? "" : ",\"required\":[" + required + "]") + ",\"additionalProperties\":false}";
    if (with_output_schema && !t.output_schema.empty()) tools += ",\"outputSchema\":" + t.output_schema;
    tools += "}";
  }
  return tools + "]";
}

class McpCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("mcp", "Model Context Protocol server over stdio: aiprof's tools for an AI assistant");
    sub->add_option("--allow", allow_, "Directory whose traces clients may load (repeatable)")->required();
    return sub;
  }

  bool CalibratesOnFirstNeed() const override { return false; }  // a server: never measures the machine

  Status Run() override {
    std::vector<fs::path> allowed;
    for (const std::string& dir : allow_) {
      std::error_code ec;
      fs::path canonical = fs::canonical(dir, ec);
      if (ec || !fs::is_directory(canonical)) return ErrStatus(dir + ": --allow needs an existing directory");
      allowed.push_back(canonical);
    }
    // A folder passes Confine(); what its importer opens (members, links
    // among them) is held to the same directories.
    std::vector<std::string> roots;
    for (const fs::path& dir : allowed) roots.push_back(dir.string());
    RETURN_IF_ERROR(ConfineImportsTo(roots));
    McpServer server(std::move(allowed));
    server.Serve(stdin, stdout);
    return OkStatus();
  }

 private:
  std::vector<std::string> allow_;
};

}  // namespace

std::unique_ptr<Command> NewMcpCommand() { return std::make_unique<McpCommand>(); }

}  // namespace aiprof
