#include "src/base/libc/writer_temp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

namespace aiprof {

void WriterBootId(char out[9]) {
  memcpy(out, "nobootid", 9);
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char b[8];
  ssize_t n = read(fd, b, sizeof(b));
  close(fd);
  if (n != static_cast<ssize_t>(sizeof(b))) return;
  for (char c : b) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return;
  }
  memcpy(out, b, 8);
}

namespace {

// mkstemp's or mkdtemp's entry at `path` (ending in XXXXXX): its descriptor.
int CreateOne(char* path, bool folder) {
  if (!folder) return mkostemp(path, O_CLOEXEC);  // a child forked during the write must not keep it
  if (!mkdtemp(path)) return -1;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    rmdir(path);
    errno = err;
  }
  return fd;
}

bool IsAlnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

int CreateWriterTemp(const char* prefix, bool folder, char* path, size_t size) {
  char boot[9];
  WriterBootId(boot);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int n = snprintf(path, size, "%s.tmp.%s-%ld.XXXXXX", prefix, boot, static_cast<long>(getpid()));
    if (n < 0 || static_cast<size_t>(n) >= size) {
      errno = ENAMETOOLONG;
      return -1;
    }
    const int fd = CreateOne(path, folder);
    if (fd < 0 && folder && errno == ENOENT) continue;  // a sweep removed the new folder before its open
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      close(fd);  // a sweep has it, and removes it
      continue;
    }
    // Other errors (no locks on this file system): written unlocked, and a
    // sweep cannot lock it either, so it keeps it.
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_nlink == 0) {
      close(fd);  // a sweep removed it before the lock
      continue;
    }
    return fd;
  }
  errno = EAGAIN;
  return -1;
}

bool ParseWriterTempName(const char* name, char boot[9], long* pid, size_t* prefix_len) {
  const size_t n = strlen(name);
  if (n < 6 + 1) return false;
  size_t dot = n - 7;  // before the 6 characters of mkstemp
  if (name[dot] != '.') return false;
  size_t dash = dot;
  while (dash > 0 && name[dash - 1] >= '0' && name[dash - 1] <= '9') --dash;
  if (dash == dot || dot - dash > 10 || dash == 0 || name[dash - 1] != '-') return false;
  --dash;  // at the '-'
  if (dash < 8 + 5 || memcmp(name + dash - 8 - 5, ".tmp.", 5) != 0) return false;
  memcpy(boot, name + dash - 8, 8);
  boot[8] = '\0';
  *pid = strtol(name + dash + 1, nullptr, 10);
  if (prefix_len) *prefix_len = dash - 8 - 5;
  return *pid > 0;
}

bool IsUnownedTempName(const char* name, const char* prefix, size_t prefix_len) {
  const size_t n = strlen(name);
  if (n != prefix_len + 5 + 6 || memcmp(name, prefix, prefix_len) != 0) return false;
  if (memcmp(name + prefix_len, ".tmp.", 5) != 0) return false;
  for (size_t i = prefix_len + 5; i < n; ++i) {
    if (!IsAlnum(name[i])) return false;
  }
  return true;
}

namespace {

struct SweepState {
  char own_boot[9];
  bool boot_known;
  long own_pid;
  time_t now;
};

// Why the entry may go, or nullptr: its writer is provably gone (this boot,
// and its pid is free or the sweeper's own) or it is older than the limit.
const char* WhyGone(const SweepState& s, const char* boot, long pid, const struct stat& st, char* why, size_t size) {
  if (pid > 0 && s.boot_known && strcmp(boot, s.own_boot) == 0) {
    if (pid == s.own_pid) {
      snprintf(why, size, "an unfinished write of this process (pid %ld), not locked", pid);
      return why;
    }
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      snprintf(why, size, "its writer, pid %ld on this boot, is gone and holds no lock on it", pid);
      return why;
    }
  }
  if (s.now - st.st_mtime > kWriterTempMaxAgeS) {
    snprintf(
        why, size, "untouched for %lld hours and not locked by a writer (%s)",
        static_cast<long long>((s.now - st.st_mtime) / 3600),
        pid <= 0 ? "its name has no boot id and pid: an earlier version's" : "its writer cannot be checked from here");
    return why;
  }
  return nullptr;
}

// Opens, locks and checks `name`; removes it when the rule allows.
bool SweepOne(int dfd, const char* dir, const char* name, const char* boot, long pid, const SweepState& s,
              const WriterTempSweep& sweep) {
  struct stat st, named;
  // Nothing but a regular file (a folder) is opened: not a device or FIFO
  // that happens to have such a name.
  if (fstatat(dfd, name, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
      !(sweep.folders ? S_ISDIR(named.st_mode) : S_ISREG(named.st_mode))) {
    return false;
  }
  const int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (sweep.folders ? O_DIRECTORY : 0);
  const int fd = openat(dfd, name, flags);
  if (fd < 0) return false;
  char why_buf[160];
  const char* why = nullptr;
  // Its writer holds the lock while it writes (and so does a child forked
  // meanwhile); the kernel frees it when they are gone.
  bool remove = fstat(fd, &st) == 0 && (sweep.folders ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) &&
                flock(fd, LOCK_EX | LOCK_NB) == 0;
  remove = remove && (why = WhyGone(s, boot, pid, st, why_buf, sizeof(why_buf))) != nullptr;
  remove = remove && (!sweep.content_ok || sweep.content_ok(sweep.ctx, fd, st, pid));
  // Still the entry under that name (not one renamed over it since).
  remove = remove && fstatat(dfd, name, &named, AT_SYMLINK_NOFOLLOW) == 0 && named.st_dev == st.st_dev &&
           named.st_ino == st.st_ino;
  if (remove) {
    remove = (sweep.remove ? sweep.remove(sweep.ctx, dfd, dir, name) : (unlinkat(dfd, name, 0) == 0 ? 0 : errno)) == 0;
  }
  if (remove && sweep.removed) sweep.removed(sweep.ctx, dir, name, sweep.folders, why);
  close(fd);  // the lock goes with it
  return remove;
}

}  // namespace

int SweepWriterTemps(const char* dir, const WriterTempSweep& sweep) {
  if (!sweep.match || (sweep.folders && !sweep.remove)) return 0;
  DIR* d = opendir(dir);
  if (!d) return 0;
  const int dfd = dirfd(d);
  SweepState s;
  WriterBootId(s.own_boot);
  s.boot_known = strcmp(s.own_boot, "nobootid") != 0;
  s.own_pid = static_cast<long>(getpid());
  s.now = time(nullptr);
  int removed = 0, entries = 0, candidates = 0;
  while (entries < sweep.max_entries && candidates < sweep.max_candidates) {
    errno = 0;
    dirent* e = readdir(d);
    if (!e) break;
    ++entries;
    char boot[9] = "";
    long pid = 0;
    if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0'))) continue;
    if (!sweep.match(sweep.ctx, e->d_name, boot, &pid)) continue;
    ++candidates;
    if (SweepOne(dfd, dir, e->d_name, boot, pid, s, sweep)) ++removed;
  }
  closedir(d);
  return removed;
}

namespace {
WriterTempLog g_log = nullptr;
}  // namespace

void SetWriterTempLog(WriterTempLog log) { __atomic_store_n(&g_log, log, __ATOMIC_RELEASE); }
WriterTempLog GetWriterTempLog() { return __atomic_load_n(&g_log, __ATOMIC_ACQUIRE); }

}  // namespace aiprof
