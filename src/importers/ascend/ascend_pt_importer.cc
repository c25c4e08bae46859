#include "src/importers/ascend/ascend_pt_importer.h"

#include <simdjson.h>

#include <filesystem>
#include <regex>

#include "src/importers/ascend/communication_importer.h"
#include "src/importers/ascend/folder_member.h"
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
    std::string name(MemberName(e.path().filename().string()));
    if (e.is_regular_file(ec) && std::regex_match(name, pattern)) found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());  // a plain file before its .gz and .zst
  return found.empty() ? std::string() : found.front();
}

void ReadProfilerMetadata(const fs::path& root, Trace* trace) {
  const std::string p = FindMember(root, "profiler_metadata.json");
  if (p.empty()) return;
  StatusOr<simdjson::padded_string> text = LoadJsonMember(p);
  if (!text.ok()) {
    trace->diagnostics.Add("bad_profiler_metadata", p, text.status().message() + "; ignored");
    return;
  }
  dom::parser parser;
  dom::object obj;
  if (parser.parse(*text).get_object().get(obj)) {
    trace->diagnostics.Add("bad_profiler_metadata", p, "profiler_metadata.json is not a JSON object; ignored");
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
  for (const char* name : {"memory_record.csv", "npu_module_mem.csv"}) {
    if (std::string p = FindMember(out, name); !p.empty()) RETURN_IF_ERROR(ImportMemoryRecord(p, rank, builder));
  }
  if (std::string p = FindMember(out, "operator_memory.csv"); !p.empty()) {
    RETURN_IF_ERROR(ImportOperatorMemory(p, rank, builder));
  }
  if (std::string p = FindMember(out, "step_trace_time.csv"); !p.empty()) {
    RETURN_IF_ERROR(ImportStepTraceTime(p, rank, builder));
  }
  if (std::string p = FindMember(out, "op_statistic.csv"); !p.empty())
    RETURN_IF_ERROR(ImportOpStatistic(p, rank, builder));
  if (std::string p = FindMember(out, "api_statistic.csv"); !p.empty()) {
    RETURN_IF_ERROR(ImportAggregateCsv(p, rank, "API Name", {"Time(us)", "Count"}, builder));
  }
  if (std::string p = FindMember(out, "communication.json"); !p.empty()) {
    RETURN_IF_ERROR(ImportCommunicationJson(p, rank, false, builder));
  }
  if (std::string p = FindMember(out, "communication_matrix.json"); !p.empty()) {
    RETURN_IF_ERROR(ImportCommunicationJson(p, rank, true, builder));
  }
  return OkStatus();
}

}  // namespace

bool IsAscendPtFolder(const std::string& dir) {
  fs::path root, out;
  ResolveFolders(dir, &root, &out);
  return !FindMember(out, "trace_view.json").empty() || !FindMember(out, "kernel_details.csv").empty() ||
         !FindMember(out, "step_trace_time.csv").empty();
}

int32_t ReadAscendRank(const std::string& root, Trace* trace) {
  static const std::regex kInfo(R"(profiler_info(_(\d+))?\.json)");
  std::string info = FindFile(root, kInfo);
  if (info.empty()) return kNoRank;
  dom::parser parser;
  dom::object obj;
  StatusOr<simdjson::padded_string> text = LoadJsonMember(info);
  if (!text.ok()) {
    trace->diagnostics.Add("bad_profiler_info", info, text.status().message() + "; rank taken from its name");
  } else if (parser.parse(*text).get_object().get(obj)) {
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
  std::string name(MemberName(fs::path(info).filename().string()));
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
  const std::string timeline = FindMember(out, "trace_view.json"), kernels = FindMember(out, "kernel_details.csv");
  const bool has_timeline = !timeline.empty();
  if (has_timeline) {
    RETURN_IF_ERROR(CheckFolderMember(timeline));
    RETURN_IF_ERROR(ImportAscendTimeline(timeline, rank, 0, &builder));
  } else if (!kernels.empty()) {
    RETURN_IF_ERROR(AddOpTableSlices(kernels, kKernelDetailsSpec, rank, 0, &builder));
  } else {
    return ErrStatus(out.string() + ": a torch_npu folder without trace_view.json or kernel_details.csv");
  }
  RETURN_IF_ERROR(ImportSideFiles(out, rank, &builder));
  if (rank != kNoRank) builder.SetDefaultRank(rank);
  RETURN_IF_ERROR(builder.Finalize());
  if (!kernels.empty()) RETURN_IF_ERROR(JoinOpTable(kernels, kKernelDetailsSpec, rank, !has_timeline, &builder));
  if (std::string l2 = FindMember(out, "l2_cache.csv"); !l2.empty()) RETURN_IF_ERROR(JoinL2Cache(l2, rank, &builder));
  trace->metadata["source_format"] = "torch_npu";
  if (rank != kNoRank) trace->metadata["rank"] = std::to_string(rank);
  return trace;
}

}  // namespace aiprof
