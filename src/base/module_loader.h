// Loads one of aiprof's own shared modules (aiprof_mpi.so, aiprof_graphviz.so)
// with dlopen, so that the program does not link a large library that only
// one command needs: each library linked in costs every start of aiprof
// (OpenMPI's about 4 ms, Graphviz's about 2 ms; the headers of
// src/cluster/mpi/mpi_transport.h and src/view/topology/topology_render.h).
//
// A module is looked up, in order:
//   1. $<env_var> when set and not empty: that path only (an override: a
//      build tree or an install prefix with a module elsewhere; a bare name
//      is a file in the working folder);
//   2. `file_name` beside the object that holds `anchor`, a function of the
//      caller's own: the program (its /proc/self/exe, wherever it was
//      started from) or a shared object such as the Python extension;
//   3. `from_bin` relative to that object's folder (the install layout:
//      bin/aiprof finds ../lib/aiprof/<file_name>).
// The module is built with the program (same compiler, same libstdc++); it
// must export `version_symbol`, a `const char* ()` returning the
// AIPROF_VERSION it was built for, and `entry_symbol`; any other version is
// refused. A loaded module stays loaded for the life of the process.
#ifndef AIPROF_SRC_BASE_MODULE_LOADER_H_
#define AIPROF_SRC_BASE_MODULE_LOADER_H_

#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

struct ModuleSpec {
  std::string file_name;  // "aiprof_graphviz.so"
  std::string from_bin;   // the install path relative to the program's folder
  std::string env_var;    // "AIPROF_GRAPHVIZ_MODULE"
  std::string version_symbol;
  std::string entry_symbol;
  // RTLD_GLOBAL: the module's own dependencies may dlopen components that
  // resolve its symbols in the global scope (OpenMPI does).
  bool global_symbols = false;
  // The address of a function in the calling object (e.g. the caller's own
  // function): the module is looked up beside that object.
  const void* anchor = nullptr;
};

struct LoadedModule {
  void* handle = nullptr;  // from dlopen, never closed
  void* entry = nullptr;   // dlsym(handle, entry_symbol)
  std::string path;
};

// Loads the module. The error reads "<file_name> could not be loaded
// (tried:\n  <path>: <why>...)", one line per path in search order.
StatusOr<LoadedModule> LoadModule(const ModuleSpec& spec);

// The paths LoadModule tries, in order. Visible for testing.
std::vector<std::string> ModuleCandidates(const ModuleSpec& spec);

// The folder of the object (program or shared object) that holds `address`;
// the program's is that of /proc/self/exe. Empty when unknown.
std::string ObjectDir(const void* address);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_MODULE_LOADER_H_
