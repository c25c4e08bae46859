#include "src/base/child_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
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

// aiprof killed with SIGKILL (or by the OOM killer) must not leave the
// command it started running: the command gets the signal it asked for.
TEST(ChildProcessTest, TheCommandStopsWhenItsParentIsKilled) {
  int pids[2];
  ASSERT_EQ(pipe(pids), 0);
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    // The stand-in for aiprof: starts `sleep 60`, reports its pid, then is killed.
    PreparedCommand command({"sleep", "60"}, "test");
    command.StopWithParent(SIGTERM);
    const pid_t child = fork();
    if (child == 0) command.ExecPrepared();
    ssize_t put = write(pids[1], &child, sizeof(child));
    (void)put;
    pause();
    _exit(0);
  }
  close(pids[1]);
  pid_t child = 0;
  ASSERT_EQ(read(pids[0], &child, sizeof(child)), static_cast<ssize_t>(sizeof(child)));
  close(pids[0]);
  usleep(200 * 1000);  // the child has execed sleep by now (or will find its parent gone)
  ASSERT_EQ(kill(parent, SIGKILL), 0);
  ASSERT_EQ(waitpid(parent, nullptr, 0), parent);
  // The grandchild is reparented (to init or a subreaper): poll for it to go.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(child, 0) != 0 && errno == ESRCH;
    if (!gone) {
      // A zombie not yet reaped by its new parent counts as gone.
      char path[64];
      std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(child));
      FILE* f = std::fopen(path, "r");
      if (f != nullptr) {
        int pid = 0;
        char comm[64] = {0}, state = 0;
        gone = std::fscanf(f, "%d %63s %c", &pid, comm, &state) == 3 && state == 'Z';
        std::fclose(f);
      }
    }
    if (!gone) usleep(20 * 1000);
  }
  if (!gone) kill(child, SIGKILL);
  EXPECT_TRUE(gone) << "sleep (pid " << child << ") outlived its killed parent";
}

}  // namespace
}  // namespace aiprof
