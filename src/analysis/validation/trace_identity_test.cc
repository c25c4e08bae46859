#include "src/analysis/validation/trace_identity.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "test/util/temp_file.h"

namespace aiprof {
namespace {

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(TraceIdentityTest, ContentNotPathAndOnlyRegularFiles) {
  testing::TempDir dir;
  Write(dir.Path("a.json"), "{\"traceEvents\":[]}");
  Write(dir.Path("copy.json"), "{\"traceEvents\":[]}");
  Write(dir.Path("other.json"), "{\"traceEvents\":[ ]}");
  StatusOr<std::string> a = InputIdentity(dir.Path("a.json"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, *InputIdentity(dir.Path("copy.json")));  // a copy is the same input
  EXPECT_NE(*a, *InputIdentity(dir.Path("other.json")));
  EXPECT_EQ(a->substr(a->find('-') + 1), "12");  // the size, hex: 18 bytes

  // A FIFO with no writer would block an open for reading forever (MCP's
  // load_trace, which identifies what it loads, hung on one): refused unread.
  const std::string fifo = dir.Path("p.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  StatusOr<std::string> f = InputIdentity(fifo);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("not a regular file"), std::string::npos) << f.status().message();
  EXPECT_FALSE(InputIdentity(dir.Path("missing.json")).ok());
}

}  // namespace
}  // namespace aiprof
