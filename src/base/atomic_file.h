// Writes a file atomically: data goes to a temporary file in the same folder,
// which is fsynced and renamed over the target only on Commit(). A crash or
// error leaves either the old file or the new one, never half of one.
//
// The temporary file is `<target>.tmp.<boot>-<pid>.XXXXXX`, locked while it
// is written (src/base/libc/writer_temp.h). Each write first removes the
// temporaries that killed writes of the same target left (the target's
// `.tmp.<boot>-<pid>.XXXXXX` whose writer is provably gone, and any of its
// unlocked ones, earlier versions' `<target>.tmp.XXXXXX` included,
// untouched for 24 hours), said through SetWriterTempLog.
//
// What is at the path decides where the bytes go (OutputTarget):
//   - a regular file or nothing: the atomic rename above;
//   - a symbolic link: the file it points to is replaced atomically, the link
//     stays (a dangling link's target is created);
//   - a name for a standard stream or an open descriptor (/dev/stdout,
//     /dev/stderr, /dev/fd/N, /proc/self/fd/N; StandardStreamFd): written
//     in place through that descriptor, whatever it is open on, as a
//     shell's `>` would; so `-o /dev/stdout >> log` appends to log and
//     `> out.txt` writes into out.txt (resolving the link and renaming over
//     the file it names would replace the file, dropping what `>>` kept);
//   - anything else that is not a folder (a device such as /dev/null, a
//     FIFO): written in place, as a shell's `>` would; renaming over it
//     would replace the device or pipe with a plain file.
#ifndef AIPROF_SRC_BASE_ATOMIC_FILE_H_
#define AIPROF_SRC_BASE_ATOMIC_FILE_H_

#include <cstdio>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class AtomicFileWriter {
 public:
  AtomicFileWriter() = default;
  AtomicFileWriter(const AtomicFileWriter&) = delete;  // owns a FILE and the temporary's lock
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();  // removes the temporary file unless committed
  Status Open(const std::string& path);
  Status Write(const void* data, size_t n);
  Status Write(std::string_view s) { return Write(s.data(), s.size()); }
  Status Commit();

 private:
  std::string path_, target_, tmp_path_;
  FILE* file_ = nullptr;
  bool failed_ = false;
  bool in_place_ = false;  // a device, FIFO or open descriptor: no temporary file
  int lock_fd_ = -1;       // the temporary file's lock (writer_temp.h), held until it is renamed or removed
};

// Whether the file name `name` (no folder) is a writer's temporary: the
// form CreateWriterTemp gives every write in progress, AtomicFileWriter's
// and WriteNewFileAtomically's (`<target>.tmp.<boot>-<pid>.XXXXXX`), the
// SDK's event file's and the monitor's incident folder's alike, parsed by
// the same ParseWriterTempName that the sweeps use (src/base/libc/
// writer_temp.h); or an earlier version's `<target>.tmp.XXXXXX` (six
// letters or digits, mkstemp's). Such a file is renamed onto its target or
// removed: a reader listing a folder (aiprof serve's scanner) skips it.
bool IsAtomicTemporaryName(std::string_view name);

// The descriptor `path` names when it is /dev/stdout (1), /dev/stderr (2),
// /dev/fd/N or /proc/self/fd/N (N), else -1. By the name as given: such a
// name is written through the descriptor the process already has open,
// never by opening what the link resolves to.
int StandardStreamFd(std::string_view path);

// Writes `content` to `path` atomically.
Status WriteFileAtomically(const std::string& path, std::string_view content);

// Creates `path` holding `content` unless something is there already
// (*exists, and nothing is written), never replacing it: the bytes go to a
// temporary file beside it, fsynced and hard-linked to the name (atomic; the
// link fails when the name is taken). Where hard links are not supported,
// the name is taken with O_EXCL and filled in place. For outputs that
// several writers may name alike (cluster digests of one rank).
Status WriteNewFileAtomically(const std::string& path, std::string_view content, bool* exists);

// Where an output named `path` is written: `*in_place` when it names an open
// descriptor (StandardStreamFd; an error when it is not open or is a folder)
// or is a device, FIFO or other non-regular file written where it is;
// otherwise the regular file to replace (the path itself, or a symbolic
// link's target).
Status OutputTarget(const std::string& path, std::string* target, bool* in_place);

// Checks, before any work, that `path` can be written atomically: its folder
// exists, is a folder and is writable, and `path` itself is not a folder.
// For commands whose work is expensive or cannot be repeated (a capture).
Status CheckWritableOutput(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_ATOMIC_FILE_H_
