// Temporary files (and working folders) of writers that may be killed
// mid-write, and the one rule that removes them: only when their writer is
// provably gone, or when they are untouched for a day.
//
// A writer names its temporary `<prefix>.tmp.<boot>-<pid>.XXXXXX` (<boot>:
// the first 8 hex digits of /proc/sys/kernel/random/boot_id, "nobootid"
// where it cannot be read; XXXXXX: mkstemp's) and holds an exclusive flock
// on it while it writes (CreateWriterTemp); the kernel frees the lock when
// the writer (and any child forked meanwhile) is gone. A sweep
// (SweepWriterTemps) removes an entry only when
//   - its lock is free (flock(LOCK_EX|LOCK_NB) succeeds), and
//   - its <boot> is this boot's and no process has its <pid> (or the pid is
//     the sweeper's own: a live write of its own holds the lock), or it has
//     not been modified for kWriterTempMaxAgeS (a writer on another boot or
//     host, or a name without an owner: an earlier version's).
// The pid alone would not do (a writer in another container of this host
// has a pid that is free in the sweeper's pid namespace; a reboot reuses
// pids), nor the lock alone (file systems whose locks do not reach other
// hosts): both are required. Docs: docs/sdk.md, docs/monitor.md, README
// ("-o FILE").
//
// libc only (no allocation, no exceptions): callbacks take a context
// pointer instead of std::function.
#ifndef AIPROF_SRC_BASE_WRITER_TEMP_H_
#define AIPROF_SRC_BASE_WRITER_TEMP_H_

#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

namespace aiprof {

// A temporary entry whose lock is free and that is untouched this long is
// removed whoever wrote it.
inline constexpr time_t kWriterTempMaxAgeS = 24 * 3600;
// A sweep reads at most this many folder entries (a folder of millions of
// files is not read whole by every writer) and examines (opens, locks,
// removes) at most kWriterTempMaxCandidates temporary entries of them.
inline constexpr int kWriterTempMaxEntries = 65536;
inline constexpr int kWriterTempMaxCandidates = 256;

// The first 8 hex digits of this boot's id, or "nobootid".
void WriterBootId(char out[9]);

// Creates `<prefix>.tmp.<boot>-<pid>.XXXXXX` (a folder when `folder`, mode
// 0700; else a file, 0600) and takes its exclusive lock. Returns its
// descriptor (O_CLOEXEC; a folder's is read-only) with the name in `path`
// (`size` bytes), or -1 with errno set. A name a sweep took between its
// creation and the lock is given up for another. Where the file system has
// no locks the entry is written unlocked (a sweep cannot lock it either,
// so it keeps it).
int CreateWriterTemp(const char* prefix, bool folder, char* path, size_t size);

// Parses `<prefix>.tmp.<8 chars>-<pid>.<6 chars>`: its boot id, pid and
// the length of its prefix (`prefix_len` may be null).
bool ParseWriterTempName(const char* name, char boot[9], long* pid, size_t* prefix_len = nullptr);

// Whether `name` is `<prefix>.tmp.XXXXXX` (6 letters or digits, as mkstemp
// makes them): a temporary of an earlier version, which names no owner.
bool IsUnownedTempName(const char* name, const char* prefix, size_t prefix_len);

// What a sweep removes and how. `match` says which entries are temporaries:
// it sets `boot` and `pid` (pid 0: no owner, removed by age alone).
struct WriterTempSweep {
  bool (*match)(void* ctx, const char* name, char boot[9], long* pid) = nullptr;
  bool folders = false;  // the temporaries are folders (else regular files)
  // Optional: whether the open, locked entry may go, given its owner's pid
  // (0: none named). The SDK checks that it is an event file's header
  // without its magic.
  bool (*content_ok)(void* ctx, int fd, const struct stat& st, long pid) = nullptr;
  // Removes `name` in `dir` (for folders, with what they hold; required
  // when `folders`): 0 or an errno value. Default: unlinkat.
  int (*remove)(void* ctx, int dirfd, const char* dir, const char* name) = nullptr;
  // Said once per removal, with why (a sentence without the name).
  void (*removed)(void* ctx, const char* dir, const char* name, bool folder, const char* why) = nullptr;
  void* ctx = nullptr;
  int max_entries = kWriterTempMaxEntries;
  int max_candidates = kWriterTempMaxCandidates;
};

// Removes from `dir` the temporaries of `sweep` whose writer is gone, as
// the header says. Returns how many it removed.
int SweepWriterTemps(const char* dir, const WriterTempSweep& sweep);

// Where removals of base's own sweeps (AtomicFileWriter's) are said: none
// until a program sets one (the CLI: SayWriterTempRemovals, which escapes
// the name for the terminal). Thread-safe.
using WriterTempLog = void (*)(const char* dir, const char* name, bool folder, const char* why);
void SetWriterTempLog(WriterTempLog log);
WriterTempLog GetWriterTempLog();

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_WRITER_TEMP_H_
