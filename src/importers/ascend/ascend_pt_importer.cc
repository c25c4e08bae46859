#include "src/importers/ascend/ascend_pt_importer.h"

#include <simdjson.h>

#include <filesystem>
#include <regex>

#include "src/importers/ascend/communication_importer.h"
#include "src/importers/ascend/op_table.h"
#include "src/importers/ascend/operator_memory.h"
#include "src/importers/ascend/trace_view_importer.h"
#include "src/importers/common/import_confinement.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;

constexpr const char* kAscendPtOutputDir = "ASCEND_PROFILER_OUTPUT";

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// The rank folder and its output folder, whichever of the two `dir` is.
void ResolveFolders(const std::string& dir, fs::path* root, fs::path* out) {
  fs::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  if (p.filename() == kAscendPtOutputDir) {
    *out = p;
    *root = p.parent_path();
  } else {
    *root = p;
    *out = p / kAscendPtOutputDir;
  }
}

std::string FindFile(const fs::path& dir, const std::regex& pattern) {
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file(ec) && std::regex_match(name, pattern)) found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? std::string() : found.front();
}

void ReadProfilerMetadata(const fs::path& root, Trace* trace) {
  fs::path p = root / "profiler_metadata.json";
  if (!Exists(p)) return;
  if (Status member = CheckFolderMember(p.string()); !member.ok()) {
    trace->diagnostics.Add("bad_profiler_metadata", p.string(), member.message() + "; ignored");
    return;
  }
  dom::parser parser;
  dom::object obj;
  if (parser.load(p.string()).get_object().get(obj)) {
    trace->diagnostics.Add("bad_profiler_metadata", p.string(), "profiler_metadata.json is not a JSON object; ignored");
    return;
  }
  for (auto [key, value] : obj) {
    dom::object env;
    if (key == "ENV_VARIABLES" && !value.get_object().get(env)) {
      for (auto [name, v] : env) {
        std::string_view s;
        trace->metadata["env." + std::string(name)] = v.get_string().get(s) ? simdjson::minify(v) : std::string(s);
      }
      continue;
    }
    trace->metadata["ascend." + std::string(key)] = simdjson::minify(value);
  }
}

// Imports the CSV / JSON side files that do not need the finalized slices.
Status ImportSideFiles(const fs::path& out, int32_t rank, TraceBuilder* builder) {
  if (Exists(out / "memory_record.csv")) RETURN_IF_ERROR(ImportMemoryRecord((out / "memory_record.csv").string(), rank, builder));
  if (Exists(out / "npu_module_mem.csv")) RETURN_IF_ERROR(ImportMemoryRecord((out / "npu_module_mem.csv").string(), rank, builder));
  if (Exists(out / "operator_memory.csv")) RETURN_IF_ERROR(ImportOperatorMemory((out / "operator_memory.csv").string(), rank, builder));
  if (Exists(out / "step_trace_time.csv")) RETURN_IF_ERROR(ImportStepTraceTime((out / "step_trace_time.csv").string(), rank, builder));
  if (Exists(out / "op_statistic.csv")) RETURN_IF_ERROR(ImportOpStatistic((out / "op_statistic.csv").string(), rank, builder));
  if (Exists(out / "api_statistic.csv")) {
    RETURN_IF_ERROR(ImportAggregateCsv((out / "api_statistic.csv").string(), rank, "API Name", {"Time(us)", "Count"}, builder));
  }
  if (Exists(out / "communication.json")) {
    RETURN_IF_ERROR(ImportCommunicationJson((out / "communication.json").string(), rank, false, builder));
  }
  if (Exists(out / "communication_matrix.json")) {
    RETURN_IF_ERROR(ImportCommunicationJson((out / "communication_matrix.json").string(), rank, true, builder));
  }
  return OkStatus();
}

}  // namespace

bool IsAscendPtFolder(const std::string& dir) {
  fs::path root, out;
  ResolveFolders(dir, &root, &out);
  return Exists(out / "trace_view.json") || Exists(out / "kernel_details.csv") ||
         Exists(out / "step_trace_time.csv");
}

std::string CompressedAscendPtMember(const std::string& dir) {
  fs::path root, out;
  ResolveFolders(dir, &root, &out);
  if (IsAscendPtFolder(dir)) return "";
  for (const char* name : {"trace_view.json", "kernel_details.csv", "step_trace_time.csv"}) {
    for (const char* ext : {".gz", ".zst"}) {
      fs::path p = out / (std::string(name) + ext);
      if (Exists(p)) return p.string();
    }
  }
  return "";
}

int32_t ReadAscendRank(const std::string& root, Trace* trace) {
  static const std::regex kInfo(R"(profiler_info(_(\d+))?\.json)");
  std::string info = FindFile(root, kInfo);
  if (info.empty()) return kNoRank;
  dom::parser parser;
  dom::object obj;
  if (parser.load(info).get_object().get(obj)) {
    trace->diagnostics.Add("bad_profiler_info", info, "profiler_info is not a JSON object; rank taken from its name");
  } else {
    dom::element config;
    if (!obj["config"].get(config)) trace->metadata["profiler_config"] = simdjson::minify(config);
    std::string_view s;
    if (!obj.at_pointer("/config/experimental_config/_profiler_level").get_string().get(s)) {
      trace->metadata["profiler_level"] = std::string(s);
    }
    if (!obj.at_pointer("/config/experimental_config/_aic_metrics").get_string().get(s)) {
      trace->metadata["aic_metrics"] = std::string(s);
    }
    int64_t rank;
    if (!obj["rank_id"].get_int64().get(rank) && rank >= 0) return static_cast<int32_t>(rank);
  }
  std::smatch m;
  std::string name = fs::path(info).filename().string();
  if (std::regex_match(name, m, kInfo) && m[2].matched && m[2].length() <= 9) return std::stoi(m[2].str());
  return kNoRank;
}

StatusOr<std::unique_ptr<Trace>> ImportAscendPtFolder(const std::string& dir) {
  fs::path root, out;
  ResolveFolders(dir, &root, &out);
  auto trace = std::make_unique<Trace>();
  TraceBuilder builder(trace.get());
  int32_t rank = ReadAscendRank(root.string(), trace.get());
  ReadProfilerMetadata(root, trace.get());
  fs::path timeline = out / "trace_view.json", kernels = out / "kernel_details.csv";
  bool has_timeline = Exists(timeline);
  if (has_timeline) {
    RETURN_IF_ERROR(CheckFolderMember(timeline.string()));
    RETURN_IF_ERROR(ImportAscendTimeline(timeline.string(), rank, 0, &builder));
  } else if (Exists(kernels)) {
    RETURN_IF_ERROR(AddOpTableSlices(kernels.string(), kKernelDetailsSpec, rank, 0, &builder));
  } else {
    return ErrStatus(out.string() + ": a torch_npu folder without trace_view.json or kernel_details.csv");
  }
  RETURN_IF_ERROR(ImportSideFiles(out, rank, &builder));
  if (rank != kNoRank) builder.SetDefaultRank(rank);
  RETURN_IF_ERROR(builder.Finalize());
  if (Exists(kernels)) RETURN_IF_ERROR(JoinOpTable(kernels.string(), kKernelDetailsSpec, rank, !has_timeline, &builder));
  if (Exists(out / "l2_cache.csv")) RETURN_IF_ERROR(JoinL2Cache((out / "l2_cache.csv").string(), rank, &builder));
  trace->metadata["source_format"] = "torch_npu";
  if (rank != kNoRank) trace->metadata["rank"] = std::to_string(rank);
  return trace;
}

}  // namespace aiprof
