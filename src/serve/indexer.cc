#include "src/serve/indexer.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "src/base/atomic_file.h"
#include "src/base/file_stamp.h"
#include "src/base/import_budget.h"
#include "src/base/mapped_inputs.h"
#include "src/importers/ascend/ascend_pt_importer.h"
#include "src/importers/ascend/msprof_importer.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/folder_importer.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/graph_capture/graph_capture_merge.h"
#include "src/model/native_file.h"
#include "src/report/page/report_data.h"
#include "src/serve/run_document.h"
#include "src/serve/serve_log.h"
#include "src/session/session.h"

namespace aiprof {
namespace fs = std::filesystem;

namespace {

// True when folder `dir` is one run: a torch_npu rank folder, an msprof
// PROF_* folder, a graph replay beside its capture_traces/ (TraceLens's
// layout: one run with the ops that captured the graphs, not the replay, the
// captures and their list as three; a malformed layout is one run whose
// import says why), or a folder of several ranks (at least two entries named
// rankN that are importable units).
bool IsFolderRun(const fs::path& dir) {
  const std::string d = dir.string();
  if (IsAscendPtFolder(d) || IsMsprofFolder(d)) return true;
  if (StatusOr<std::optional<GraphCaptureLayout>> graphs = FindGraphCaptureLayout(d); !graphs.ok() || *graphs) {
    return true;
  }
  std::error_code ec;
  int ranked = 0;
  for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    ranked += RankFromName(it->path().string()) != kNoRank;
    if (ranked >= 2) break;
  }
  if (ranked < 2) return false;
  StatusOr<std::vector<FolderUnit>> units = ListFolderUnits(d);
  if (!units.ok() || units->size() < 2) return false;
  for (const FolderUnit& u : *units) {
    if (RankFromName(u.path) == kNoRank) return false;
  }
  return true;
}

// What `path` is when it is not a regular file or a folder ("a FIFO"), for
// the message of a run that is skipped; "" for a regular file or a folder
// (links not followed: the scanner does not follow them either).
std::string OddFileKind(const fs::path& path) {
  std::error_code ec;
  switch (fs::symlink_status(path, ec).type()) {
    case fs::file_type::regular:
    case fs::file_type::directory:
    case fs::file_type::not_found:  // the import names it
      return "";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::symlink: return "a symbolic link";
    default: return ec ? "unreadable (" + ec.message() + ")" : "not a file";
  }
}

}  // namespace

bool PathInside(const std::string& root, const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::path(path), ec);
  if (ec) return false;
  const std::string s = p.string();
  return s.size() > root.size() && s.compare(0, root.size(), root) == 0 && s[root.size()] == '/';
}

Indexer::Indexer(RunIndex* index, IndexerOptions options) : index_(index), options_(std::move(options)) {}

Indexer::~Indexer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void Indexer::Start() {
  threads_.emplace_back([this] { ScanLoop(); });
  for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { ConvertLoop(); });
}

void Indexer::RequestScan() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    scan_requested_ = true;
  }
  cv_.notify_all();
}

void Indexer::Notify() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++work_generation_;
  }
  cv_.notify_all();
}

StatusOr<size_t> Indexer::ScanOnce() {
  std::error_code ec;
  fs::recursive_directory_iterator it(options_.logdir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return ErrStatus(options_.logdir + ": cannot list: " + ec.message());
  size_t found = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& e = *it;
    const std::string name = e.path().filename().string();
    // Never followed: a symbolic link could lead out of the logdir. Never
    // a run: a writer's temporary (an atomic write in progress, an SDK event
    // file before its rename, a monitor's incident folder being filled),
    // named by the writers' one pattern (IsAtomicTemporaryName). One holds
    // importable bytes before its rename; indexed, it was a second run that
    // stayed listed after the rename.
    if (e.is_symlink(ec) || name.empty() || name[0] == '.' || IsAtomicTemporaryName(name)) {
      if (e.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (e.is_directory(ec)) {
      if (e.path().string() == options_.cache_dir || it.depth() >= static_cast<int>(kMaxScanDepth)) {
        it.disable_recursion_pending();
      } else if (IsFolderRun(e.path())) {
        // One run (ranks merged by the folder importer): not entered.
        it.disable_recursion_pending();
        const std::string rel = fs::relative(e.path(), options_.logdir, ec).string();
        if (ec || rel.empty() || rel.compare(0, 2, "..") == 0) continue;
        const FileStamp folder = StampOf(e.path()).value_or(FileStamp{});
        const int64_t size = folder.size, mtime = folder.mtime_ns;
        ASSIGN_OR_RETURN(auto stamp, index_->Stamp(rel));
        ++found;
        if (stamp && stamp->first == size && stamp->second == mtime) continue;
        RETURN_IF_ERROR(index_->Upsert(rel, size, mtime).status());
        Notify();
      }
      continue;
    }
    // A FIFO, socket or device named like a trace is recorded, never opened
    // here (a FIFO blocks its reader): its conversion fails saying what it
    // is. Others are skipped like any file that is not a trace.
    const bool regular = e.is_regular_file(ec);
    if (!regular && !HasTraceFileEnding(name)) continue;
    const std::string rel = fs::relative(e.path(), options_.logdir, ec).string();
    if (ec || rel.empty() || rel.compare(0, 2, "..") == 0) continue;
    const int64_t size = regular ? static_cast<int64_t>(e.file_size(ec)) : 0;
    const int64_t mtime = UnixMtimeNs(e);  // Unix time, as uploads record theirs
    ASSIGN_OR_RETURN(auto stamp, index_->Stamp(rel));
    if (stamp && stamp->first == size && stamp->second == mtime) {
      ++found;
      continue;
    }
    // A file named like a trace (an ending of kImporters', HasTraceFileEnding)
    // is recorded even when its first bytes are not a format the importers
    // know, so a broken trace shows as a failed run with the importer's
    // message instead of vanishing.
    if (regular) {
      StatusOr<std::string> prefix = ReadPrefix(e.path().string(), kDetectPrefixBytes);
      const bool importable = prefix.ok() && !prefix->empty() && IsImportableFilePrefix(*prefix);
      if (!importable && !HasTraceFileEnding(name)) continue;
    }
    RETURN_IF_ERROR(index_->Upsert(rel, size, mtime).status());
    ++found;
    Notify();
  }
  RetireGoneRuns();
  ++scans_;
  return found;
}

void Indexer::RetireGoneRuns() {
  StatusOr<std::vector<RunRow>> rows = index_->List("", 0);
  if (!rows.ok()) return ServeLog("scan: " + rows.status().message());
  struct Candidate {
    const RunRow* row;
    bool gone, temporary;
  };
  std::vector<Candidate> candidates;
  size_t present = 0, gone_files = 0;
  for (const RunRow& r : *rows) {
    const fs::path rel(r.path);
    bool temporary = false;
    for (const fs::path& part : rel) temporary = temporary || IsAtomicTemporaryName(part.string());
    std::error_code ec;
    // Gone: nothing at the path (not a file that cannot be read now, which
    // stays), links not followed as the scanner does not follow them.
    const bool gone = fs::symlink_status(fs::path(options_.logdir) / rel, ec).type() == fs::file_type::not_found;
    if (!temporary) (gone ? gone_files : present) += 1;
    if (r.state == RunState::kConverting) continue;  // its converter ends it first; the next scan looks again
    if (gone || temporary) candidates.push_back({&r, gone, temporary});
  }
  // A logdir that reads as empty (a network share not mounted, a volume
  // swapped) would retire every run with its cache, names and tags: when
  // none of two or more indexed files is there, only temporaries are
  // retired, and the log says so once.
  const bool all_gone = present == 0 && gone_files >= 2;
  if (all_gone != all_gone_logged_) {
    all_gone_logged_ = all_gone;
    if (all_gone) {
      ServeLog("scan: none of the " + std::to_string(gone_files) + " indexed files is in " + options_.logdir +
               " (not mounted?); their runs are kept until one is back or they are deleted through the API");
    }
  }
  for (const Candidate& c : candidates) {
    const RunRow& r = *c.row;
    if (all_gone && !c.temporary) continue;
    StatusOr<bool> retired = index_->Retire(r.id, r.size_bytes, r.mtime_ns);
    if (!retired.ok()) {
      ServeLog("scan: " + retired.status().message());
      continue;
    }
    if (!*retired) continue;  // recorded again, or claimed, since the list
    std::error_code ec;
    const RunCacheFiles files = CacheFilesOf(options_.cache_dir, r.id);
    for (const std::string* path : {&files.native, &files.page, &files.partial}) fs::remove(*path, ec);
    ServeLog("run " + std::to_string(r.id) + " (" + r.path +
             "): " + (c.gone ? "its file is gone from the logdir" : "a writer's temporary file, not a run") +
             "; removed from the index");
  }
}

RunCacheFiles CacheFilesOf(const std::string& cache_dir, int64_t id) {
  RunCacheFiles f;
  f.native_name = std::to_string(id) + ".aiprof";
  f.native = (fs::path(cache_dir) / f.native_name).string();
  f.page = (fs::path(cache_dir) / (std::to_string(id) + ".run")).string();
  f.partial = (fs::path(cache_dir) / ("." + f.native_name + ".tmp")).string();
  return f;
}

void Indexer::ScanLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    scan_requested_ = false;
    lock.unlock();
    StatusOr<size_t> found = ScanOnce();
    if (!found.ok()) ServeLog("scan: " + found.status().message());
    lock.lock();
    const auto wait = std::chrono::milliseconds(options_.scan_interval_ms > 0 ? options_.scan_interval_ms : 86'400'000);
    cv_.wait_for(lock, wait, [this] { return stop_ || scan_requested_; });
  }
}

void Indexer::ConvertLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const uint64_t seen = work_generation_;
    lock.unlock();
    StatusOr<std::optional<RunRow>> claimed = index_->ClaimNext();
    if (!claimed.ok()) ServeLog(claimed.status().message());
    const bool got = claimed.ok() && claimed->has_value();
    if (got) Convert(std::move(**claimed));
    lock.lock();
    // Another server on the same database may queue runs too: look again
    // every few seconds even without a notification.
    if (!got) cv_.wait_for(lock, std::chrono::seconds(5), [&] { return stop_ || work_generation_ != seen; });
  }
}

void Indexer::Convert(RunRow run) {
  const auto start = std::chrono::steady_clock::now();
  const std::string source = (fs::path(options_.logdir) / run.path).string();
  // Messages name the run's path in the logdir, not where the logdir is.
  auto fail = [&](std::string why) {
    for (size_t at; (at = why.find(source)) != std::string::npos;) why.replace(at, source.size(), run.path);
    // Nothing of a failed run stays in the cache (a conversion stopped
    // after its native file was written).
    const RunCacheFiles files = CacheFilesOf(options_.cache_dir, run.id);
    for (const std::string* path : {&files.native, &files.page, &files.partial}) {
      std::error_code ec;
      fs::remove(*path, ec);
    }
    Status s = index_->MarkFailed(run.id, why);
    if (!s.ok()) ServeLog(s.message());
  };
  if (!PathInside(options_.logdir, source)) return fail(run.path + ": not inside the logdir (a symbolic link?)");
  if (const std::string kind = OddFileKind(source); !kind.empty()) {
    return fail(run.path + ": not a regular file (" + kind + "): skipped");
  }
  // A file that another program truncates or rewrites while it is converted
  // fails alone, saying so; it is converted again once a scan finds it
  // changed (its stamp in the index is the one scanned before). A mapped
  // input (an .aiprof or SDK file read in place) that shrank reads as zeros
  // past its new end (SetMappedInputFaultsRecoverable, serve.cc): the fault
  // is looked up after each step that may read it (the import and the
  // native write; the analyses read the cache's copy or no mapping at all).
  const std::optional<FileStamp> stamp = StampOf(source);
  const uint64_t faults = RecoveredMappedInputFaults();
  const std::string again = "; it is converted again when a scan finds it changed";
  auto shrank = [&]() -> std::string {
    std::string why = RecoveredMappedInputFault(faults, source);
    return why.empty() ? why : why + again;
  };
  auto fail_read = [&](std::string why) {
    if (std::string s = shrank(); !s.empty()) return fail(s);
    if (StampOf(source) != stamp) why += " (" + run.path + " changed while it was converted" + again + ")";
    fail(why);
  };
  ImportBudget budget;
  budget.max_bytes = options_.max_convert_bytes;
  budget.max_events = options_.max_convert_events;
  budget.bytes_flag = "--max-convert-mb";
  budget.events_flag = "--max-convert-events";
  budget.time_flag = "--max-convert-seconds";
  budget.time_limit_s = options_.max_convert_seconds;
  if (options_.max_convert_seconds > 0) {
    budget.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  std::chrono::duration<double>(options_.max_convert_seconds));
  }
  try {
    StatusOr<std::unique_ptr<Trace>> imported = [&] {
      ScopedImportBudget scope(&budget);
      return ImportTrace(source);
    }();
    if (!imported.ok()) return fail_read(imported.status().message());
    if (std::string s = shrank(); !s.empty()) return fail(s);
    // The events of inputs whose builder has not read past a limit since
    // (the last batch), and the time: checked here, before any analysis.
    if (Status over = budget.Exceeded(source); !over.ok()) return fail(over.message());
    std::shared_ptr<const Trace> trace(std::move(imported).value());
    const RunCacheFiles files = CacheFilesOf(options_.cache_dir, run.id);
    run.cache = files.native_name;
    if (Status w = WriteNativeFile(*trace, files.partial); !w.ok()) {
      // Writing from pages of a mapping past its file's new end fails
      // (EFAULT) instead of faulting; the message would name the cache.
      if (std::string s = shrank(); !s.empty()) return fail(s);
      if (trace->backing != nullptr && StampOf(source) != stamp) {
        return fail(run.path + ": the file changed while it was converted (truncated or rewritten by another program)" +
                    again);
      }
      return fail(w.message());
    }
    if (std::string s = shrank(); !s.empty()) return fail(s);
    std::error_code ec;
    fs::rename(files.partial, files.native, ec);
    if (ec) return fail("cache file " + files.native_name + ": " + ec.message());
    if (trace->backing != nullptr) {
      // Read in place from the logdir (an .aiprof): the analyses read the
      // cache's copy instead, which nothing else writes, so the logdir file
      // is no longer mapped.
      StatusOr<std::unique_ptr<Trace>> cached = ReadNativeFile(files.native);
      if (!cached.ok()) {
        ServeLog(cached.status().message());
        return fail("cache file " + files.native_name + ": cannot be read back (the server's log says why)");
      }
      trace = std::move(cached).value();
    }
    SessionOptions so;
    so.input = run.path;
    so.db = options_.baselines_db;
    const std::string cards = CardsFingerprint(options_.baselines_db);  // before the suggestions read them
    AnalysisSession session(trace, so);
    ReportInputs in;
    in.session = &session;
    StatusOr<ReportData> report = BuildReport(in);
    if (!report.ok()) return fail(report.status().message());
    if (Status over = budget.Exceeded(source); !over.ok()) return fail(over.message());
    // The run's page, stored so that serving it runs no analysis (a page
    // that cannot be stored is computed when asked for).
    if (Status w = WriteFileAtomically(files.page, SerializeStoredRunPage(StoreRunPage(run, *report, cards)));
        !w.ok()) {
      ServeLog(w.message());
    }
    run.source_format = report->source_format;
    run.steps = static_cast<int64_t>(report->steps_stats.count);
    run.step_p50_ns = report->steps_stats.p50_ns;
    run.device_util = report->device_util;
    run.device_util_basis = report->device_util >= 0 ? report->device_util_basis : "";
    if (report->top_finding && report->top_finding->rule) {
      run.top_finding = report->top_finding->rule->title;
      run.top_share = report->top_finding->impact.quantified ? report->top_finding->impact.share : 0;
      run.top_basis = report->top_finding->impact.quantified ? report->top_finding->impact.basis_text : "";
    }
    run.convert_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (Status s = index_->MarkReady(run); !s.ok()) ServeLog(s.message());
  } catch (const std::exception& e) {
    // The importers report bad input as a Status; this is the last guard
    // (e.g. out of memory) so one run cannot stop the server.
    fail(run.path + ": " + e.what());
  }
}

}  // namespace aiprof
