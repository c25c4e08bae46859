#include "src/cli/command.h"

int main(int argc, char** argv) { return aiprof::RunCli(argc, argv); }
