#include "src/base/atomic_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace aiprof {

AtomicFileWriter::~AtomicFileWriter() {
  if (file_) {
    std::fclose(file_);
    ::unlink(tmp_path_.c_str());
  }
}

Status AtomicFileWriter::Open(const std::string& path) {
  path_ = path;
  tmp_path_ = path + ".tmp.XXXXXX";
  std::vector<char> name(tmp_path_.begin(), tmp_path_.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) return ErrStatus(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  tmp_path_.assign(name.data());
  // mkstemp creates 0600; give the file the mode a plain create would.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    ::close(fd);
    ::unlink(tmp_path_.c_str());
    return ErrStatus(path + ": fdopen failed: " + std::strerror(errno));
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
  bool ok = std::fflush(file_) == 0 && ::fsync(fileno(file_)) == 0;
  int saved = errno;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok) {
    ::unlink(tmp_path_.c_str());
    return ErrStatus(path_ + ": cannot write: " + std::strerror(saved));
  }
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    saved = errno;
    ::unlink(tmp_path_.c_str());
    return ErrStatus(path_ + ": cannot rename into place: " + std::strerror(saved));
  }
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  AtomicFileWriter w;
  RETURN_IF_ERROR(w.Open(path));
  RETURN_IF_ERROR(w.Write(content));
  return w.Commit();
}

Status CheckWritableOutput(const std::string& path) {
  if (path.empty()) return ErrStatus("no output file named");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return ErrStatus(path + ": is a folder; name a file to write");
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) return ErrStatus(path + ": folder " + dir + ": " + std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return ErrStatus(path + ": " + dir + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0) return ErrStatus(path + ": folder " + dir + " is not writable: " + std::strerror(errno));
  return OkStatus();
}

}  // namespace aiprof
