#include "src/base/huge_pages.h"
#include "src/cli/command.h"

int main(int argc, char** argv) {
  aiprof::MaybeRestartWithHugePages(argc, argv);
  return aiprof::RunCli(argc, argv);
}
