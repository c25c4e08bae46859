#include "src/importers/common/decompressed_copy.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "src/base/import_budget.h"
#include "src/importers/common/byte_source.h"

namespace aiprof {
namespace {

std::atomic<uint64_t> max_copy_bytes{kMaxDecompressedCopyBytes};

// The live copies by path(), for OpenableName.
std::mutex copies_mu;
std::map<std::string, DecompressedCopy*>& Copies() {
  static std::map<std::string, DecompressedCopy*> copies;
  return copies;
}

// A file in `folder` without a name (O_TMPFILE), or else one named and
// unlinked at once (no name to link later: OpenableName then fails).
int CreateUnnamed(const std::string& folder, std::string* error) {
  int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string tmp = folder + "/aiprof-decompressed-XXXXXX";
  fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    *error = std::strerror(errno);
    return -1;
  }
  ::unlink(tmp.c_str());
  return fd;
}

std::string GiB(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

void DecompressedCopy::SetMaxBytesForTesting(uint64_t max_bytes) {
  max_copy_bytes.store(max_bytes == 0 ? kMaxDecompressedCopyBytes : max_bytes, std::memory_order_relaxed);
}

DecompressedCopy::~DecompressedCopy() {
  {
    std::lock_guard<std::mutex> lock(copies_mu);
    Copies().erase(path_);
  }
  DropName();
  ::close(fd_);
}

void DecompressedCopy::DropName() {
  if (name_.empty()) return;
  ::unlink(name_.c_str());
  ::rmdir(name_folder_.c_str());
  name_.clear();
  name_folder_.clear();
}

StatusOr<std::string> OpenableName(const std::string& path) {
  std::lock_guard<std::mutex> lock(copies_mu);
  auto it = Copies().find(path);
  if (it == Copies().end()) return path;
  DecompressedCopy* copy = it->second;
  if (!copy->name_.empty()) return copy->name_;
  std::error_code ec;
  std::string folder = (std::filesystem::temp_directory_path(ec) / "aiprof-decompressed-XXXXXX").string();
  if (ec || ::mkdtemp(folder.data()) == nullptr) {
    return ErrStatus(path + ": cannot make a folder for a name of the decompressed copy: " +
                     (ec ? ec.message() : std::string(std::strerror(errno))));
  }
  const std::string name = folder + "/copy";
  if (::linkat(AT_FDCWD, path.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) != 0) {
    const std::string why = std::strerror(errno);
    ::rmdir(folder.c_str());
    return ErrStatus(path + ": cannot give the decompressed copy a name to open it by (" + why +
                     "; $TMPDIR's file system lacks O_TMPFILE?): decompress it first");
  }
  copy->name_folder_ = folder;
  copy->name_ = name;
  return name;
}

void DropOpenableName(const std::string& path) {
  std::lock_guard<std::mutex> lock(copies_mu);
  auto it = Copies().find(path);
  if (it != Copies().end()) it->second->DropName();
}

StatusOr<std::unique_ptr<DecompressedCopy>> DecompressedCopy::Create(const std::string& path,
                                                                     const std::string& format) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path));
  const std::string what = path + ": " + source->compression() + "-compressed " + format;
  std::error_code ec;
  const std::string folder = std::filesystem::temp_directory_path(ec).string();
  std::string error = ec ? ec.message() : "";
  const int fd = ec ? -1 : CreateUnnamed(folder, &error);
  if (fd < 0) {
    return ErrStatus(what + " is read through a decompressed temporary copy, which could not be created in " +
                     (ec ? std::string("$TMPDIR") : folder) + ": " + error + " (set TMPDIR, or decompress it first)");
  }
  std::unique_ptr<DecompressedCopy> copy(new DecompressedCopy(fd, "/proc/self/fd/" + std::to_string(fd)));
  const uint64_t limit = max_copy_bytes.load(std::memory_order_relaxed);
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ASSIGN_OR_RETURN(size_t got, source->Read(buffer.data(), buffer.size()));
    if (got == 0) break;
    if (copy->bytes_ + got > limit) {
      return ErrStatus(what + " decompresses to more than " + GiB(limit) +
                       ", the limit of a compressed file read through a temporary copy (docs/importers.md); "
                       "decompress it first");
    }
    for (size_t done = 0; done < got;) {
      const ssize_t put = ::write(fd, buffer.data() + done, got - done);
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) {
        return ErrStatus(what + ": cannot write its decompressed copy in " + folder + ": " + std::strerror(errno) +
                         " (set TMPDIR, or decompress it first)");
      }
      done += static_cast<size_t>(put);
    }
    copy->bytes_ += got;
  }
  // The import budget counted the decompressed bytes as they were copied,
  // so a bomb stops at its limit; the importer that reads the copy counts
  // them again as it counts a plain file's (an Nsight export by its size, a
  // stream by its reads): given back here, a compressed input is charged
  // once, as its plain file is (it was charged twice: serve refused a gzip'd
  // export whose plain file passed --max-convert-mb).
  if (ImportBudget* budget = CurrentImportBudget(); budget != nullptr) {
    budget->bytes.fetch_sub(copy->bytes_, std::memory_order_relaxed);
  }
  std::lock_guard<std::mutex> lock(copies_mu);
  Copies()[copy->path_] = copy.get();
  return copy;
}

}  // namespace aiprof
