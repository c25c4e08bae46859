#include "src/base/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace aiprof {
namespace {

// Runs `command` in a forked child; its exit status, standard output and error.
struct PreparedRun {
  int status = -1;
  std::string out, err;
};
PreparedRun RunPrepared(PreparedCommand* command) {
  int out[2], err[2];
  EXPECT_EQ(pipe(out), 0);
  EXPECT_EQ(pipe(err), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(err[0]);
    command->ExecPrepared();
  }
  close(out[1]);
  close(err[1]);
  PreparedRun r;
  char buf[4096];
  for (int fd : {out[0], err[0]}) {
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) (fd == out[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
    close(fd);
  }
  waitpid(pid, &r.status, 0);
  return r;
}

TEST(PreparedCommandTest, EnvironmentEditsFollowSetenvRules) {
  setenv("AIPROF_CHILD_TEST_KEEP", "mine", 1);
  setenv("AIPROF_CHILD_TEST_GONE", "x", 1);
  PreparedCommand c(
      {"/bin/sh", "-c", "echo \"$AIPROF_CHILD_TEST_KEEP|$AIPROF_CHILD_TEST_NEW|${AIPROF_CHILD_TEST_GONE-unset}\""},
      "test");
  c.SetEnv("AIPROF_CHILD_TEST_KEEP", "theirs", /*overwrite=*/false);  // kept: the environment has it
  c.SetEnv("AIPROF_CHILD_TEST_NEW", "a=b", /*overwrite=*/false);
  c.UnsetEnv("AIPROF_CHILD_TEST_GONE");
  EXPECT_EQ(c.GetEnv("AIPROF_CHILD_TEST_KEEP"), "mine");
  EXPECT_EQ(c.GetEnv("AIPROF_CHILD_TEST"), "");  // a prefix is not a name
  PreparedRun r = RunPrepared(&c);
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  EXPECT_EQ(r.out, "mine|a=b|unset\n");
  // This process's own environment is untouched.
  EXPECT_STREQ(std::getenv("AIPROF_CHILD_TEST_GONE"), "x");
  c.SetEnv("AIPROF_CHILD_TEST_KEEP", "theirs");  // overwrite
  EXPECT_EQ(RunPrepared(&c).out, "theirs|a=b|unset\n");
  unsetenv("AIPROF_CHILD_TEST_KEEP");
  unsetenv("AIPROF_CHILD_TEST_GONE");
}

TEST(PreparedCommandTest, AProgramThatCannotRunSaysSoAndExits127) {
  PreparedCommand c({"/nonexistent/aiprof-no-such-program", "x"}, "aiprof test");
  PreparedRun r = RunPrepared(&c);
  ASSERT_TRUE(WIFEXITED(r.status));
  EXPECT_EQ(WEXITSTATUS(r.status), 127);
  EXPECT_EQ(r.err, "aiprof test: cannot run /nonexistent/aiprof-no-such-program: No such file or directory\n");
}

// Forked while other threads allocate all the time: the child execs without
// allocating, so it never waits on a lock they held (with setenv in the
// child this could hang; under ASan it did).
TEST(PreparedCommandTest, ForkWhileOtherThreadsAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int t = 0; t < 3; ++t) {
    busy.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        std::vector<std::string> v(64, std::string(100, 'x'));
      }
    });
  }
  PreparedCommand c({"/bin/true"}, "test");
  c.SetEnv("AIPROF_CHILD_TEST", "1");
  for (int i = 0; i < 50; ++i) {
    PreparedRun r = RunPrepared(&c);
    ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  }
  stop = true;
  for (std::thread& t : busy) t.join();
}

}  // namespace
}  // namespace aiprof
