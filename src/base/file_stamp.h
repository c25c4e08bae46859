// What a path was when it was read, to tell later whether it changed without
// reading it again: serve's index and the MCP server's reuse of a loaded
// trace both ask.
//
// A file's stamp is its device, inode, size and modification time. A folder's
// (a trace folder: Ascend PROF_*, a cluster of rank files) folds in the
// regular files under it: their count, total size and newest modification
// time. The folder's own modification time changes only when an entry is
// added, removed or renamed; a file rewritten in place changes only its own,
// which is why the files are read. Symbolic links inside are not followed.
#ifndef AIPROF_SRC_BASE_FILE_STAMP_H_
#define AIPROF_SRC_BASE_FILE_STAMP_H_

#include <cstdint>
#include <filesystem>
#include <optional>

namespace aiprof {

struct FileStamp {
  uint64_t device = 0, inode = 0;
  int64_t size = 0;      // a folder: the total size of its files
  int64_t mtime_ns = 0;  // Unix time; a folder: its newest file's, or its own if later
  int64_t files = 0;     // a folder: its regular files; a file: 1
  bool operator==(const FileStamp&) const = default;
};

// The stamp of `path` (symbolic links to it followed); nullopt when it cannot
// be read.
std::optional<FileStamp> StampOf(const std::filesystem::path& path);

// A directory entry's modification time as Unix time in ns (file_clock's
// epoch is not 1970 in libstdc++); 0 when it cannot be read.
int64_t UnixMtimeNs(const std::filesystem::directory_entry& entry);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_FILE_STAMP_H_
