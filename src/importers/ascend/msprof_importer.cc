#include "src/importers/ascend/msprof_importer.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <vector>

#include "src/importers/ascend/folder_member.h"
#include "src/importers/ascend/op_table.h"
#include "src/importers/ascend/trace_view_importer.h"
#include "src/importers/common/folder_importer.h"
#include "src/importers/common/import_confinement.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMsprofOutputDir = "mindstudio_profiler_output";

// One folder of msprof output files and the device they describe.
struct OutputDir {
  std::vector<fs::path> dirs;  // summary/ and timeline/ in the older layout
  int32_t device;
};

// The files of `dirs` whose names match `pattern`, each plain or gzip'd or
// zstd'd (folder_member.h: op_summary_0_1.csv.gz matches op_summary_.*\.csv;
// the plain one is read where both are there).
std::vector<fs::path> Matching(const std::vector<fs::path>& dirs, const std::regex& pattern) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::path& dir : dirs) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name(MemberName(e.path().filename().string()));
      if (e.is_regular_file(ec) && std::regex_match(name, pattern) && !SupersededMember(e.path())) {
        out.push_back(e.path());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool HasMsprofFiles(const fs::path& dir) {
  static const std::regex kAny(R"((msprof_.*\.json|op_summary_.*\.csv|op_statistic_.*\.csv|step_trace_.*\.csv))");
  return !Matching({dir}, kAny).empty();
}

std::vector<OutputDir> FindOutputDirs(const fs::path& dir) {
  std::error_code ec;
  if (dir.filename() == kMsprofOutputDir || HasMsprofFiles(dir)) return {{{dir}, 0}};
  if (fs::is_directory(dir / kMsprofOutputDir, ec)) return {{{dir / kMsprofOutputDir}, 0}};
  // At most 9 digits: device_99999999999 threw std::out_of_range from
  // std::stoi and ended the process (abort, exit 134); no device id is that
  // large, so such a folder is not a device's output.
  static const std::regex kDevice(R"(device_(\d{1,9}))");
  std::vector<OutputDir> out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || !std::regex_match(name, m, kDevice)) continue;
    OutputDir o{{}, std::stoi(m[1].str())};
    for (const char* sub : {"summary", "timeline"}) {
      if (fs::is_directory(e.path() / sub, ec)) o.dirs.push_back(e.path() / sub);
    }
    if (!o.dirs.empty()) out.push_back(o);
  }
  std::sort(out.begin(), out.end(), [](const OutputDir& a, const OutputDir& b) { return a.device < b.device; });
  return out;
}

Status ImportBeforeFinalize(const OutputDir& o, int32_t rank, bool* has_timeline, TraceBuilder* builder) {
  static const std::regex kTimeline(R"(msprof_.*\.json)"), kOpSummary(R"(op_summary_.*\.csv)");
  static const std::regex kOpStat(R"(op_statistic_.*\.csv)"), kApiStat(R"(api_statistic_.*\.csv)");
  static const std::regex kStep(R"(step_trace_.*\.csv)");
  std::vector<fs::path> timelines = Matching(o.dirs, kTimeline);
  for (const fs::path& p : timelines) {
    RETURN_IF_ERROR(CheckFolderMember(p.string()));
    RETURN_IF_ERROR(ImportAscendTimeline(p.string(), rank, o.device, builder));
  }
  *has_timeline = !timelines.empty();
  if (!*has_timeline) {
    for (const fs::path& p : Matching(o.dirs, kOpSummary)) {
      RETURN_IF_ERROR(AddOpTableSlices(p.string(), kOpSummarySpec, rank, o.device, builder));
    }
  }
  for (const fs::path& p : Matching(o.dirs, kOpStat)) RETURN_IF_ERROR(ImportOpStatistic(p.string(), rank, builder));
  for (const fs::path& p : Matching(o.dirs, kApiStat)) {
    RETURN_IF_ERROR(ImportAggregateCsv(p.string(), rank, "API Name", {"Time(us)", "Count"}, builder));
  }
  for (const fs::path& p : Matching(o.dirs, kStep)) RETURN_IF_ERROR(ImportStepTraceTime(p.string(), rank, builder));
  return OkStatus();
}

Status JoinAfterFinalize(const OutputDir& o, int32_t rank, bool has_timeline, TraceBuilder* builder) {
  static const std::regex kOpSummary(R"(op_summary_.*\.csv)"), kTaskTime(R"(task_time_.*\.csv)");
  for (const fs::path& p : Matching(o.dirs, kOpSummary)) RETURN_IF_ERROR(JoinOpTable(p.string(), kOpSummarySpec, rank, !has_timeline, builder));
  for (const fs::path& p : Matching(o.dirs, kTaskTime)) RETURN_IF_ERROR(JoinOpTable(p.string(), kTaskTimeSpec, rank, false, builder));
  return OkStatus();
}

int32_t RankFromFolderName(const fs::path& dir) { return RankFromName(dir.string()); }

}  // namespace

bool IsMsprofFolder(const std::string& dir) {
  fs::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  if (p.filename() == kMsprofOutputDir) return true;
  std::error_code ec;
  if (fs::is_directory(p / kMsprofOutputDir, ec)) return true;
  return p.filename().string().rfind("PROF_", 0) == 0 && !FindOutputDirs(p).empty();
}

StatusOr<std::unique_ptr<Trace>> ImportMsprofFolder(const std::string& dir) {
  fs::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  std::vector<OutputDir> outputs = FindOutputDirs(p);
  if (outputs.empty()) {
    return ErrStatus(dir + ": an msprof folder without mindstudio_profiler_output/ or device_N/summary|timeline");
  }
  auto trace = std::make_unique<Trace>();
  TraceBuilder builder(trace.get());
  int32_t rank = RankFromFolderName(p.filename() == kMsprofOutputDir ? p.parent_path() : p);
  bool any = false;
  std::vector<bool> has_timeline(outputs.size(), false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputDir& o = outputs[i];
    bool timeline = false;
    RETURN_IF_ERROR(ImportBeforeFinalize(o, rank, &timeline, &builder));
    has_timeline[i] = timeline;
    any = any || timeline || trace->slices.size() > 0 || trace->op_metrics.size() > 0 || trace->step_breakdown.size() > 0;
  }
  if (!any) {
    return ErrStatus(dir + ": no msprof_*.json, op_summary_*.csv, op_statistic_*.csv or step_trace_*.csv found");
  }
  if (rank != kNoRank) builder.SetDefaultRank(rank);
  RETURN_IF_ERROR(builder.Finalize());
  for (size_t i = 0; i < outputs.size(); ++i) RETURN_IF_ERROR(JoinAfterFinalize(outputs[i], rank, has_timeline[i], &builder));
  trace->metadata["source_format"] = "msprof";
  if (rank != kNoRank) trace->metadata["rank"] = std::to_string(rank);
  return trace;
}

}  // namespace aiprof
