// Command-line parsing shared by every command (src/cli/flags.h).
#include "src/cli/flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "src/cli/command.h"
#include "src/cli/duration_flag.h"
#include "src/render/renderers.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

// Parses `args` against every registered command, as RunCli does, without
// running anything; returns the parsed subcommand.
CLI::App* ParseCommandLine(CLI::App* app, std::vector<std::unique_ptr<Command>>* commands, std::vector<std::string> args,
                bool one_value_per_flag) {
  *commands = AllCommands();
  for (auto& c : *commands) c->Register(app);
  if (one_value_per_flag) OneValuePerFlag(app);
  std::reverse(args.begin(), args.end());
  app->parse(args);
  for (CLI::App* sub : app->get_subcommands()) return sub;
  return nullptr;
}

// `--rules FILE` followed by two SDK files: one rules file, two inputs (README
// writes repeatable flags as `[--rules FILE]...`). Without OneValuePerFlag,
// CLI11 read the first input as a second rules file.
TEST(OneValuePerFlagTest, ARepeatableFlagTakesOneValueAndLeavesTheInputs) {
  for (bool fixed : {false, true}) {
    CLI::App app;
    std::vector<std::unique_ptr<Command>> commands;
    CLI::App* sub = ParseCommandLine(&app, &commands, {"diagnose", "--rules", "r.yaml", "a.sdk", "b.sdk"}, fixed);
    ASSERT_NE(sub, nullptr);
    EXPECT_EQ(sub->get_name(), "diagnose");
    const std::vector<std::string> rules = sub->get_option("--rules")->results();
    const std::vector<std::string> inputs = sub->get_option("input")->results();
    if (fixed) {
      EXPECT_EQ(rules, std::vector<std::string>({"r.yaml"}));
      EXPECT_EQ(inputs, std::vector<std::string>({"a.sdk", "b.sdk"}));
    } else {
      EXPECT_EQ(rules, std::vector<std::string>({"r.yaml", "a.sdk"})) << "CLI11's default changed: drop this branch";
    }
  }
}

// Repeated, the flag still gathers every value; `--flag=value` as well.
TEST(OneValuePerFlagTest, RepeatedFlagsGatherEveryValue) {
  CLI::App app;
  std::vector<std::unique_ptr<Command>> commands;
  CLI::App* sub = ParseCommandLine(&app, &commands,
                        {"whatif", "--scenario", "remove aten::mm", "--scenario=scale aten::add 0.5", "t.json"}, true);
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->get_option("--scenario")->results(),
            std::vector<std::string>({"remove aten::mm", "scale aten::add 0.5"}));
  EXPECT_EQ(sub->get_option("input")->results(), std::vector<std::string>({"t.json"}));
}

// Every repeatable flag of every command is covered, the nested ones
// (cluster map/reduce/analyze) included.
TEST(OneValuePerFlagTest, NoCommandKeepsAGreedyFlag) {
  CLI::App app;
  std::vector<std::unique_ptr<Command>> commands = AllCommands();
  for (auto& c : commands) c->Register(&app);
  OneValuePerFlag(&app);
  std::vector<CLI::App*> todo = {&app};
  size_t repeatable = 0;
  while (!todo.empty()) {
    CLI::App* a = todo.back();
    todo.pop_back();
    for (CLI::Option* o : a->get_options()) {
      if (!o->nonpositional()) continue;
      EXPECT_FALSE(o->get_allow_extra_args()) << a->get_name() << " " << o->get_name();
      if (o->get_items_expected_max() > 1) ++repeatable;
    }
    for (CLI::App* s : a->get_subcommands([](CLI::App*) { return true; })) todo.push_back(s);
  }
  EXPECT_GT(repeatable, 5u);  // --rules, --scenario, --capture-trace, --alert, --allow, ...
}

// An allocation that fails ends the process with one line naming the
// command line and exit 1; it aborted with "terminate called after throwing
// std::bad_alloc" (exit 134) naming nothing (trial_input finding 11, where a
// 6 MB gzip of 40 M instants met `prlimit --as=900M`). A request no
// allocator can meet fails the same way as an exhausted limit; ASan's
// allocator reports such a request itself, so there the handler is called.
// A duration past int64's nanoseconds was converted anyway, which is
// undefined: "1000000000h" read as INT64_MIN on x86 (rejected as negative
// by luck), and clang's UBSan stopped the program on it.
TEST(DurationFlagTest, PastInt64NanosecondsIsMalformed) {
  EXPECT_EQ(ParseDuration("1000000000h"), -1);
  EXPECT_EQ(ParseDuration("1e300"), -1);
  EXPECT_EQ(ParseDuration("2562047h"), int64_t{2562047} * 3'600'000'000'000);  // 292 years fit
  EXPECT_EQ(ParseDuration("1.5"), 1'500'000'000);
  EXPECT_EQ(ParseDuration("500ms"), 500'000'000);
  EXPECT_EQ(ParseDuration("-1s"), -1);
  EXPECT_EQ(ParseDuration("nan"), -1);
}

// g++ says ASan with __SANITIZE_ADDRESS__, clang 14 with __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define AIPROF_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AIPROF_TEST_UNDER_ASAN 1
#endif
#endif
TEST(OutOfMemoryTest, AFailedAllocationNamesTheCommandAndExits1) {
  std::string a0 = "aiprof", a1 = "summary", a2 = "big\x1b[31m.json.gz";
  char* argv[] = {a0.data(), a1.data(), a2.data()};
  EXPECT_EXIT(
      {
        InstallOutOfMemoryHandler(3, argv);
#if defined(AIPROF_TEST_UNDER_ASAN)
        std::get_new_handler()();
#else
        volatile size_t huge = SIZE_MAX / 4;
        char* p = new char[huge];
        p[0] = 1;
#endif
      },
      ::testing::ExitedWithCode(1),
      "aiprof: error: out of memory .aiprof summary big.x1b.31m.json.gz.: the input needs more memory");
}

// Every command whose output is one render::Document takes every format the
// document renderers write such a document in (OutputFlags::AddDocument over
// render::DocumentFormats), and keeps every format it took before (its own:
// pdf, suggest's suggestions-json). Before, each command kept a list of its
// own: analyze took text and json only ("--format md: md not in
// {text,json}"), summary no md or html, diagnose no yaml or csv.
TEST(OutputFlagsTest, DocumentCommandsTakeTheDocumentFormats) {
  struct Case {
    std::vector<std::string> args;  // the command line without --format
    std::vector<std::string> formats;
  };
  const std::vector<Case> cases = {
      {{"analyze", "t.json"}, {"text", "md", "html", "json", "yaml", "csv"}},
      {{"summary", "t.json"}, {"text", "md", "html", "json", "csv"}},
      {{"diagnose", "t.json"}, {"text", "md", "html", "json", "yaml", "csv", "pdf"}},
      {{"suggest", "t.json"}, {"text", "md", "html", "json", "yaml", "csv", "pdf", "suggestions-json"}},
      {{"diff", "a.json", "b.json"}, {"text", "md", "html", "json", "yaml", "csv"}},
      {{"whatif", "t.json", "--scenario", "remove x"}, {"text", "md", "html", "json", "csv"}},
      {{"node-bottleneck", "t.json"}, {"text", "md", "html", "json", "csv"}},
      {{"validate", "--before", "a.json", "--after", "b.json"}, {"text", "md", "html", "json", "csv", "pdf"}},
  };
  for (const Case& c : cases) {
    for (const std::string& format : c.formats) {
      CLI::App app;
      std::vector<std::unique_ptr<Command>> commands;
      std::vector<std::string> args = c.args;
      args.push_back("--format");
      args.push_back(format);
      CLI::App* sub = nullptr;
      EXPECT_NO_THROW(sub = ParseCommandLine(&app, &commands, args, true)) << c.args[0] << " --format " << format;
      if (sub) {
        EXPECT_EQ(sub->get_option("--format")->as<std::string>(), format);
      }
    }
  }
}

// WriteDocument writes what the document renderer makes of the document, to
// -o (atomically) or standard output.
TEST(OutputFlagsTest, WriteDocumentWritesTheRenderersText) {
  testing::TempDir dir;
  render::Document doc;
  doc.key = "example";
  doc.title = "An example";
  doc.AddSection("figures", "Figures");
  for (const std::string format : {"json", "md", "yaml", "text"}) {
    OutputFlags out;
    out.output = dir.path() + "/doc." + format;
    ASSERT_TRUE(out.WriteDocument(doc, format).ok()) << format;
    StatusOr<std::string> want = render::RenderDocument(doc, format);
    ASSERT_TRUE(want.ok());
    std::ifstream in(out.output, std::ios::binary);
    const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(got, *want) << format;
  }
  OutputFlags out;
  out.output = dir.path() + "/doc.csv";
  EXPECT_FALSE(out.WriteDocument(doc, "csv").ok()) << "a document without a table has no CSV";
}

}  // namespace
}  // namespace aiprof
