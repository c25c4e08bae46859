#include "src/importers/common/import_confinement.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <memory>

namespace aiprof {
namespace {

std::vector<std::string>& Roots() {
  static std::vector<std::string> roots;
  return roots;
}

std::string Resolve(const std::string& path) {
  std::unique_ptr<char, decltype(&free)> r(realpath(path.c_str(), nullptr), &free);
  return r ? std::string(r.get()) : std::string();
}

bool Inside(const std::string& root, const std::string& path) {
  if (root == "/") return true;
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

}  // namespace

Status ConfineImportsTo(const std::vector<std::string>& roots) {
  std::vector<std::string> resolved;
  for (const std::string& r : roots) {
    std::string c = Resolve(r);
    if (c.empty()) return ErrStatus(r + ": cannot resolve this folder to confine imports to");
    resolved.push_back(std::move(c));
  }
  Roots() = std::move(resolved);
  return OkStatus();
}

Status CheckImportPath(const std::string& path) {
  const std::vector<std::string>& roots = Roots();
  if (roots.empty()) return OkStatus();
  const std::string resolved = Resolve(path);
  if (resolved.empty()) return OkStatus();
  for (const std::string& root : roots) {
    if (Inside(root, resolved)) return OkStatus();
  }
  return ErrStatus(path +
                   ": resolves to a file outside the folders this server may read (a symbolic link out of "
                   "them?); not opened");
}

Status CheckFolderMember(const std::string& path) {
  RETURN_IF_ERROR(CheckImportPath(path));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return OkStatus();
  if (S_ISREG(st.st_mode)) return OkStatus();
  const char* what = S_ISFIFO(st.st_mode)   ? "a named pipe (FIFO)"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISDIR(st.st_mode)  ? "a folder"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "of another kind";
  return ErrStatus(path + ": is " + std::string(what) +
                   ", not a regular file; a profiler folder's files are read only when regular (docs/importers.md)");
}

bool ImportsConfined() { return !Roots().empty(); }

}  // namespace aiprof
