#include "src/base/libc/writer_temp.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace aiprof {
namespace {

TEST(WriterTempTest, NamesCarryTheBootAndPidAndParseBack) {
  char boot[9];
  long pid = 0;
  size_t prefix = 0;
  ASSERT_TRUE(ParseWriterTempName("a.b.tmp.0123abcd-4567.XyZ012", boot, &pid, &prefix));
  EXPECT_STREQ(boot, "0123abcd");
  EXPECT_EQ(pid, 4567);
  EXPECT_EQ(prefix, 3u);
  EXPECT_FALSE(ParseWriterTempName("a.tmp.0123abcd-.XyZ012", boot, &pid));
  EXPECT_FALSE(ParseWriterTempName("a.tmp.0123abcd-12.XyZ01", boot, &pid));
  EXPECT_FALSE(ParseWriterTempName("a.tmp.XyZ012", boot, &pid));
  EXPECT_TRUE(IsUnownedTempName("out.tmp.XyZ012", "out", 3));
  EXPECT_FALSE(IsUnownedTempName("out.tmp.XyZ01-", "out", 3));
  EXPECT_FALSE(IsUnownedTempName("outx.tmp.XyZ012", "out", 3));

  const std::string dir = ::testing::TempDir() + "/aiprof_writer_temp_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  char path[4096];
  const int fd = CreateWriterTemp((dir + "/f").c_str(), false, path, sizeof(path));
  ASSERT_GE(fd, 0);
  WriterBootId(boot);
  const std::string name = std::filesystem::path(path).filename().string();
  EXPECT_EQ(name.substr(0, 15), std::string("f.tmp.") + boot + "-") << name;
  ASSERT_TRUE(ParseWriterTempName(name.c_str(), boot, &pid));
  EXPECT_EQ(pid, getpid());
  EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  const int other = ::open(path, O_RDONLY);
  EXPECT_NE(::flock(other, LOCK_EX | LOCK_NB), 0) << "the writer holds its lock";
  ::close(other);
  ::close(fd);
  std::filesystem::remove_all(dir);
}

bool MatchAll(void*, const char* name, char boot[9], long* pid) { return ParseWriterTempName(name, boot, pid); }

// A sweep examines at most max_candidates temporaries and reads at most
// max_entries entries, however many the folder holds.
TEST(WriterTempTest, ASweepIsBounded) {
  const std::string dir = ::testing::TempDir() + "/aiprof_writer_temp_bound_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // Files of a dead writer of this boot: the pid of a reaped child.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  char boot[9];
  WriterBootId(boot);
  for (int i = 0; i < 10; ++i) {
    std::ofstream(dir + "/f" + std::to_string(i) + ".tmp." + boot + "-" + std::to_string(dead) + ".abcdef") << "x";
  }
  WriterTempSweep sweep;
  sweep.match = &MatchAll;
  sweep.max_candidates = 3;
  EXPECT_EQ(SweepWriterTemps(dir.c_str(), sweep), 3);
  sweep.max_candidates = 100;
  sweep.max_entries = 4;  // with . and ..
  EXPECT_LE(SweepWriterTemps(dir.c_str(), sweep), 4);
  sweep.max_entries = kWriterTempMaxEntries;
  EXPECT_GE(SweepWriterTemps(dir.c_str(), sweep), 3);
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aiprof
