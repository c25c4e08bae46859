#include "src/base/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/base/libc/writer_temp.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aiprof-atomic-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  size_t Entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  std::string dir_;
};

TEST_F(AtomicFileTest, ReplacesARegularFileAndLeavesNoTemporary) {
  ASSERT_TRUE(WriteFileAtomically(Path("out.txt"), "old").ok());
  ASSERT_TRUE(WriteFileAtomically(Path("out.txt"), "new").ok());
  EXPECT_EQ(Read(Path("out.txt")), "new");
  EXPECT_EQ(Entries(), 1u);
}

// A link named by -o stays a link: the file it points to gets the content.
TEST_F(AtomicFileTest, ALinkStaysALinkAndItsTargetIsReplaced) {
  ASSERT_TRUE(WriteFileAtomically(Path("real.txt"), "old").ok());
  ASSERT_EQ(::symlink("real.txt", Path("link.txt").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("link.txt"), "new").ok());
  EXPECT_TRUE(fs::is_symlink(Path("link.txt")));
  EXPECT_EQ(Read(Path("real.txt")), "new");
  // A dangling link: its target is created.
  ASSERT_EQ(::symlink("later.txt", Path("dangling.txt").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("dangling.txt"), "made").ok());
  EXPECT_TRUE(fs::is_symlink(Path("dangling.txt")));
  EXPECT_EQ(Read(Path("later.txt")), "made");
  EXPECT_EQ(Entries(), 4u);  // no temporary left
}

// A FIFO (as /dev/null, /dev/stdout or any device) is written in place: it
// used to be renamed over, leaving a plain file where the pipe was.
TEST_F(AtomicFileTest, AFifoIsWrittenInPlaceAndStaysAFifo) {
  const std::string fifo = Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(CheckWritableOutput(fifo).ok());
  // The reader opens without blocking and gives up after 5 s, so a writer
  // that replaces the FIFO instead of writing into it fails the test
  // rather than hanging it.
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  std::string got;
  std::thread reader([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[256];
    while (std::chrono::steady_clock::now() < deadline) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n > 0) got.append(buf, static_cast<size_t>(n));
      if (n == 0 && !got.empty()) break;  // the writer closed
      if (n <= 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::close(fd);
  });
  Status st = WriteFileAtomically(fifo, "through the pipe");
  reader.join();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(got, "through the pipe");
  struct stat sb;
  ASSERT_EQ(::lstat(fifo.c_str(), &sb), 0);
  EXPECT_TRUE(S_ISFIFO(sb.st_mode));
  EXPECT_EQ(Entries(), 1u);
}

// Review 26, finding 3: `-o /dev/stdout > out.txt` (or `>> log`). The name
// resolves to the redirected regular file, which the writer replaced by
// rename: `>>` lost what the file held. A standard stream's name is written
// through the open descriptor, at its offset and with its O_APPEND.
TEST_F(AtomicFileTest, AStandardStreamIsWrittenThroughItsDescriptor) {
  const std::string log = Path("log.txt");
  ASSERT_TRUE(WriteFileAtomically(log, "earlier\n").ok());
  struct stat before;
  ASSERT_EQ(::stat(log.c_str(), &before), 0);
  const int append = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);  // as `>> log.txt`
  ASSERT_GE(append, 0);
  for (const std::string& name : {"/dev/fd/" + std::to_string(append), "/proc/self/fd/" + std::to_string(append)}) {
    EXPECT_EQ(StandardStreamFd(name), append);
    std::string target;
    bool in_place = false;
    ASSERT_TRUE(OutputTarget(name, &target, &in_place).ok());
    EXPECT_TRUE(in_place) << name << " resolves to a regular file but is written in place";
    EXPECT_TRUE(CheckWritableOutput(name).ok());
    Status st = WriteFileAtomically(name, "via " + name.substr(0, 5) + "\n");
    EXPECT_TRUE(st.ok()) << st.message();
  }
  EXPECT_EQ(Read(log), "earlier\nvia /dev/\nvia /proc\n");
  struct stat after;
  ASSERT_EQ(::stat(log.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the file was replaced, not written";
  EXPECT_EQ(Entries(), 1u);  // no temporary file
  // `> out.txt`: written from the descriptor's offset, as a shell's `>` would.
  const std::string out = Path("out.txt");
  const int fresh = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fresh, 0);
  ASSERT_EQ(::write(fresh, "head,", 5), 5);
  ASSERT_TRUE(WriteFileAtomically("/dev/fd/" + std::to_string(fresh), "body").ok());
  EXPECT_EQ(Read(out), "head,body");
  // /dev/stdout itself, redirected to the log (restored after).
  std::fflush(stdout);
  const int saved = ::dup(STDOUT_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(append, STDOUT_FILENO), STDOUT_FILENO);
  Status st = WriteFileAtomically("/dev/stdout", "stdout\n");
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Read(log), "earlier\nvia /dev/\nvia /proc\nstdout\n");
  ::close(append);
  ::close(fresh);
}

// The names StandardStreamFd knows, and the errors of a descriptor that is
// not open or is read-only.
TEST_F(AtomicFileTest, StandardStreamNames) {
  EXPECT_EQ(StandardStreamFd("/dev/stdout"), 1);
  EXPECT_EQ(StandardStreamFd("/dev/stderr"), 2);
  EXPECT_EQ(StandardStreamFd("/dev/fd/7"), 7);
  EXPECT_EQ(StandardStreamFd("/proc/self/fd/12"), 12);
  for (const char* other : {"/dev/null", "/dev/fd/", "/dev/fd/1x", "/dev/fd/../x", "/proc/1/fd/1", "/dev/stdin2",
                            "out.txt", "/dev/fd/12345678901"}) {
    EXPECT_EQ(StandardStreamFd(other), -1) << other;
  }
  const int closed = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(closed, 0);
  const int reading = ::open(Path("r").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(reading, 0);
  ::close(closed);
  Status st = WriteFileAtomically("/dev/fd/" + std::to_string(closed), "x");
  EXPECT_NE(st.message().find("is not open"), std::string::npos) << st.message();
  st = WriteFileAtomically("/dev/fd/" + std::to_string(reading), "x");
  EXPECT_NE(st.message().find("not open for writing"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckWritableOutput("/dev/fd/" + std::to_string(reading)).ok());
  ::close(reading);
  EXPECT_EQ(Read(Path("r")), "");
}

TEST_F(AtomicFileTest, AFolderIsRefused) {
  Status st = WriteFileAtomically(dir_, "x");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is a folder"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckWritableOutput(dir_).ok());
}

TEST_F(AtomicFileTest, WriteNewFileNeverReplaces) {
  bool exists = true;
  ASSERT_TRUE(WriteNewFileAtomically(Path("d"), "first", &exists).ok());
  EXPECT_FALSE(exists);
  EXPECT_EQ(Read(Path("d")), "first");
  ASSERT_TRUE(WriteNewFileAtomically(Path("d"), "second", &exists).ok());
  EXPECT_TRUE(exists);
  EXPECT_EQ(Read(Path("d")), "first");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u) << "no temporary file is left";
  EXPECT_FALSE(WriteNewFileAtomically(Path("no/such/folder/d"), "x", &exists).ok());
}

// --- Temporary files of killed writes (src/base/libc/writer_temp.h) -------------

// The removals base's sweeps said (SetWriterTempLog), for the test to read.
std::vector<std::string>* said_removals = nullptr;
void RecordRemoval(const char* dir, const char*, bool, const char* why) {
  (void)dir;
  if (said_removals) said_removals->push_back(why);
}

class AtomicFileKilledWriterTest : public AtomicFileTest {
 protected:
  void SetUp() override {
    AtomicFileTest::SetUp();
    said_removals = &said_;
    SetWriterTempLog(&RecordRemoval);
  }
  void TearDown() override {
    SetWriterTempLog(nullptr);
    said_removals = nullptr;
    AtomicFileTest::TearDown();
  }
  std::vector<std::string> Temps() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string n = e.path().filename().string();
      if (n.find(".tmp.") != std::string::npos) out.push_back(n);
    }
    return out;
  }
  // A process that opens an AtomicFileWriter on `target`, writes into it and
  // waits: its pid, once its temporary file exists.
  static pid_t StartWriter(const std::string& target) {
    int ready[2];
    if (::pipe(ready) != 0) return -1;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      AtomicFileWriter w;
      if (!w.Open(target).ok() || !w.Write("half of it").ok()) ::_exit(1);
      char b = 1;
      if (::write(ready[1], &b, 1) != 1) ::_exit(1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char b = 0;
    const bool ok = ::read(ready[0], &b, 1) == 1;
    ::close(ready[0]);
    return ok ? pid : -1;
  }
  static void Kill(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  std::vector<std::string> said_;
};

// ops2 item 2: a write killed (SIGKILL) before its rename left
// out.txt.tmp.XXXXXX for good; the next write of out.txt removes it (its
// writer, on this boot, is gone and holds no lock) and says so once.
TEST_F(AtomicFileKilledWriterTest, TheNextWriteOfATargetRemovesAKilledWritersTemporary) {
  const pid_t writer = StartWriter(Path("out.txt"));
  ASSERT_GT(writer, 0);
  ASSERT_EQ(Temps().size(), 1u);
  EXPECT_NE(Temps()[0].find("-" + std::to_string(writer) + "."), std::string::npos) << Temps()[0];
  Kill(writer);
  ASSERT_EQ(Temps().size(), 1u) << "a killed writer leaves its temporary file";
  ASSERT_TRUE(WriteFileAtomically(Path("out.txt"), "whole").ok());
  EXPECT_EQ(Read(Path("out.txt")), "whole");
  EXPECT_TRUE(Temps().empty()) << Temps()[0];
  ASSERT_EQ(said_.size(), 1u);
  EXPECT_NE(said_[0].find("pid " + std::to_string(writer) + " on this boot, is gone"), std::string::npos) << said_[0];
  // WriteNewFileAtomically's temporaries too.
  const pid_t second = StartWriter(Path("digest"));
  ASSERT_GT(second, 0);
  Kill(second);
  bool exists = false;
  ASSERT_TRUE(WriteNewFileAtomically(Path("digest"), "d", &exists).ok());
  EXPECT_TRUE(Temps().empty());
  EXPECT_EQ(said_.size(), 2u);
}

// A writer alive in another pid namespace (another container of this host,
// sharing the folder): its pid is free in the sweeper's namespace, but it
// holds its temporary's lock, so the sweeper's write leaves it alone.
TEST_F(AtomicFileKilledWriterTest, ALiveWritersTemporaryIsKeptFromAnotherPidNamespace) {
  AtomicFileWriter live;
  ASSERT_TRUE(live.Open(Path("out.txt")).ok());
  ASSERT_TRUE(live.Write("live").ok());
  ASSERT_EQ(Temps().size(), 1u);
  const pid_t writer = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) {
    if (::unshare(CLONE_NEWPID) != 0) ::_exit(77);
    const pid_t inner = ::fork();  // the first process of the new namespace
    if (inner == 0) {
      // The live writer's pid is nobody's here.
      if (::kill(writer, 0) == 0 || errno != ESRCH) ::_exit(3);
      ::_exit(WriteFileAtomically(Path("out.txt"), "from the other container").ok() ? 0 : 2);
    }
    int status = 0;
    ::waitpid(inner, &status, 0);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "no pid namespace here (unshare needs CAP_SYS_ADMIN)";
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(Read(Path("out.txt")), "from the other container");
  ASSERT_EQ(Temps().size(), 1u) << "the live writer's temporary file was removed";
  ASSERT_TRUE(live.Commit().ok());
  EXPECT_EQ(Read(Path("out.txt")), "live");
  EXPECT_TRUE(Temps().empty());
}

// Temporaries with no provable owner: earlier versions' `<target>.tmp.XXXXXX`
// (no boot id, no pid) and the current form written on another boot go
// only when untouched for a day and unlocked; another target's never.
TEST_F(AtomicFileKilledWriterTest, TemporariesWithoutAProvableOwnerGoOnlyByAge) {
  auto make = [&](const std::string& name, bool old) {
    std::ofstream(Path(name)) << "x";
    if (old) {
      const struct timespec times[2] = {{::time(nullptr) - 25 * 3600, 0}, {::time(nullptr) - 25 * 3600, 0}};
      ::utimensat(AT_FDCWD, Path(name).c_str(), times, 0);
    }
  };
  make("out.txt.tmp.Ab12Cd", true);              // earlier version's, a day old: goes
  make("out.txt.tmp.Ef34Gh", false);             // earlier version's, recent: stays
  make("out.txt.tmp.0badb00t-1.Ij56Kl", false);  // another boot's, pid 1 (alive here): stays
  make("out.txt.tmp.0badb00t-1.Mn78Op", true);   // the same, a day old: goes
  make("other.txt.tmp.Qr90St", true);            // another target's: stays
  make("out.txt.tmp.Ab12C", true);               // not mkstemp's six characters: stays
  make("locked.txt.tmp.Uv12Wx", true);           // locked by a writer: stays
  const int lock = ::open(Path("locked.txt.tmp.Uv12Wx").c_str(), O_RDONLY);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  ASSERT_TRUE(WriteFileAtomically(Path("out.txt"), "a").ok());
  ASSERT_TRUE(WriteFileAtomically(Path("locked.txt"), "b").ok());
  ::close(lock);
  std::vector<std::string> left = Temps();
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left,
            (std::vector<std::string>{"locked.txt.tmp.Uv12Wx", "other.txt.tmp.Qr90St", "out.txt.tmp.0badb00t-1.Ij56Kl",
                                      "out.txt.tmp.Ab12C", "out.txt.tmp.Ef34Gh"}));
  ASSERT_EQ(said_.size(), 2u);
  EXPECT_NE(said_[0].find("untouched for 25 hours"), std::string::npos) << said_[0];
}

}  // namespace
}  // namespace aiprof
