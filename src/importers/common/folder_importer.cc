#include "src/importers/common/folder_importer.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include "src/base/import_budget.h"
#include "src/base/threads.h"
#include "src/importers/ascend/ascend_pt_importer.h"
#include "src/importers/ascend/msprof_importer.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/import_confinement.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/sdk/sdk_processes.h"
#include "src/model/trace_merge.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNothingRecognizable =
    ": nothing recognizable in this folder (expected a torch_npu *_ascend_pt folder or its "
    "ASCEND_PROFILER_OUTPUT, an msprof PROF_* folder, or a folder of those or of trace files: "
    "Kineto/Chrome JSON (.json, .json.gz, .json.zst), Nsight Systems SQLite exports)";

// Side files of a profiler's output, never traces themselves.
bool IsSideFile(const fs::path& p) {
  std::string name = p.filename().string();
  return name.rfind("profiler_info", 0) == 0 || name == "profiler_metadata.json" ||
         name.find(".meta.json") != std::string::npos;
}

// Why `p` is not a trace file ("" when it is one): a file that cannot be
// read says so, with the reason (it was "not a recognised trace (by its
// first 4 KiB)" for a rank file the user may not read; input trial, 'in').
std::string NotATraceFile(const fs::path& p) {
  if (IsSideFile(p)) return "a profiler's side file";
  StatusOr<std::string> prefix = ReadPrefix(p.string(), kDetectPrefixBytes);
  if (!prefix.ok()) return prefix.status().message();
  if (!IsImportableFilePrefix(*prefix)) return p.string() + ": not a recognised trace (by its first 4 KiB)";
  return "";
}

std::optional<FolderUnitKind> FolderKind(const std::string& dir) {
  if (IsAscendPtFolder(dir)) return FolderUnitKind::kTorchNpu;
  if (IsMsprofFolder(dir)) return FolderUnitKind::kMsprof;
  return std::nullopt;
}

StatusOr<std::unique_ptr<Trace>> ImportUnit(const FolderUnit& unit) {
  switch (unit.kind) {
    case FolderUnitKind::kTorchNpu: return ImportAscendPtFolder(unit.path);
    case FolderUnitKind::kMsprof: return ImportMsprofFolder(unit.path);
    case FolderUnitKind::kFile: return ImportTraceFile(unit.path);
  }
  return ErrStatus(unit.path + ": unknown folder unit");
}

// Imports units on up to WorkerThreads() threads (--threads); results in
// unit order.
std::vector<StatusOr<std::unique_ptr<Trace>>> ImportAll(const std::vector<FolderUnit>& units) {
  std::vector<std::optional<StatusOr<std::unique_ptr<Trace>>>> results(units.size());
  std::atomic<size_t> next{0};
  ImportBudget* budget = CurrentImportBudget();  // serve's limits hold on every worker
  auto worker = [&]() {
    ScopedImportBudget scope(budget);
    for (size_t i; (i = next.fetch_add(1)) < units.size();) results[i].emplace(ImportUnit(units[i]));
  };
  size_t n = std::min<size_t>(units.size(), WorkerThreads());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  std::vector<StatusOr<std::unique_ptr<Trace>>> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

int32_t PartRank(const Trace& t) {
  auto it = t.metadata.find("rank");
  if (it == t.metadata.end()) return kNoRank;
  return static_cast<int32_t>(std::strtol(it->second.c_str(), nullptr, 10));
}

// Gives every rank-less row of `t` the rank `rank`.
void StampRank(Trace* t, int32_t rank) {
  for (size_t i = 0; i < t->tracks.size(); ++i) {
    if (t->tracks.rank[i] == kNoRank) t->tracks.rank[i] = rank;
  }
  for (size_t i = 0; i < t->steps.size(); ++i) {
    if (t->steps.rank[i] == kNoRank) t->steps.rank[i] = rank;
  }
  for (size_t i = 0; i < t->op_metrics.size(); ++i) {
    if (t->op_metrics.rank[i] == kNoRank) t->op_metrics.rank[i] = rank;
  }
  for (size_t i = 0; i < t->step_breakdown.size(); ++i) {
    if (t->step_breakdown.rank[i] == kNoRank) t->step_breakdown.rank[i] = rank;
  }
  t->metadata["rank"] = std::to_string(rank);
}

// Every part gets a rank, distinct across parts.
Status AssignRanks(const std::vector<FolderUnit>& units, std::vector<std::unique_ptr<Trace>>* parts) {
  std::map<int32_t, size_t> seen;
  for (size_t i = 0; i < parts->size(); ++i) {
    Trace* t = (*parts)[i].get();
    int32_t rank = PartRank(*t);
    if (rank == kNoRank) rank = RankFromName(units[i].path);
    if (rank == kNoRank && parts->size() > 1) {
      return ErrStatus(units[i].path + ": cannot tell this input's rank (no profiler_info rank_id or "
                       "distributedInfo, and no rankN in its name)");
    }
    if (rank == kNoRank) continue;
    StampRank(t, rank);
    auto [it, inserted] = seen.emplace(rank, i);
    if (!inserted) {
      return ErrStatus("mixed ranks: " + units[it->second].path + " and " + units[i].path + " both hold rank " +
                       std::to_string(rank));
    }
  }
  return OkStatus();
}

// One run's SDK files, one per process (sdk_processes.h): merged as
// `aiprof trace` merges them, each process on its own tracks with the rank
// its file holds (none: none), not one rank per file.
StatusOr<std::unique_ptr<Trace>> MergeSdkProcesses(const std::vector<FolderUnit>& units,
                                                   std::vector<std::unique_ptr<Trace>> parts) {
  std::vector<std::string> paths;
  std::vector<const Trace*> views;
  std::string pids;
  for (size_t i = 0; i < parts.size(); ++i) {
    paths.push_back(units[i].path);
    views.push_back(parts[i].get());
    pids += (pids.empty() ? "" : ",") + parts[i]->metadata["pid"];
  }
  RETURN_IF_ERROR(CheckSdkFilesOfOneRun(paths, views));
  const size_t n = parts.size();
  std::unique_ptr<Trace> merged = MergeTraces(std::move(parts));
  merged->metadata["source_format"] = "multi_process(aiprof_sdk)";
  merged->metadata["pids"] = pids;
  merged->metadata["process_count"] = std::to_string(n);
  return merged;
}

// ImportAll, or the first unit's error.
StatusOr<std::vector<std::unique_ptr<Trace>>> ImportAllOrFail(const std::vector<FolderUnit>& units) {
  std::vector<StatusOr<std::unique_ptr<Trace>>> results = ImportAll(units);
  std::vector<std::unique_ptr<Trace>> parts;
  for (auto& r : results) {
    if (!r.ok()) return r.status();
    parts.push_back(std::move(r).value());
  }
  return parts;
}

}  // namespace

int32_t RankFromName(const std::string& path) {
  static const std::regex kRank(R"((?:^|[^A-Za-z])rank[-_]?(\d+))", std::regex::icase);
  std::string name = fs::path(path).filename().string();
  if (name.empty()) name = fs::path(path).parent_path().filename().string();
  std::smatch m;
  // At most 9 digits: "rank99999999999999999999" in a file name threw out
  // of std::stol (found by review); no rank is that large.
  if (std::regex_search(name, m, kRank) && m[1].length() <= 9) return static_cast<int32_t>(std::stol(m[1].str()));
  return kNoRank;
}

StatusOr<std::unique_ptr<Trace>> ImportRankUnit(const FolderUnit& unit) {
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> t, ImportUnit(unit));
  int32_t rank = PartRank(*t);
  if (rank == kNoRank) rank = RankFromName(unit.path);
  if (rank != kNoRank) StampRank(t.get(), rank);
  return t;
}

// A member named like a trace (a trace file's extension, or rankN in its
// name) that is not imported is said, not skipped silently: a rank file of
// zeros (a crashed writer) made its rank disappear with exit 0 (D12 of the
// input trial).
bool NamedLikeATrace(const fs::path& p) {
  // An importer's ending (the registry's), or an Nsight report no importer
  // reads (it needs nsys export first).
  const std::string name = p.filename().string();
  const std::string_view rep = ".nsys-rep";
  if (HasTraceFileEnding(name) || (name.size() > rep.size() && name.ends_with(rep))) return true;
  return RankFromName(p.string()) != kNoRank;
}

StatusOr<std::vector<FolderUnit>> ListFolderUnits(const std::string& dir, std::vector<std::string>* skipped) {
  if (std::optional<FolderUnitKind> kind = FolderKind(dir)) return std::vector<FolderUnit>{{dir, *kind}};
  std::error_code ec;
  std::vector<fs::path> children;
  for (const auto& e : fs::directory_iterator(dir, ec)) children.push_back(e.path());
  if (ec) return ErrStatus(dir + ": cannot list the folder: " + ec.message());
  std::sort(children.begin(), children.end());
  std::vector<FolderUnit> units;
  for (const fs::path& child : children) {
    // A member that leads out of a confined import's folders is an error
    // naming it, not a member silently skipped.
    RETURN_IF_ERROR(CheckImportPath(child.string()));
    if (fs::is_directory(child, ec)) {
      if (std::optional<FolderUnitKind> kind = FolderKind(child.string())) units.push_back({child.string(), *kind});
    } else if (!fs::is_regular_file(child, ec)) {
      // Never opened: a FIFO would block, a device never end.
      if (skipped && NamedLikeATrace(child)) skipped->push_back(child.string() + ": not a regular file");
    } else if (std::string why = NotATraceFile(child); why.empty()) {
      units.push_back({child.string(), FolderUnitKind::kFile});
    } else if (skipped && NamedLikeATrace(child) && !IsSideFile(child)) {
      skipped->push_back(why);
    }
  }
  if (units.empty()) return ErrStatus(dir + kNothingRecognizable);
  // An SDK event file beside its process's spill file: the spill file has
  // everything (sdk_processes.h).
  std::vector<std::string> paths;
  for (const FolderUnit& u : units) paths.push_back(u.path);
  std::erase_if(units, [&](const FolderUnit& u) { return SupersededBySpillFile(u.path, paths); });
  return units;
}

StatusOr<std::unique_ptr<Trace>> ImportFolder(const std::string& dir) {
  std::vector<std::string> skipped;
  ASSIGN_OR_RETURN(std::vector<FolderUnit> units, ListFolderUnits(dir, &skipped));
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportUnits(units));
  for (const std::string& s : skipped) {
    trace->diagnostics.Add("folder_member_skipped", s,
                           "a file named like a trace is not one or cannot be read; skipped, so its rank or "
                           "data is missing from the result");
  }
  return trace;
}

StatusOr<std::unique_ptr<Trace>> ImportUnits(const std::vector<FolderUnit>& units) {
  ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Trace>> parts, ImportAllOrFail(units));
  if (parts.size() > 1 &&
      std::all_of(parts.begin(), parts.end(), [](const auto& p) { return IsSdkProcessTrace(*p); })) {
    return MergeSdkProcesses(units, std::move(parts));
  }
  RETURN_IF_ERROR(AssignRanks(units, &parts));
  if (parts.size() == 1) return std::move(parts.front());
  std::string ranks, formats;
  for (const auto& p : parts) {
    ranks += (ranks.empty() ? "" : ",") + p->metadata["rank"];
    std::string f = p->metadata["source_format"];
    if (formats.find(f) == std::string::npos) formats += (formats.empty() ? "" : ",") + f;
  }
  size_t world = parts.size();
  std::unique_ptr<Trace> merged = MergeTraces(std::move(parts));
  merged->metadata["source_format"] = "multi_rank(" + formats + ")";
  merged->metadata["ranks"] = ranks;
  merged->metadata["rank_count"] = std::to_string(world);
  return merged;
}

StatusOr<std::unique_ptr<Trace>> ImportSdkFiles(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) RETURN_IF_ERROR(CheckSdkFile(path));  // before any import
  std::vector<FolderUnit> units;
  for (const std::string& path : paths) {
    if (!SupersededBySpillFile(path, paths)) units.push_back({path, FolderUnitKind::kFile});
  }
  ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Trace>> parts, ImportAllOrFail(units));
  for (size_t i = 0; i < parts.size(); ++i) {
    // Its first bytes said SDK: only a file replaced meanwhile is not one.
    if (!IsSdkProcessTrace(*parts[i])) return ErrStatus(units[i].path + ": not an SDK file (changed while read?)");
  }
  if (parts.size() == 1) return std::move(parts.front());
  return MergeSdkProcesses(units, std::move(parts));
}

}  // namespace aiprof
