// The files of a profiler folder (torch_npu's *_ascend_pt, msprof's PROF_*)
// by name, plain or compressed one by one: users `gzip -r` (or zstd) a
// profiler folder to move it, and its kernel_details.csv is then
// kernel_details.csv.gz. A member is found as NAME, else NAME.gz, else
// NAME.zst (the plain file wins where both are there), and read through
// ByteSource, which tells gzip and zstd by their magic bytes and applies
// the same limits as to a compressed trace (kMaxExpansion, an import
// budget); no member is decompressed to disk. Before, such a folder was "a
// torch_npu profiler folder whose files are compressed" (input trial, 'in').
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_FOLDER_MEMBER_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_FOLDER_MEMBER_H_

#include <simdjson.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

// `file_name` without a compression suffix (".gz", ".zst"): what a member
// is called, for matching it by name or pattern.
std::string_view MemberName(std::string_view file_name);

// The path of member `name` of `dir`: dir/name, else dir/name.gz, else
// dir/name.zst, when it exists (a file, a link or anything else: the reader
// checks it, CheckFolderMember); "" when none does.
std::string FindMember(const std::filesystem::path& dir, std::string_view name);

// True if one of `dir`'s entries is `p`'s compressed or plain twin that
// FindMember prefers over `p` (p is NAME.gz or NAME.zst and NAME, or NAME.gz
// before a NAME.zst, exists): a folder listing skips `p` then.
bool SupersededMember(const std::filesystem::path& p);

// All of a JSON member (communication.json, profiler_info_N.json, ...),
// decompressed when compressed, after CheckFolderMember. Errors name the
// file; a file that decompresses to nothing is "empty", one over
// kMaxJsonMemberBytes (decompressed) is an error naming the limit.
StatusOr<simdjson::padded_string> LoadJsonMember(const std::string& path);

// A JSON member is held whole (and parsed into a DOM of about its size), so
// its size is bounded: a 1 MB communication.json.gz of 1 GB held 2.1 GB
// resident before the parse began (out of memory under ulimit -v 4 GB).
// Real ones are KiB to tens of MB (a few KiB per collective op and step).
inline constexpr uint64_t kMaxJsonMemberBytes = uint64_t{256} << 20;
// Visible for testing: another limit for the loads after it (0: the default).
void SetJsonMemberLimitForTesting(uint64_t bytes);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_FOLDER_MEMBER_H_
