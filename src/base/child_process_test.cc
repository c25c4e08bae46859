#include "src/base/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
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
  // A child that hangs before exec (a lock another thread held at the fork)
  // fails the test in 20 s instead of hanging it.
  PreparedRun r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open = 2;
  char buf[4096];
  while (open > 0) {
    if (poll(fds, 2, 20000) <= 0) {
      kill(pid, SIGKILL);
      r.err += "[the child did not exec and exit within 20 s]";
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      const ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n > 0) {
        (k == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else {
        close(fds[k].fd);
        fds[k].fd = -1;
        --open;
      }
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
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
// allocating, so it never waits on a lock they held. Under ASan a setenv in
// ExecPrepared before the exec made this test hang 3 runs of 3 (checked by
// mutation); glibc's malloc resets its locks at fork, so a release build
// cannot see that mistake.
TEST(PreparedCommandTest, ForkWhileOtherThreadsAllocate) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int t = 0; t < 3; ++t) {
    busy.emplace_back([&] {
      // Every small size class, freed at once: the allocator's shared
      // refill locks are taken all the time.
      size_t size = 8;
      while (!stop.load(std::memory_order_relaxed)) {
        std::vector<std::unique_ptr<char[]>> v;
        for (int k = 0; k < 64; ++k) v.emplace_back(new char[size = size % 512 + 8]);
      }
    });
  }
  PreparedCommand c({"/bin/true"}, "test");
  c.SetEnv("AIPROF_CHILD_TEST", "1");
  for (int i = 0; i < 200; ++i) {
    PreparedRun r = RunPrepared(&c);
    if (!(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)) {
      ADD_FAILURE() << "fork " << i << ": " << r.err;
      break;
    }
  }
  stop = true;
  for (std::thread& t : busy) t.join();
}

}  // namespace
}  // namespace aiprof
