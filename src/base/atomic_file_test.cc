#include "src/base/atomic_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace aiprof
