#include "src/base/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "src/base/libc/writer_temp.h"

namespace aiprof {

AtomicFileWriter::~AtomicFileWriter() {
  if (file_) {
    if (!in_place_) ::unlink(tmp_path_.c_str());
    std::fclose(file_);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

namespace {

// The target's own temporaries: `<name>.tmp.<boot>-<pid>.XXXXXX` (an owner
// to check) and `<name>.tmp.XXXXXX` (earlier versions: no owner).
struct OwnTemps {
  const char* name;
  size_t len;
};

bool MatchOwnTemp(void* ctx, const char* entry, char boot[9], long* pid) {
  const OwnTemps& t = *static_cast<const OwnTemps*>(ctx);
  size_t prefix_len = 0;
  if (ParseWriterTempName(entry, boot, pid, &prefix_len))
    return prefix_len == t.len && std::memcmp(entry, t.name, t.len) == 0;
  *pid = 0;
  return IsUnownedTempName(entry, t.name, t.len);
}

void SayRemoved(void*, const char* dir, const char* name, bool folder, const char* why) {
  if (WriterTempLog log = GetWriterTempLog()) log(dir, name, folder, why);
}

// Removes the temporaries that killed writes of `target` left beside it
// (writer_temp.h: only when their writer is provably gone, or after a day),
// then creates this write's: its descriptor, its name in *tmp.
int CreateTargetTemp(const std::string& target, std::string* tmp) {
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  OwnTemps own{base.c_str(), base.size()};
  WriterTempSweep sweep;
  sweep.match = &MatchOwnTemp;
  sweep.removed = &SayRemoved;
  sweep.ctx = &own;
  SweepWriterTemps(dir.c_str(), sweep);
  std::vector<char> name(target.size() + 64);
  const int fd = CreateWriterTemp(target.c_str(), false, name.data(), name.size());
  if (fd >= 0) tmp->assign(name.data());
  return fd;
}

// A standard stream's descriptor `fd` (named by `path`) is open for writing.
Status CheckStreamWritable(int fd, const std::string& path) {
  if ((::fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY) {
    return ErrStatus(path + ": descriptor " + std::to_string(fd) + " is not open for writing");
  }
  return OkStatus();
}

}  // namespace

bool IsAtomicTemporaryName(std::string_view name) {
  if (name.empty() || name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return false;
  }
  const std::string s(name);
  char boot[9];
  long pid = 0;
  if (ParseWriterTempName(s.c_str(), boot, &pid)) return true;
  return s.size() > 11 && IsUnownedTempName(s.c_str(), s.c_str(), s.size() - 11);
}

int StandardStreamFd(std::string_view path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view dir : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (path.size() <= dir.size() || path.substr(0, dir.size()) != dir) continue;
    std::string_view digits = path.substr(dir.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) return -1;
    int fd = 0;
    for (char c : digits) fd = fd * 10 + (c - '0');
    return fd;
  }
  return -1;
}

Status OutputTarget(const std::string& path, std::string* target, bool* in_place) {
  *target = path;
  *in_place = false;
  if (path.empty()) return ErrStatus("no output file named");
  struct stat st;
  if (const int fd = StandardStreamFd(path); fd >= 0) {
    // Written through the open descriptor (see the header): what the link
    // resolves to, a regular file included, is not replaced.
    if (::fstat(fd, &st) != 0) return ErrStatus(path + ": descriptor " + std::to_string(fd) + " is not open");
    if (S_ISDIR(st.st_mode)) return ErrStatus(path + ": is a folder; name a file to write");
    *in_place = true;
    return OkStatus();
  }
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return ErrStatus(path + ": is a folder; name a file to write");
    if (!S_ISREG(st.st_mode)) {
      *in_place = true;
      return OkStatus();
    }
    struct stat lst;
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      char resolved[PATH_MAX];
      if (::realpath(path.c_str(), resolved) == nullptr) {
        return ErrStatus(path + ": cannot resolve the link: " + std::strerror(errno));
      }
      *target = resolved;
    }
    return OkStatus();
  }
  struct stat lst;
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    // A dangling link: create what it points to (one level, as `>` does).
    char link[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), link, sizeof(link) - 1);
    if (n <= 0) return ErrStatus(path + ": cannot read the link: " + std::strerror(errno));
    std::string to(link, static_cast<size_t>(n));
    const size_t slash = path.rfind('/');
    if (to[0] != '/' && slash != std::string::npos) to = path.substr(0, slash + 1) + to;
    *target = to;
  }
  return OkStatus();
}

Status AtomicFileWriter::Open(const std::string& path) {
  path_ = path;
  std::string target;
  RETURN_IF_ERROR(OutputTarget(path, &target, &in_place_));
  if (in_place_) {
    const int stream = StandardStreamFd(path);
    if (stream >= 0) {
      RETURN_IF_ERROR(CheckStreamWritable(stream, path));
      // What this process printed before goes first (stdio buffers).
      std::fflush(stdout);
      std::fflush(stderr);
    }
    // A standard stream is written through a copy of its descriptor: at its
    // offset, with its O_APPEND (opening /dev/stdout anew would start a
    // redirected file at byte 0, overwriting what `>>` kept).
    int fd = stream >= 0 ? ::fcntl(stream, F_DUPFD_CLOEXEC, 0) : ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrStatus(path + ": cannot open: " + std::strerror(errno));
    file_ = ::fdopen(fd, "wb");
    if (!file_) {
      ::close(fd);
      return ErrStatus(path + ": fdopen failed: " + std::strerror(errno));
    }
    return OkStatus();
  }
  target_ = target;
  // Locked until the file is closed (after the rename, or when it is
  // removed): a sweep of another writer of this target keeps it meanwhile.
  int fd = CreateTargetTemp(target, &tmp_path_);
  if (fd < 0) return ErrStatus(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  // mkstemp creates 0600; give the file the mode a plain create would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  // The lock is the open file's: a copy of the descriptor keeps it from the
  // fclose in Commit until the name is renamed away.
  lock_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::unlink(tmp_path_.c_str());
    ::close(fd);
    return ErrStatus(path + ": fdopen failed: " + std::strerror(err));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  return OkStatus();
}

Status AtomicFileWriter::Write(const void* data, size_t n) {
  if (failed_ || !file_) return ErrStatus(path_ + ": write after failure");
  if (n > 0 && std::fwrite(data, 1, n, file_) != n) {
    failed_ = true;
    return ErrStatus(path_ + ": write failed: " + std::strerror(errno));
  }
  return OkStatus();
}

Status AtomicFileWriter::Commit() {
  if (failed_ || !file_) return ErrStatus(path_ + ": nothing to commit");
  bool ok = std::fflush(file_) == 0;
  // fsync of a pipe or character device fails with EINVAL: nothing to sync.
  if (ok && ::fsync(fileno(file_)) != 0 && !(in_place_ && (errno == EINVAL || errno == EROFS))) ok = false;
  int saved = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (in_place_) {
    if (!ok) return ErrStatus(path_ + ": cannot write: " + std::strerror(saved));
    return OkStatus();
  }
  const auto release = [this] {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
  };
  if (!ok) {
    ::unlink(tmp_path_.c_str());
    release();
    return ErrStatus(path_ + ": cannot write: " + std::strerror(saved));
  }
  if (::rename(tmp_path_.c_str(), target_.c_str()) != 0) {
    saved = errno;
    ::unlink(tmp_path_.c_str());
    release();
    return ErrStatus(path_ + ": cannot rename into place: " + std::strerror(saved));
  }
  release();
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  AtomicFileWriter w;
  RETURN_IF_ERROR(w.Open(path));
  RETURN_IF_ERROR(w.Write(content));
  return w.Commit();
}

Status CheckWritableOutput(const std::string& path) {
  std::string target;
  bool in_place = false;
  RETURN_IF_ERROR(OutputTarget(path, &target, &in_place));
  if (in_place) {
    if (const int fd = StandardStreamFd(path); fd >= 0) return CheckStreamWritable(fd, path);
    if (::access(path.c_str(), W_OK) != 0) return ErrStatus(path + ": not writable: " + std::strerror(errno));
    return OkStatus();
  }
  struct stat st;
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) return ErrStatus(path + ": folder " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return ErrStatus(path + ": " + dir + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0)
    return ErrStatus(path + ": folder " + dir + " is not writable: " + std::strerror(errno));
  return OkStatus();
}

Status WriteNewFileAtomically(const std::string& path, std::string_view bytes, bool* exists) {
  *exists = false;
  auto write_all = [&](int fd) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return ::fsync(fd) == 0;
  };
  std::string tmp;
  const int fd = CreateTargetTemp(path, &tmp);
  if (fd < 0) return ErrStatus(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const bool written = write_all(fd);
  const int write_errno = errno;
  if (!written) {
    ::unlink(tmp.c_str());
    ::close(fd);
    return ErrStatus(path + ": cannot write: " + std::strerror(write_errno));
  }
  const int linked = ::link(tmp.c_str(), path.c_str());
  const int link_errno = errno;
  ::unlink(tmp.c_str());
  ::close(fd);  // its lock held until the temporary name is gone
  if (linked == 0) return OkStatus();
  if (link_errno == EEXIST) {
    *exists = true;
    return OkStatus();
  }
  if (link_errno != EPERM && link_errno != EOPNOTSUPP && link_errno != ENOSYS) {
    return ErrStatus(path + ": cannot create: " + std::strerror(link_errno));
  }
  const int out = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (out < 0) {
    if (errno == EEXIST) {
      *exists = true;
      return OkStatus();
    }
    return ErrStatus(path + ": cannot create: " + std::strerror(errno));
  }
  const bool ok = write_all(out);
  const int saved = errno;
  ::close(out);
  if (!ok) return ErrStatus(path + ": cannot write: " + std::strerror(saved));
  return OkStatus();
}

}  // namespace aiprof
