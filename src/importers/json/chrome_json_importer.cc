#include "src/importers/json/chrome_json_importer.h"

#include <string_view>
#include <unordered_set>
#include <vector>

#include "src/base/threads.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/json/chrome_json_parser.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"

namespace aiprof {

bool DetectChromeJson(std::string_view prefix) {
  if (prefix.substr(0, 3) == "\xEF\xBB\xBF") prefix.remove_prefix(3);
  for (char c : prefix) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
}

ChromeJsonOptions DefaultChromeJsonOptions() {
  // The tokenizer reads and cuts on this thread while the workers parse;
  // with one thread on one core, parsing stays on this thread too.
  size_t threads = WorkerThreads();
  ChromeJsonOptions options;
  options.workers = threads <= 1 && AvailableCores() <= 1 ? 0 : threads;
  return options;
}

Status ImportChromeJson(const std::string& path, TraceBuilder* builder) {
  return ImportChromeJson(path, builder, DefaultChromeJsonOptions());
}

namespace {

// torch's legacy export has no "cat": the merge files its events by their
// names (IsLegacyOpName), and a custom torch.autograd.Function's forward,
// recorded under its class name ("Scaled", "CheckpointFunction"), read as a
// record_function range, where Kineto files it as a cpu_op. The trace names
// its backward node "<class>Backward": a range whose name has that node is
// the Function's forward, a cpu_op. So is "<forked function>", the frame a
// torch.jit.fork task runs in. (The user_annotation made analyze's
// host_region read a Function's forward as a region the program marks, with
// "no op running in it", a finding its Kineto twin does not have.)
void FileLegacyAutogradFunctions(TraceBuilder* builder) {
  Trace& t = *builder->trace();
  std::vector<uint8_t> legacy(t.tracks.size(), 0);
  bool any = false;
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    if (!t.tracks.pid_label[i].empty() && t.Str(t.tracks.pid_label[i]) == "CPU functions") legacy[i] = any = true;
  }
  if (!any) return;
  const StringId cpu_op = builder->Intern("cpu_op"), user_annotation = builder->Intern("user_annotation");
  const SliceTable& s = t.slices;
  constexpr std::string_view kBackward = "Backward";
  std::unordered_set<std::string_view> forwards;  // "X" of each cpu_op "XBackward"
  for (size_t i = 0; i < s.size(); ++i) {
    if (!legacy[s.track[i]] || s.category[i] != cpu_op) continue;
    std::string_view name = t.Str(s.name[i]);
    if (name.size() > kBackward.size() && name.ends_with(kBackward)) forwards.insert(name.substr(0, name.size() - kBackward.size()));
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!legacy[s.track[i]] || s.category[i] != user_annotation) continue;
    std::string_view name = t.Str(s.name[i]);
    if (forwards.count(name) > 0 || name == "<forked function>") builder->SetSliceCategory(static_cast<uint32_t>(i), cpu_op);
  }
}

}  // namespace

Status ImportChromeJson(const std::string& path, TraceBuilder* builder, const ChromeJsonOptions& options) {
  std::string compression;
  RETURN_IF_ERROR(ParseChromeJsonEvents(path, builder, options, &compression));
  FileLegacyAutogradFunctions(builder);
  builder->trace()->metadata["source_format"] = "chrome_json";
  builder->trace()->metadata["compression"] = compression;
  return OkStatus();
}

Status ParseChromeJsonEvents(const std::string& path, TraceBuilder* builder, const ChromeJsonOptions& options,
                             std::string* compression) {
  // Decompression (gzip, zstd) gets a thread of its own when there is a
  // core for it besides the reader.
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path, AvailableCores() > 1));
  // A plain file that fits in one batch has nothing to share out: no threads.
  size_t batch = options.batch_bytes > 0 ? options.batch_bytes : ChromeJsonTokenizer::kInitialBufferBytes;
  std::string_view mapped = source->Map();
  size_t workers = !mapped.empty() && mapped.size() <= batch ? 0 : options.workers;
  ChromeJsonBatchParser parser(path, builder, workers);
  ChromeJsonTokenizer tokenizer(source.get(), &parser, workers);
  if (options.batch_bytes > 0) {
    tokenizer.SetBufferLimitsForTesting(options.batch_bytes, ChromeJsonTokenizer::kMaxValueBytes);
  }
  RETURN_IF_ERROR(tokenizer.Run());
  if (parser.hashed_flow_ids() > 0) {
    builder->trace()->metadata["hashed_flow_ids"] = std::to_string(parser.hashed_flow_ids());
  }
  *compression = source->compression();
  return OkStatus();
}

}  // namespace aiprof
