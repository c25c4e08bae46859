#include "src/base/file_stamp.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <system_error>

namespace aiprof {

namespace fs = std::filesystem;

int64_t UnixMtimeNs(const fs::directory_entry& entry) {
  std::error_code ec;
  const auto t = entry.last_write_time(ec);
  if (ec) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::file_clock::to_sys(t).time_since_epoch())
      .count();
}

std::optional<FileStamp> StampOf(const fs::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  FileStamp stamp;
  stamp.device = st.st_dev;
  stamp.inode = st.st_ino;
  stamp.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (!S_ISDIR(st.st_mode)) {
    stamp.size = st.st_size;
    stamp.files = 1;
    return stamp;
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
    stamp.size += static_cast<int64_t>(it->file_size(ec));
    stamp.mtime_ns = std::max(stamp.mtime_ns, UnixMtimeNs(*it));
    ++stamp.files;
  }
  return stamp;
}

}  // namespace aiprof
