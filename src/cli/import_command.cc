#include <CLI/CLI.hpp>
#include <cstdio>

#include "src/cli/capture_trace_flag.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/model/native_file.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

class ImportCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("import", "Convert any supported input to a native .aiprof file");
    in_.Add(sub, "Trace file or folder to import");
    AddOutputPathFlag(sub, &output_, "The .aiprof file to write")->required();
    captures_.Add(sub);
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, captures_.Import(in_));
    RETURN_IF_ERROR(WriteNativeFile(*trace, output_));
    std::fprintf(stderr, "aiprof: wrote %s (%zu slices, %zu tracks, %llu diagnostics)\n",
                 EscapeControls(output_, false).c_str(), trace->slices.size(), trace->tracks.size(),
                 static_cast<unsigned long long>(trace->diagnostics.Total()));
    return OkStatus();
  }

 private:
  InputFlags in_;
  CaptureTraceFlag captures_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> NewImportCommand() { return std::make_unique<ImportCommand>(); }

}  // namespace aiprof
