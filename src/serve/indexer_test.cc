#include "src/serve/indexer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>

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
