#include "src/serve/indexer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "src/base/atomic_file.h"
#include "src/base/mapped_inputs.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/import_confinement.h"
#include "src/serve/run_index.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

// A logdir file that another program truncates while the server reads it in
// place (an .aiprof, an SDK event file) raised SIGBUS, and the handler ended
// the whole server. With faults recoverable (as serve sets them), the rest
// of the mapping reads as zeros and the fault is recorded under the file's
// path, for the converter to fail that run alone.
TEST(ServeMappedInputsTest, AFileTruncatedUnderItsMappingReadsZerosAndIsNamed) {
  testing::TempDir dir;
  const size_t size = 1 << 20;
  const std::string path = dir.Write("shrinks.aiprof", std::string(size, 'x'));
  InstallMappedInputBusHandler();
  SetMappedInputFaultsRecoverable(true);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(base, MAP_FAILED);
  const int slot = RegisterMappedInput(base, size, path);
  const uint64_t before = RecoveredMappedInputFaults();
  EXPECT_EQ(RecoveredMappedInputFault(before, path), "");
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  const volatile char* bytes = static_cast<const char*>(base);
  EXPECT_EQ(bytes[size - 1], 0) << "past the new end: zeros, not the end of the process";
  EXPECT_EQ(bytes[100], 'x') << "before it: the file's bytes";
  EXPECT_EQ(RecoveredMappedInputFaults(), before + 1);
  const std::string why = RecoveredMappedInputFault(before, path);
  EXPECT_EQ(why, path + ": the file shrank while it was read (truncated or rewritten by another program)");
  EXPECT_EQ(RecoveredMappedInputFault(before, dir.path()), why) << "a folder run names its member";
  EXPECT_EQ(RecoveredMappedInputFault(before, path.substr(0, path.size() - 3)), "") << "another file";
  EXPECT_EQ(RecoveredMappedInputFault(RecoveredMappedInputFaults(), path), "") << "only faults since";
  UnregisterMappedInput(slot);
  ::munmap(base, size);
  SetMappedInputFaultsRecoverable(false);
}

// A FIFO (or device, socket) named like a trace in the logdir was skipped
// without a word; it is now a failed run saying what it is, and its
// conversion never opens it (a FIFO's open blocks until a writer comes).
TEST(ServeIndexerTest, AFifoNamedLikeATraceIsAFailedRunSayingWhatItIs) {
  testing::TempDir dir;
  const std::string logdir = fs::canonical(dir.path()).string();
  fs::create_directories(logdir + "/.aiprof-serve/cache");
  ASSERT_EQ(::mkfifo((logdir + "/live.json").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((logdir + "/control").c_str(), 0600), 0);  // not named like a trace: not a run
  auto index = RunIndex::Open(logdir + "/.aiprof-serve/index.db");
  ASSERT_TRUE(index.ok()) << index.status().message();
  IndexerOptions options;
  options.logdir = logdir;
  options.cache_dir = logdir + "/.aiprof-serve/cache";
  Indexer indexer(index->get(), options);
  auto found = indexer.ScanOnce();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, 1u);
  auto claimed = (*index)->ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  const int64_t id = (**claimed).id;
  indexer.Convert(**claimed);
  auto row = (*index)->Get(id);
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((**row).state, RunState::kFailed);
  EXPECT_EQ((**row).error, "live.json: not a regular file (a FIFO): skipped");
  found = indexer.ScanOnce();  // the same FIFO: not queued again
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE((*index)->ClaimNext()->has_value());
}

// A small Chrome trace: importable by its first bytes, whatever its name.
std::string ServeTmpTinyTrace() {
  std::string t = "{\"traceEvents\": [";
  for (int i = 0; i < 8; ++i) {
    t += std::string(i ? "," : "") + "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, " +
         "\"ts\": " + std::to_string(i * 10) + ", \"dur\": 5}";
  }
  return t + "]}";
}

// The paths the index lists, sorted.
std::vector<std::string> ServeTmpListedPaths(RunIndex& index) {
  std::vector<std::string> paths;
  auto rows = index.List("", 0);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  if (rows.ok()) {
    for (const RunRow& r : *rows) paths.push_back(r.path);
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ServeIndexerTest, IsAtomicTemporaryNameTakesTheWritersFormsOnly) {
  EXPECT_TRUE(IsAtomicTemporaryName("run.aiprof.tmp.59430d1a-6500.CrtBux"));
  EXPECT_TRUE(IsAtomicTemporaryName("events.aiprof.tmp.nobootid-12.a1B2c3"));
  EXPECT_TRUE(IsAtomicTemporaryName("run.json.tmp.Ab12Cd")) << "an earlier version's, without an owner";
  EXPECT_FALSE(IsAtomicTemporaryName("run.json"));
  EXPECT_FALSE(IsAtomicTemporaryName("run.tmp.json"));
  EXPECT_FALSE(IsAtomicTemporaryName("run.json.tmp.Ab12C")) << "five characters: not mkstemp's";
  EXPECT_FALSE(IsAtomicTemporaryName("run.json.tmp.Ab-2Cd"));
  EXPECT_FALSE(IsAtomicTemporaryName("run.aiprof.tmp.59430d1a-0.CrtBux")) << "no pid";
  EXPECT_FALSE(IsAtomicTemporaryName("logs/run.json.tmp.Ab12Cd")) << "a path, not a name";
  EXPECT_FALSE(IsAtomicTemporaryName(""));
}

// An atomic writer's temporary (`run.json.tmp.<boot>-<pid>.XXXXXX`; the
// SDK's event file and the monitor's incident folders are named alike, by
// the same CreateWriterTemp) holds importable bytes before its rename. The
// scanner indexed it as a run of its own, which stayed listed after the
// rename (trial_races, finding C). The name tested is the writer's own.
TEST(ServeIndexerTest, AWritersTemporaryIsNotARun) {
  testing::TempDir dir;
  const std::string logdir = fs::canonical(dir.path()).string();
  fs::create_directories(logdir + "/.aiprof-serve/cache");
  const std::string trace = ServeTmpTinyTrace();
  AtomicFileWriter writer;
  ASSERT_TRUE(writer.Open(logdir + "/run.json").ok());
  ASSERT_TRUE(writer.Write(trace).ok());
  std::vector<std::string> temps;
  for (const fs::directory_entry& e : fs::directory_iterator(logdir)) {
    if (e.is_regular_file()) temps.push_back(e.path().filename().string());
  }
  ASSERT_EQ(temps.size(), 1u);
  const std::string temp = temps[0];
  EXPECT_TRUE(IsAtomicTemporaryName(temp)) << temp;
  ASSERT_EQ(temp.rfind("run.json.tmp.", 0), 0u) << temp;
  // On disk as a write larger than the writer's buffer has it before the
  // rename (this one is still buffered).
  std::ofstream(logdir + "/" + temp, std::ios::binary) << trace;
  // A temporary folder of the same form (a monitor's incident folder being
  // filled) holding a trace: not entered.
  const std::string folder = "incident" + temp.substr(std::string("run.json").size());
  fs::create_directories(logdir + "/" + folder);
  dir.Write(folder + "/rank0.json", trace);
  dir.Write("old.json.tmp.Ab12Cd", trace);  // an earlier version's temporary
  // Not temporaries, importable by their bytes: runs.
  dir.Write("run.tmp.json", trace);
  dir.Write("notes.tmp.1234567", trace);
  auto index = RunIndex::Open(logdir + "/.aiprof-serve/index.db");
  ASSERT_TRUE(index.ok()) << index.status().message();
  IndexerOptions options;
  options.logdir = logdir;
  options.cache_dir = logdir + "/.aiprof-serve/cache";
  Indexer indexer(index->get(), options);
  auto found = indexer.ScanOnce();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, 2u);
  EXPECT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"notes.tmp.1234567", "run.tmp.json"}));
  ASSERT_TRUE(writer.Commit().ok());
  found = indexer.ScanOnce();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"notes.tmp.1234567", "run.json", "run.tmp.json"}));
}

// A run whose file was removed (or renamed away) stayed listed for good:
// nothing but DELETE /api/runs/ID removed a row, and that only an
// upload's. A scan now retires it with its cache files; a run a converter
// has is kept until the converter ends, and a file still there stays,
// uploads included.
TEST(ServeIndexerTest, ARunWhoseFileIsGoneLeavesTheIndexAtTheNextScan) {
  testing::TempDir dir;
  const std::string logdir = fs::canonical(dir.path()).string();
  const std::string cache = logdir + "/.aiprof-serve/cache";
  fs::create_directories(cache);
  fs::create_directories(logdir + "/uploads");
  const std::string trace = ServeTmpTinyTrace();
  dir.Write("gone.json", trace);
  dir.Write("kept.json", trace);
  dir.Write("busy.json", trace);
  auto index = RunIndex::Open(logdir + "/.aiprof-serve/index.db");
  ASSERT_TRUE(index.ok()) << index.status().message();
  IndexerOptions options;
  options.logdir = logdir;
  options.cache_dir = cache;
  Indexer indexer(index->get(), options);
  ASSERT_TRUE(indexer.ScanOnce().ok());
  dir.Write("uploads/1-2-3-up.json", trace);
  auto upload = (*index)->AddUpload("uploads/1-2-3-up.json", static_cast<int64_t>(trace.size()), 1, "up.json", "", "");
  ASSERT_TRUE(upload.ok()) << upload.status().message();
  // An earlier version's row for a writer's temporary that is still there
  // (its writer killed): not a run either.
  const std::string stale_temp = "run.json.tmp.59430d1a-77.CrtBux";
  dir.Write(stale_temp, trace);
  ASSERT_TRUE((*index)->Upsert(stale_temp, static_cast<int64_t>(trace.size()), 1).ok());
  ASSERT_EQ(ServeTmpListedPaths(**index),
            (std::vector<std::string>{"busy.json", "gone.json", "kept.json", stale_temp, "uploads/1-2-3-up.json"}));
  int64_t gone_id = 0, busy_id = 0;
  auto listed = (*index)->List("", 0);
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  for (const RunRow& r : *listed) {
    if (r.path == "gone.json") gone_id = r.id;
    if (r.path == "busy.json") busy_id = r.id;
  }
  // busy.json: claimed by a converter (the oldest queued run is gone.json's
  // or busy.json's: claim until it is busy.json's, giving the others back).
  std::optional<RunRow> busy;
  while (!busy) {
    auto claimed = (*index)->ClaimNext();
    ASSERT_TRUE(claimed.ok() && claimed->has_value());
    if ((**claimed).id == busy_id) {
      busy = **claimed;
    } else {
      ASSERT_TRUE((*index)->MarkFailed((**claimed).id, "given back").ok());
    }
  }
  const RunCacheFiles gone_files = CacheFilesOf(cache, gone_id);
  for (const std::string& f : {gone_files.native, gone_files.page}) std::ofstream(f) << "cached";
  fs::remove(logdir + "/gone.json");
  fs::remove(logdir + "/busy.json");
  auto found = indexer.ScanOnce();
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"busy.json", "kept.json", "uploads/1-2-3-up.json"}))
      << "gone.json and the temporary retired; busy.json kept while converted";
  auto row = (*index)->Get(gone_id);
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(row->has_value());
  EXPECT_FALSE(fs::exists(gone_files.native));
  EXPECT_FALSE(fs::exists(gone_files.page));
  ASSERT_TRUE((*index)->MarkFailed(busy_id, "busy.json: no such file").ok());
  ASSERT_TRUE(indexer.ScanOnce().ok());
  EXPECT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"kept.json", "uploads/1-2-3-up.json"}))
      << "busy.json, once its converter ended";
  // Back again: a run again, under a new row.
  dir.Write("gone.json", trace);
  ASSERT_TRUE(indexer.ScanOnce().ok());
  EXPECT_EQ(ServeTmpListedPaths(**index),
            (std::vector<std::string>{"gone.json", "kept.json", "uploads/1-2-3-up.json"}));
}

// A logdir that reads as empty (a network share not mounted) would retire
// every run with its cache, names and tags: with none of two or more
// indexed files there, nothing is retired; once one is back, the others go.
TEST(ServeIndexerTest, ALogdirWithNoneOfItsFilesRetiresNothing) {
  testing::TempDir dir;
  const std::string logdir = fs::canonical(dir.path()).string();
  const std::string cache = logdir + "/.aiprof-serve/cache";
  fs::create_directories(cache);
  const std::string trace = ServeTmpTinyTrace();
  dir.Write("a.json", trace);
  dir.Write("b.json", trace);
  auto index = RunIndex::Open(logdir + "/.aiprof-serve/index.db");
  ASSERT_TRUE(index.ok()) << index.status().message();
  IndexerOptions options;
  options.logdir = logdir;
  options.cache_dir = cache;
  Indexer indexer(index->get(), options);
  ASSERT_TRUE(indexer.ScanOnce().ok());
  ASSERT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"a.json", "b.json"}));
  fs::remove(logdir + "/a.json");
  fs::remove(logdir + "/b.json");
  ASSERT_TRUE(indexer.ScanOnce().ok());
  ASSERT_TRUE(indexer.ScanOnce().ok());
  EXPECT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"a.json", "b.json"})) << "none there: both kept";
  dir.Write("b.json", trace);
  ASSERT_TRUE(indexer.ScanOnce().ok());
  EXPECT_EQ(ServeTmpListedPaths(**index), (std::vector<std::string>{"b.json"})) << "b.json back: a.json is gone";
}

// Importing for someone else (serve, mcp --allow), a FIFO opened as an input
// (one that replaced a listed file before it was read) blocked the scanner
// or converter until a writer came, for ever if none did. (In a child: the
// confinement is process-wide; the alarm ends a blocked open.)
TEST(ServeIndexerDeathTest, AConfinedImportRefusesAFifoWithoutBlocking) {
  testing::TempDir dir;
  const std::string fifo = fs::canonical(dir.path()).string() + "/swapped.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EXIT(
      {
        ::alarm(10);
        if (!ConfineImportsTo({fs::canonical(dir.path()).string()}).ok()) std::_Exit(3);
        auto source = ByteSource::Open(fifo);
        if (source.ok()) std::_Exit(4);
        if (source.status().message() != fifo + ": not a regular file (a FIFO)") std::_Exit(5);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace aiprof
