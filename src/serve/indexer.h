// Finds runs under the logdir and converts each once into the native-file
// cache. A run is a trace file, or a folder the importers read as one run
// (a torch_npu rank folder, an msprof PROF_* folder, a folder of several
// ranks' units named rankN), which is then not entered. One scanner (periodic, or on request) records importable files in
// the index (never a writer's temporary file: IsAtomicTemporaryName); converter threads claim queued runs, import
// them with the importers (and their limits), write `<cache>/<id>.aiprof`, compute the
// figures of the runs list through an analysis session, and mark the run
// ready, or failed with the importer's message. Nothing found under the
// logdir is ever executed; symbolic links are not followed, so no path
// leaves the logdir; FIFOs and devices are never opened (one named like a
// trace is a failed run saying what it is). A run whose file is gone at a
// scan leaves the index and the cache. A file that changes while it is
// converted fails alone (a mapped one that shrinks included: serve makes
// those faults recoverable, src/base/mapped_inputs.h) and is converted again
// once a scan finds it changed.
#ifndef AIPROF_SRC_SERVE_INDEXER_H_
#define AIPROF_SRC_SERVE_INDEXER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/base/status.h"
#include "src/serve/run_index.h"

namespace aiprof {

// Folders the scanner never enters: hidden ones (".git", the default
// ".aiprof-serve" cache), writers' temporary ones (IsAtomicTemporaryName)
// and the cache folder itself; nor deeper than this.
inline constexpr size_t kMaxScanDepth = 16;

// A run's files in the cache folder, named by its id: its native file
// (`RunRow::cache` holds its name), the page stored at conversion, and the
// native file being written (hidden; renamed onto `native` when complete).
// The one place these names are made: the converter writes them, a failed
// conversion and `DELETE /api/runs/ID` remove them, the pages read them.
struct RunCacheFiles {
  std::string native_name;            // "<id>.aiprof"
  std::string native, page, partial;  // paths
};
RunCacheFiles CacheFilesOf(const std::string& cache_dir, int64_t id);

struct IndexerOptions {
  std::string logdir;     // canonical
  std::string cache_dir;  // canonical; native files go here
  int threads = 1;        // converters
  int64_t scan_interval_ms = 10'000;  // 0: scan only at start and on request
  // The baseline database whose knowledge cards the suggestions carry (as
  // on the served pages); "" for the default.
  std::string baselines_db;
  // Limits of one conversion (docs/serve.md, "Conversion limits"): the
  // decompressed bytes read, the events built, the wall time. Bytes and
  // events are counted while the input streams and the import stops at
  // the first read past a limit; the time is checked at each read and after
  // each step of the conversion. A run past a limit fails with a message
  // naming the limit and its flag. 0: no limit.
  uint64_t max_convert_bytes = 0;
  uint64_t max_convert_events = 0;
  double max_convert_seconds = 0;
};

class Indexer {
 public:
  Indexer(RunIndex* index, IndexerOptions options);
  ~Indexer();  // stops the threads (a conversion under way finishes first)
  void Start();
  // Scans again soon (a new upload, POST /api/rescan).
  void RequestScan();
  // Wakes the converters (a run was queued).
  void Notify();
  // One scan, now, on the caller's thread: the number of files found. It
  // ends by retiring the runs whose file is gone (RetireGoneRuns).
  StatusOr<size_t> ScanOnce();
  // Visible for testing: converts one claimed run.
  void Convert(RunRow run);
  uint64_t scans() const { return scans_.load(); }

 private:
  void ScanLoop();
  void ConvertLoop();
  // Removes from the index, with their cache files, the runs whose path in
  // the logdir holds nothing any more (deleted, or renamed away: a writer's
  // temporary that an earlier version indexed), or whose path is a writer's
  // temporary: they leave the runs list, and their id answers 404. Not a
  // run a converter has (the next scan looks again), nor one recorded again
  // since it was listed (RunIndex::Retire). Uploads are files of the logdir
  // too: one whose file is there stays.
  void RetireGoneRuns();

  RunIndex* index_;
  IndexerOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, scan_requested_ = false;
  bool all_gone_logged_ = false;  // RetireGoneRuns found none of the indexed files (scan thread only)
  uint64_t work_generation_ = 0;
  std::atomic<uint64_t> scans_{0};
  std::vector<std::thread> threads_;
};

// True when `path` (made absolute and normal, symlinks resolved) lies
// inside `root` (canonical).
bool PathInside(const std::string& root, const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_SERVE_INDEXER_H_
