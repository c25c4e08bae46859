#include "src/base/module_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace aiprof {

namespace {

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string ProgramPath() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n <= 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

// Why `path` is not a usable module, or empty when it is (with *out set).
std::string TryLoad(const ModuleSpec& spec, const std::string& path, LoadedModule* out) {
  if (access(path.c_str(), F_OK) != 0) return std::strerror(errno);
  void* handle = dlopen(path.c_str(), RTLD_NOW | (spec.global_symbols ? RTLD_GLOBAL : RTLD_LOCAL));
  if (handle == nullptr) {
    // dlerror's text starts with the path, which the caller's line names.
    std::string why = dlerror() ?: "dlopen failed";
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    return why;
  }
  using VersionFn = const char* (*)();
  auto version = reinterpret_cast<VersionFn>(dlsym(handle, spec.version_symbol.c_str()));
  void* entry = dlsym(handle, spec.entry_symbol.c_str());
  if (version == nullptr || entry == nullptr) {
    // Not ours: nothing of it is used, so it may go (unless it was already
    // loaded under another name, when this only drops a reference).
    dlclose(handle);
    return "not an aiprof module of this kind (no " + spec.entry_symbol + " or " + spec.version_symbol + ")";
  }
  const std::string built_for = version() != nullptr ? version() : "";
  if (built_for != AIPROF_VERSION) {
    // Left loaded: its static constructors have run, and unloading code of a
    // foreign build gains nothing.
    return "built for aiprof " + built_for + ", this is " + AIPROF_VERSION;
  }
  *out = LoadedModule{handle, entry, path};
  return "";
}

}  // namespace

std::string ObjectDir(const void* address) {
  Dl_info info{};
  link_map* map = nullptr;
  if (address == nullptr || dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0) {
    return DirName(ProgramPath());
  }
  // The program's own link map has an empty name (dladdr would give argv[0],
  // which may be relative or a name found on PATH).
  if (map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0' || info.dli_fname == nullptr) {
    return DirName(ProgramPath());
  }
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) != nullptr) return DirName(resolved);
  return DirName(info.dli_fname);
}

std::vector<std::string> ModuleCandidates(const ModuleSpec& spec) {
  if (!spec.env_var.empty()) {
    const char* env = std::getenv(spec.env_var.c_str());
    if (env != nullptr && *env != '\0') {
      // dlopen searches the library path for a name without a slash, where
      // access() looks in the working folder: both must see the same file.
      const std::string path = env;
      return {path.find('/') == std::string::npos ? "./" + path : path};
    }
  }
  const std::string dir = ObjectDir(spec.anchor);
  if (dir.empty()) return {};
  std::vector<std::string> paths = {dir + "/" + spec.file_name};
  if (!spec.from_bin.empty() && spec.from_bin != spec.file_name) paths.push_back(dir + "/" + spec.from_bin);
  return paths;
}

StatusOr<LoadedModule> LoadModule(const ModuleSpec& spec) {
  const std::vector<std::string> paths = ModuleCandidates(spec);
  std::string tried;
  for (const std::string& path : paths) {
    LoadedModule module;
    const std::string why = TryLoad(spec, path, &module);
    if (why.empty()) return module;
    tried += "\n  " + path + ": " + why;
  }
  if (paths.empty()) tried = "\n  (no path: the folder of the program is unknown)";
  std::string from_env;
  if (!spec.env_var.empty() && std::getenv(spec.env_var.c_str()) != nullptr &&
      *std::getenv(spec.env_var.c_str()) != '\0') {
    from_env = " (from $" + spec.env_var + ")";
  }
  return ErrStatus(spec.file_name + " could not be loaded" + from_env + "; tried:" + tried);
}

}  // namespace aiprof
