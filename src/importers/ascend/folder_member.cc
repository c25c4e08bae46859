#include "src/importers/ascend/folder_member.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "src/importers/common/byte_source.h"
#include "src/importers/common/import_confinement.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSuffixes[] = {".gz", ".zst"};

bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

}  // namespace

std::string_view MemberName(std::string_view file_name) {
  for (std::string_view suffix : kSuffixes) {
    if (file_name.size() > suffix.size() && file_name.ends_with(suffix)) {
      return file_name.substr(0, file_name.size() - suffix.size());
    }
  }
  return file_name;
}

std::string FindMember(const fs::path& dir, std::string_view name) {
  fs::path plain = dir / std::string(name);
  if (Exists(plain)) return plain.string();
  for (std::string_view suffix : kSuffixes) {
    fs::path p = dir / (std::string(name) + std::string(suffix));
    if (Exists(p)) return p.string();
  }
  return "";
}

bool SupersededMember(const fs::path& p) {
  const std::string file = p.filename().string();
  const std::string_view name = MemberName(file);
  if (name.size() == file.size()) return false;
  return FindMember(p.parent_path(), name) != p.string();
}

namespace {
std::atomic<uint64_t> json_member_limit{kMaxJsonMemberBytes};
}  // namespace

void SetJsonMemberLimitForTesting(uint64_t bytes) {
  json_member_limit.store(bytes == 0 ? kMaxJsonMemberBytes : bytes, std::memory_order_relaxed);
}

StatusOr<simdjson::padded_string> LoadJsonMember(const std::string& path) {
  RETURN_IF_ERROR(CheckFolderMember(path));
  const uint64_t limit = json_member_limit.load(std::memory_order_relaxed);
  // Through ByteSource, plain or compressed: its reads count into the
  // thread's import budget as they come.
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path));
  std::string text;
  std::error_code ec;
  if (std::string_view(source->compression()) == "none") {
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec) text.reserve(static_cast<size_t>(std::min<uintmax_t>(size, limit + 1)));
  }
  constexpr size_t kChunk = size_t{1} << 20;
  for (;;) {
    const size_t have = text.size();
    if (have > limit) {
      return ErrStatus(
          path + ": over " + std::to_string(limit >> 20) + " MiB of JSON" +
          (std::string_view(source->compression()) == "none" ? "" : " (decompressed)") +
          "; a profiler folder's JSON side file is read whole, and this is its limit (kMaxJsonMemberBytes, "
          "docs/importers.md, Limits)");
    }
    text.resize(have + kChunk);
    StatusOr<size_t> got = source->Read(text.data() + have, kChunk);
    if (!got.ok()) return got.status();
    text.resize(have + *got);
    if (*got == 0) break;
  }
  if (text.empty()) return ErrStatus(path + ": the file is empty");
  return simdjson::padded_string(text);
}

}  // namespace aiprof
