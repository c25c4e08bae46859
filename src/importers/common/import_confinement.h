// Confinement of what the importers may open. Front ends that import on
// behalf of someone else (`aiprof mcp --allow DIR`, `aiprof serve --logdir
// DIR`) check the path they are given, but a folder format then opens its
// members, the files it names, and whatever symbolic links among them point
// to: a link inside an allowed folder to a trace outside it would be read.
// With roots set, every file an importer opens (ByteSource::Open, the CSV
// tables, the Nsight Systems database, the SDK's event files) must resolve,
// links followed, to a path inside one of them; otherwise the import fails
// naming the file. No roots (the default, the CLI's own commands): nothing
// is confined.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_IMPORT_CONFINEMENT_H_
#define AIPROF_SRC_IMPORTERS_COMMON_IMPORT_CONFINEMENT_H_

#include <string>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

// Sets the roots (resolved here; a root that does not resolve is an error).
// Call once, before any import starts; process-wide.
Status ConfineImportsTo(const std::vector<std::string>& roots);

// Ok when nothing is confined, when `path` resolves inside a root, or when
// it does not resolve (the open that follows names the missing file).
Status CheckImportPath(const std::string& path);

// A file a folder format opens by its name (kernel_details.csv,
// communication.json, ...) must be a regular file, links followed, and pass
// CheckImportPath: a FIFO there blocked the import forever and a link to
// /dev/zero was read until memory ran out (D14 of the input trial). Ok
// when `path` does not exist (the open that follows names it); otherwise an
// error naming the file and what it is.
Status CheckFolderMember(const std::string& path);

// True when roots are set (a front end importing for someone else).
bool ImportsConfined();

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_IMPORT_CONFINEMENT_H_
