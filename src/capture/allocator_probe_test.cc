#include "src/capture/allocator_probe.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace aiprof {
namespace {

constexpr char kJemalloc[] = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2";

TEST(AllocatorProbeTest, ReadsOnlyAllocatorSettings) {
  EXPECT_TRUE(IsAllocatorSetting("LD_PRELOAD"));
  EXPECT_TRUE(IsAllocatorSetting("MALLOC_CONF"));
  EXPECT_TRUE(IsAllocatorSetting("GLIBC_TUNABLES"));
  EXPECT_TRUE(IsAllocatorSetting("MALLOC_TRIM_THRESHOLD_"));
  EXPECT_TRUE(IsAllocatorSetting("MALLOC_ARENA_MAX"));
  EXPECT_FALSE(IsAllocatorSetting("HOME"));
  EXPECT_FALSE(IsAllocatorSetting("AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(IsAllocatorSetting("MALLOC_SECRET"));
  EXPECT_EQ(AllocatorSettings({"HOME=/root", "MALLOC_CONF=dirty_decay_ms:-1", "TOKEN=x", "LD_PRELOAD=libjemalloc.so.2",
                               "no_equals", "GLIBC_TUNABLES="}),
            "MALLOC_CONF=dirty_decay_ms:-1; LD_PRELOAD=libjemalloc.so.2; GLIBC_TUNABLES=");
  const std::string cut = AllocatorSettings({"MALLOC_CONF=" + std::string(600, 'a')});
  EXPECT_EQ(cut, "MALLOC_CONF=" + std::string(512, 'a') + "...");
}

// Hand-made /proc/PID/maps lines.
TEST(AllocatorProbeTest, FindsTheLibraryOnceLibcIsMapped) {
  std::string lib = "unset";
  EXPECT_FALSE(AllocatorFromMaps("55d0 r-xp 0 08:01 1 /usr/bin/python3.11\n", &lib));
  EXPECT_EQ(lib, "unset");
  EXPECT_TRUE(AllocatorFromMaps("55d0 r-xp 0 08:01 1 /usr/bin/python3.11\n"
                                "7f00 r-xp 0 08:01 2 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
                                "7f10 r-xp 0 08:01 3 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
                                "7ffd rw-p 0 00:00 0 [stack]",
                                &lib));
  EXPECT_EQ(lib, "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
  EXPECT_EQ(AllocatorName(lib), "jemalloc");
  EXPECT_TRUE(AllocatorFromMaps("7f10 r-xp 0 08:01 3 /usr/lib/x86_64-linux-gnu/libc.so.6\n", &lib));
  EXPECT_EQ(lib, "");
  EXPECT_EQ(AllocatorName(lib), "glibc");
  EXPECT_EQ(AllocatorName("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"), "tcmalloc");
}

TEST(AllocatorProbeTest, ThisProcess) {
  EXPECT_FALSE(RunsAnotherExecutable(getpid()));
  EXPECT_FALSE(RunsAnotherExecutable(-1));
  std::string lib = "unset";
  ASSERT_TRUE(ProbeAllocatorLibrary(getpid(), &lib));
  EXPECT_EQ(lib, "");
  EXPECT_FALSE(ProbeAllocatorLibrary(-1, &lib));
}

// A real process started with jemalloc preloaded (Debian's libjemalloc2,
// installed by scripts/deps/capture.txt).
TEST(AllocatorProbeTest, ProcessWithJemallocPreloaded) {
  ASSERT_EQ(access(kJemalloc, R_OK), 0) << kJemalloc << " missing: apt-get install libjemalloc2 (scripts/install-deps.sh)";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("10"), nullptr};
    char* envp[] = {const_cast<char*>("LD_PRELOAD=libjemalloc.so.2"), const_cast<char*>("MALLOC_CONF=dirty_decay_ms:-1"),
                    const_cast<char*>("SECRET_TOKEN=do-not-read"), const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  std::string lib;
  bool ready = false;
  for (int i = 0; i < 400 && !ready; ++i) {
    // Before its execve the child is a copy of this process (glibc, ready).
    if (RunsAnotherExecutable(child)) ready = ProbeAllocatorLibrary(child, &lib);
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string settings = AllocatorSettingsOfProcess(child);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(ready);
  EXPECT_EQ(AllocatorName(lib), "jemalloc") << lib;
  EXPECT_EQ(settings, "LD_PRELOAD=libjemalloc.so.2; MALLOC_CONF=dirty_decay_ms:-1");
}

}  // namespace
}  // namespace aiprof
