#include "src/serve/push.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "src/serve/run_document.h"

namespace aiprof {
namespace {

std::string TokenFile(const std::string& name, const std::string& text) {
  const std::string dir = std::filesystem::temp_directory_path() / ("aiprof_push_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(PushTest, TokenFileTakesABareTokenOrTheUploadLineAndSkipsReadLines) {
  auto bare = ReadPushToken(TokenFile("bare", "# mine\n\n  aaaaaaaaaaaaaaaaaaaa  \r\n"));
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(*bare, "aaaaaaaaaaaaaaaaaaaa");
  auto serve_format = ReadPushToken(TokenFile("serve", "read rrrrrrrrrrrrrrrrrrrr\nupload uuuuuuuuuuuuuuuuuuuu\n"));
  ASSERT_TRUE(serve_format.ok()) << serve_format.status().message();
  EXPECT_EQ(*serve_format, "uuuuuuuuuuuuuuuuuuuu");
}

TEST(PushTest, TokenFileErrorsNameTheFileAndLine) {
  const std::string only_read = TokenFile("read", "read rrrrrrrrrrrrrrrrrrrr\n");
  auto r = ReadPushToken(only_read);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(only_read + ": no token"), std::string::npos) << r.status().message();
  const std::string role = TokenFile("role", "\nadmin aaaaaaaaaaaaaaaaaaaa\n");
  r = ReadPushToken(role);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(role + ":2: expected a token"), std::string::npos) << r.status().message();
  // Too short, and a header-breaking character: refused, never sent.
  EXPECT_FALSE(ReadPushToken(TokenFile("short", "short\n")).ok());
  EXPECT_FALSE(ReadPushToken(TokenFile("crlf", "aaaaaaaaaaaaaaaaaaaa\rX-Injected: 1\n")).ok());
  EXPECT_FALSE(ReadPushToken(TokenFile("missing_dir/none", "")).ok());
}

TEST(PushTest, BadServerAddressesAreRefusedBeforeConnecting) {
  PushOptions o;
  o.file = TokenFile("trace.json", "{\"traceEvents\": []}");
  for (const char* server : {"https://h:1", "h:80", "http://", "http://h:0", "http://h:99999", "http://h:8a",
                             "http://h\r\nX: 1:80", "http://h:80/a b", "http://[::1"}) {
    o.server = server;
    auto r = PushRun(o);
    ASSERT_FALSE(r.ok()) << server;
    EXPECT_EQ(r.status().message().rfind(std::string("--server ") + server, 0), 0u) << r.status().message();
    EXPECT_TRUE(r.status().usage()) << server << ": a flag value that does not parse exits 2";
    EXPECT_TRUE(CheckPushServer(server).usage()) << server;
  }
  EXPECT_TRUE(CheckPushServer("http://127.0.0.1:8080/team").ok());
  EXPECT_TRUE(CheckPushServer("http://[::1]:8080").ok());
}

TEST(RunGroupsTest, ServicesByNameWithNoneLastAndDatesNewestFirst) {
  std::vector<RunRow> runs(4);
  runs[0].path = "b/x.json";                      // service b (its folder)
  runs[1].path = "uploads/1-up.json";             // an upload without a service: none
  runs[2].path = "uploads/2-up.json";
  runs[2].service = "a";                          // given at upload
  runs[3].path = "top.json";                      // top of the logdir: none
  runs[0].mtime_ns = int64_t{1600000000} * 1'000'000'000;  // 2020-09-13 UTC
  runs[3].mtime_ns = int64_t{1700000000} * 1'000'000'000;  // 2023-11-14 UTC
  std::vector<RunGroup> g = GroupRuns(runs, RunGrouping::kService);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].key, "a");
  EXPECT_EQ(g[1].key, "b");
  EXPECT_EQ(g[2].key, "");
  EXPECT_EQ(g[2].runs.size(), 2u);
  EXPECT_EQ(g[2].runs[0], &runs[1]);  // list order kept
  g = GroupRuns(runs, RunGrouping::kDate);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].key, "2023-11-14");
  EXPECT_EQ(g[1].key, "2020-09-13");
  EXPECT_EQ(g[2].key, "1970-01-01");
  EXPECT_FALSE(ParseRunGrouping("owner").has_value());
}

}  // namespace
}  // namespace aiprof
