// Multi-rank folders on hand-made Kineto traces (labelled: each written here
// for one case), and the folder errors.
#include "src/importers/common/folder_importer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "src/importers/common/import_confinement.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/sdk/sdk_processes.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using testing::TempDir;

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Kineto(int rank, bool with_rank, const std::string& kernel) {
  std::string info = with_rank ? R"("distributedInfo": {"rank": )" + std::to_string(rank) + R"(, "world_size": 2},)" : "";
  return "{" + info + R"("traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5, "args": {"correlation": 9}},
  {"ph": "X", "cat": "kernel", "name": ")" + kernel + R"(", "pid": 0, "tid": 7, "ts": 20, "dur": 30, "args": {"correlation": 9}}
]})";
}

TEST(FolderImporterTest, KinetoRankFilesMergeWithRanks) {
  TempDir dir;
  dir.Write("rank1.pt.trace.json", Kineto(1, false, "gemm_b"));
  dir.Write("rank0.pt.trace.json", Kineto(0, false, "gemm_a"));
  dir.Write("README.txt", "not a trace");
  auto r = ImportTrace(dir.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("ranks"), "0,1");
  EXPECT_EQ(t.slices.size(), 6u);
  for (size_t i = 0; i < t.slices.size(); ++i) {
    int32_t rank = t.tracks.rank[t.slices.track[i]];
    std::string_view name = t.Str(t.slices.name[i]);
    if (name.substr(0, 4) == "gemm") {
      EXPECT_EQ(name, rank == 0 ? "gemm_a" : "gemm_b");
    }
    if (i > 0 && t.slices.track[i] == t.slices.track[i - 1]) {
      EXPECT_LE(t.slices.ts_ns[i - 1], t.slices.ts_ns[i]) << "merged slices stay sorted per track";
    }
  }
  ASSERT_EQ(t.flows.size(), 2u);
  for (size_t i = 0; i < t.flows.size(); ++i) {
    EXPECT_EQ(t.tracks.rank[t.slices.track[t.flows.from_slice[i]]], t.tracks.rank[t.slices.track[t.flows.to_slice[i]]]);
    EXPECT_EQ(t.slices.kind[t.flows.to_slice[i]], EventKind::kKernel);
  }
  ASSERT_EQ(t.steps.size(), 2u);
  std::set<int32_t> step_ranks = {t.steps.rank[0], t.steps.rank[1]};
  EXPECT_EQ(step_ranks, (std::set<int32_t>{0, 1}));
}

TEST(FolderImporterTest, MixedRanksAreAnError) {
  TempDir dir;
  dir.Write("a.json", Kineto(0, true, "k"));
  dir.Write("b.json", Kineto(0, true, "k"));
  auto r = ImportTrace(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("mixed ranks"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("b.json"), std::string::npos);
}

TEST(FolderImporterTest, RanklessFilesAreAnError) {
  TempDir dir;
  dir.Write("a.json", Kineto(0, false, "k"));
  dir.Write("b.json", Kineto(0, false, "k"));
  auto r = ImportTrace(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a.json: cannot tell this input's rank"), std::string::npos)
      << r.status().message();
}

TEST(FolderImporterTest, NothingRecognizable) {
  TempDir dir;
  dir.Write("notes.txt", "hello");
  auto r = ImportTrace(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(dir.path() + ": nothing recognizable"), std::string::npos)
      << r.status().message();
}

TEST(FolderImporterTest, BadUnitFailsNamingItsFile) {
  TempDir dir;
  dir.Write("rank0.json", Kineto(0, false, "k"));
  dir.Write("rank1.json", R"({"traceEvents": [{"ph": "X", "ts": 1)");
  auto r = ImportTrace(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rank1.json"), std::string::npos) << r.status().message();
}

// A front end that imports for others (mcp --allow, serve's logdir) confines
// the importers to its folders: a link inside the allowed folder to a trace
// outside it fails the import naming the link (found by review: the folder
// passed the front end's check and its member was read through the link).
// Links that stay inside pass; without roots nothing is confined.
TEST(FolderImporterTest, ConfinedImportsRefuseLinksOutOfTheirFolders) {
  TempDir allowed, outside;
  std::filesystem::create_directories(allowed.Path("run"));
  std::filesystem::create_directories(allowed.Path("elsewhere"));
  allowed.Write("run/rank0.pt.trace.json", Kineto(0, false, "gemm_a"));
  const std::string secret = outside.Write("rank1.pt.trace.json", Kineto(1, false, "SECRET_OUTSIDE"));
  std::filesystem::create_symlink(secret, allowed.path() + "/run/rank1.pt.trace.json");
  ASSERT_TRUE(ImportFolder(allowed.path() + "/run").ok()) << "not confined: the link is followed";
  ASSERT_TRUE(ConfineImportsTo({allowed.path()}).ok());
  auto r = ImportFolder(allowed.path() + "/run");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rank1.pt.trace.json"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("outside the folders"), std::string::npos) << r.status().message();
  // A link that stays inside the allowed folder is fine.
  std::filesystem::remove(allowed.path() + "/run/rank1.pt.trace.json");
  allowed.Write("elsewhere/rank1.pt.trace.json", Kineto(1, false, "gemm_b"));
  std::filesystem::create_symlink(allowed.path() + "/elsewhere/rank1.pt.trace.json",
                                  allowed.path() + "/run/rank1.pt.trace.json");
  EXPECT_TRUE(ImportFolder(allowed.path() + "/run").ok());
  ASSERT_TRUE(ConfineImportsTo({}).ok());
  EXPECT_FALSE(ConfineImportsTo({outside.path() + "/no/such/folder"}).ok());
}

TEST(FolderImporterTest, RankFromName) {
  EXPECT_EQ(RankFromName("/x/rank1_ascend_pt"), 1);
  EXPECT_EQ(RankFromName("/x/rank-12.Jul_15.pt.trace.json"), 12);
  EXPECT_EQ(RankFromName("/x/worker_rank_3.json"), 3);
  EXPECT_EQ(RankFromName("/x/rank3_ascend_pt/"), 3);
  EXPECT_EQ(RankFromName("/x/frank7.json"), kNoRank);
  EXPECT_EQ(RankFromName("/x/trace.json"), kNoRank);
  EXPECT_EQ(RankFromName("/x/rank99999999999999999999.json"), kNoRank) << "past int: no rank, no exception";
  EXPECT_EQ(RankFromName("/x/rank123456789.json"), 123456789);
}

// D12 of the input trial: a rank file of zeros (a crashed writer) in a
// multi-rank folder was skipped silently: its rank vanished with exit 0.
// Files named like traces that are not imported are counted now; other
// files (README.txt) are not.
TEST(FolderImporterTest, RankFilesThatAreNotTracesAreCounted) {
  TempDir dir;
  dir.Write("rank0.json", Kineto(0, false, "k"));
  dir.Write("rank1.json", std::string(100000, '\0'));
  dir.Write("README.txt", "not a trace");
  ASSERT_EQ(::mkfifo(dir.Path("rank2.json").c_str(), 0600), 0);  // never opened: it would block
  auto r = ImportTrace(dir.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("folder_member_skipped"));
  EXPECT_EQ(d.at("folder_member_skipped").count, 2u);
  EXPECT_NE(d.at("folder_member_skipped").first_where.find("rank1.json: not a recognised trace"), std::string::npos)
      << d.at("folder_member_skipped").first_where;
}

// A rank file that cannot be read is said with its reason, not as "not a
// recognised trace (by its first 4 KiB)" (input trial, 'in': a rank file
// the user may not read, EACCES, was reported that way; as root a gzip
// file cut after its magic bytes takes the same path).
TEST(FolderImporterTest, UnreadableRankFileIsSkippedWithItsReason) {
  TempDir dir;
  dir.Write("rank0.json", Kineto(0, false, "k"));
  dir.Write("rank1.json.gz", std::string("\x1f\x8b", 2));
  auto r = ImportTrace(dir.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("folder_member_skipped"));
  EXPECT_NE(d.at("folder_member_skipped").first_where.find("rank1.json.gz: gzip stream truncated at compressed byte 2"),
            std::string::npos)
      << d.at("folder_member_skipped").first_where;
}

// One run's per-process SDK files (AIPROF_OUTPUT=dir/ on a program that
// forks; test/data/sdk/fork_run: /tmp/pyt/c/app of the Python/SDK trial,
// parent 3979 and its child 3982) load as one trace, each process on its
// own tracks, no rank asked for. Was: "aiprof-3979.aiprof: cannot tell this
// input's rank".
TEST(FolderImporterTest, OneRunsSdkFilesMergeAsProcesses) {
  const std::string dir = std::string(AIPROF_TEST_DATA_DIR) + "/sdk/fork_run";
  auto r = ImportTrace(dir);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("source_format"), "multi_process(aiprof_sdk)");
  EXPECT_EQ(t.metadata.at("pids"), "3979,3982");
  EXPECT_EQ(t.metadata.at("process_count"), "2");
  std::set<int32_t> pids;
  bool child_span_in_child = false;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    const int32_t pid = t.tracks.pid[t.slices.track[i]];
    pids.insert(pid);
    if (t.Str(t.slices.name[i]) == "child") child_span_in_child = pid == 3982;
  }
  EXPECT_EQ(pids, (std::set<int32_t>{3979, 3982}));
  EXPECT_TRUE(child_span_in_child);
  EXPECT_EQ(t.steps.size(), 20u);  // the parent's iterations
}

// The parent of one run and the child of another (test/data/sdk/two_runs:
// the same program run twice, 0.3 s apart): another clock base, and no time
// in common.
TEST(FolderImporterTest, SdkFilesOfTwoRunsAreAnError) {
  auto r = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/sdk/two_runs");
  ASSERT_FALSE(r.ok());
  const std::string m(r.status().message());
  EXPECT_NE(m.find("not one run's SDK files: "), std::string::npos) << m;
  EXPECT_NE(m.find("aiprof-3992.aiprof started "), std::string::npos) << m;
  EXPECT_NE(m.find("another run"), std::string::npos) << m;
}

TEST(FolderImporterTest, OneSdkProcessTwiceIsAnError) {
  TempDir dir;
  const std::string file = ReadFileOrEmpty(std::string(AIPROF_TEST_DATA_DIR) + "/sdk/fork_run/aiprof-3979.aiprof");
  ASSERT_FALSE(file.empty());
  dir.Write("aiprof-3979.aiprof", file);
  dir.Write("copy.aiprof", file);
  auto r = ImportTrace(dir.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("are both process 3979"), std::string::npos) << r.status().message();
}

// A process that died leaves its spill file; an event file beside it is an
// earlier flush: the spill file is the unit (as aiprof trace reads them).
TEST(FolderImporterTest, AnSdkSpillFileSupersedesItsEventFile) {
  TempDir dir;
  dir.Write("aiprof-7.aiprof", std::string("AIPROFS\n") + std::string(64, '\0'));
  dir.Write("aiprof-7.aiprof.part", std::string("AIPROFP\n") + std::string(64, '\0'));
  dir.Write("aiprof-8.aiprof", std::string("AIPROFS\n") + std::string(64, '\0'));
  auto units = ListFolderUnits(dir.path());
  ASSERT_TRUE(units.ok()) << units.status().message();
  std::vector<std::string> names;
  for (const FolderUnit& u : *units) names.push_back(std::filesystem::path(u.path).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"aiprof-7.aiprof.part", "aiprof-8.aiprof"}));
}

// The same files named one by one (`aiprof summary traces/aiprof-*`):
// merged as their folder is, labelled by their paths.
TEST(FolderImporterTest, OneRunsSdkFilesGivenOneByOneMergeAsTheirFolder) {
  const std::string dir = std::string(AIPROF_TEST_DATA_DIR) + "/sdk/fork_run";
  const std::vector<std::string> paths{dir + "/aiprof-3979.aiprof", dir + "/aiprof-3982.aiprof"};
  auto files = ImportTraces(paths);
  ASSERT_TRUE(files.ok()) << files.status().message();
  auto folder = ImportTrace(dir);
  ASSERT_TRUE(folder.ok()) << folder.status().message();
  const Trace &a = **files, &b = **folder;
  for (const char* key : {"source_format", "pids", "process_count"}) EXPECT_EQ(a.metadata.at(key), b.metadata.at(key));
  EXPECT_EQ(a.metadata.at("source_path"), paths[0] + " " + paths[1]);
  ASSERT_EQ(a.slices.size(), b.slices.size());
  for (size_t i = 0; i < a.slices.size(); ++i) {
    EXPECT_EQ(a.slices.ts_ns[i], b.slices.ts_ns[i]);
    EXPECT_EQ(a.slices.dur_ns[i], b.slices.dur_ns[i]);
    EXPECT_EQ(a.Str(a.slices.name[i]), b.Str(b.slices.name[i]));
    EXPECT_EQ(a.tracks.pid[a.slices.track[i]], b.tracks.pid[b.slices.track[i]]);
  }
  EXPECT_EQ(a.steps.size(), b.steps.size());
  EXPECT_EQ(a.counters.size(), b.counters.size());
  EXPECT_EQ(a.instants.size(), b.instants.size());
}

// Several inputs are SDK files only, each named when it is not one (before
// anything is imported), and files of two runs are an error as in a folder.
TEST(FolderImporterTest, SeveralInputsThatAreNotOneRunsSdkFilesAreAnError) {
  const std::string data = AIPROF_TEST_DATA_DIR;
  const std::string sdk = data + "/sdk/fork_run/aiprof-3979.aiprof";
  for (const std::string& other :
       {data + "/convnet_bs8_channels_last.kineto.json", data + "/sdk/fork_run", data + "/sdk/missing.aiprof"}) {
    auto r = ImportTraces({sdk, other});
    ASSERT_FALSE(r.ok()) << other;
    const std::string m(r.status().message());
    EXPECT_EQ(m.rfind(other + ": ", 0), 0u) << m;
    EXPECT_NE(m.find("several inputs on one command line are one run's SDK files"), std::string::npos) << m;
  }
  auto two = ImportTraces({data + "/sdk/two_runs/aiprof-3979.aiprof", data + "/sdk/two_runs/aiprof-3992.aiprof"});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("aiprof-3992.aiprof started "), std::string::npos) << two.status().message();
  auto twice = ImportTraces({sdk, sdk});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("are both process 3979"), std::string::npos) << twice.status().message();
}

// Given as files, too, a process's spill file stands in for its event file.
TEST(FolderImporterTest, AnSdkSpillFileGivenBesideItsEventFileSupersedesIt) {
  TempDir dir;
  const std::string data = AIPROF_TEST_DATA_DIR;
  dir.Write("aiprof-3979.aiprof", ReadFileOrEmpty(data + "/sdk/fork_run/aiprof-3979.aiprof"));
  // Not a readable event file: read, it would fail the import.
  dir.Write("aiprof-3982.aiprof", std::string("AIPROFS\n") + std::string(64, '\0'));
  dir.Write("aiprof-3982.aiprof.part", ReadFileOrEmpty(data + "/sdk/fork_run/aiprof-3982.aiprof"));
  auto r = ImportTraces({dir.path() + "/aiprof-3979.aiprof", dir.path() + "/aiprof-3982.aiprof",
                         dir.path() + "/aiprof-3982.aiprof.part"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->metadata.at("pids"), "3979,3982");
}

}  // namespace
}  // namespace aiprof
