#include "src/serve/run_index.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "src/serve/serve.h"

namespace aiprof {
namespace {

std::string TempPath(const std::string& name) {
  const std::string dir = std::filesystem::temp_directory_path() / ("aiprof_serve_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::filesystem::remove(path);
  return path;
}

TEST(RunIndexTest, UpsertQueuesNewAndChangedFilesOnly) {
  auto index = RunIndex::Open(TempPath("upsert.db"));
  ASSERT_TRUE(index.ok()) << index.status().message();
  RunIndex& ix = **index;
  auto a = ix.Upsert("a.json", 10, 100);
  ASSERT_TRUE(a.ok());
  auto claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  RunRow row = **claimed;
  EXPECT_EQ(row.id, *a);
  EXPECT_EQ(row.state, RunState::kConverting);
  row.cache = "1.aiprof";
  row.steps = 3;
  ASSERT_TRUE(ix.MarkReady(row).ok());
  // Same size and time: the same run, still ready.
  EXPECT_EQ(*ix.Upsert("a.json", 10, 100), *a);
  EXPECT_EQ((*ix.Get(*a))->state, RunState::kReady);
  EXPECT_FALSE(ix.ClaimNext()->has_value());
  // Changed: queued again under the same id.
  EXPECT_EQ(*ix.Upsert("a.json", 11, 100), *a);
  EXPECT_EQ((*ix.Get(*a))->state, RunState::kQueued);
  ASSERT_TRUE(ix.ClaimNext()->has_value());
  ASSERT_TRUE(ix.MarkFailed(*a, "bad <json>").ok());
  EXPECT_EQ((*ix.Get(*a))->error, "bad <json>");
}

// A file that changes while it is converted (truncated, then written whole
// again) is queued again by the scan that sees it; the conversion of the
// old bytes then ends, failed or not. Its result used to overwrite the new
// queue entry: the run stayed failed although the file was whole, until the
// file changed once more.
TEST(RunIndexTest, ARunQueuedAgainWhileConvertingKeepsItsNewQueueEntry) {
  auto index = RunIndex::Open(TempPath("requeue.db"));
  ASSERT_TRUE(index.ok()) << index.status().message();
  RunIndex& ix = **index;
  auto a = ix.Upsert("a.json", 10, 100);
  ASSERT_TRUE(a.ok());
  auto claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  EXPECT_EQ(*ix.Upsert("a.json", 4, 200), *a);  // truncated under the converter
  ASSERT_TRUE(ix.MarkFailed(*a, "a.json: truncated JSON").ok());
  EXPECT_EQ((*ix.Get(*a))->state, RunState::kQueued);
  EXPECT_EQ((*ix.Get(*a))->error, "");
  claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  RunRow row = **claimed;
  EXPECT_EQ(*ix.Upsert("a.json", 10, 300), *a);  // written whole again
  // Not claimed a second time while its converter has it (two converters
  // of one run wrote the same partial cache file at once).
  claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed->has_value());
  row.cache = "1.aiprof";
  ASSERT_TRUE(ix.MarkReady(row).ok());
  EXPECT_EQ((*ix.Get(*a))->state, RunState::kQueued);
  EXPECT_EQ((*ix.Get(*a))->cache, "");
  claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  ASSERT_TRUE(ix.MarkReady(**claimed).ok());
  EXPECT_EQ((*ix.Get(*a))->state, RunState::kReady);
}

TEST(RunIndexTest, SearchIsCaseInsensitiveAndLiteral) {
  auto index = RunIndex::Open(TempPath("search.db"));
  ASSERT_TRUE(index.ok());
  RunIndex& ix = **index;
  ASSERT_TRUE(ix.Upsert("Team A/run_1.json", 1, 1).ok());
  ASSERT_TRUE(ix.Upsert("team b/100%.json", 1, 1).ok());
  ASSERT_TRUE(ix.Upsert("other.json", 1, 1).ok());
  EXPECT_EQ(ix.List("team a", 0)->size(), 1u);
  EXPECT_EQ(ix.List("TEAM", 0)->size(), 2u);
  EXPECT_EQ(ix.List("%", 0)->size(), 1u) << "'%' is a character, not a wildcard";
  EXPECT_EQ(ix.List("_1", 0)->size(), 1u);
  EXPECT_EQ(ix.List("", 0)->size(), 3u);
  EXPECT_EQ(ix.List("", 2)->size(), 2u);
}

// Two servers on one database: every queued run is claimed exactly once.
TEST(RunIndexTest, ConcurrentClaimsFromTwoConnectionsNeverOverlap) {
  const std::string path = TempPath("claims.db");
  auto first = RunIndex::Open(path);
  auto second = RunIndex::Open(path);
  ASSERT_TRUE(first.ok() && second.ok());
  constexpr int kRuns = 60;
  for (int i = 0; i < kRuns; ++i) ASSERT_TRUE((*first)->Upsert("r" + std::to_string(i), 1, 1).ok());
  std::mutex mu;
  std::multiset<int64_t> claimed;
  auto claim = [&](RunIndex* ix) {
    for (;;) {
      auto c = ix->ClaimNext();
      ASSERT_TRUE(c.ok()) << c.status().message();
      if (!c->has_value()) return;
      std::lock_guard<std::mutex> lock(mu);
      claimed.insert((*c)->id);
    }
  };
  std::thread t1(claim, first->get()), t2(claim, second->get()), t3(claim, first->get());
  t1.join();
  t2.join();
  t3.join();
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kRuns));
  EXPECT_EQ(std::set<int64_t>(claimed.begin(), claimed.end()).size(), static_cast<size_t>(kRuns));
}

// A server killed while it converts (SIGKILL: no handler runs) left its run
// 'converting' for the stale-claim hour. The claim now names its process;
// another server on the same machine sees that process gone (here a forked
// child that claimed a run through its own connection) and queues the run
// again at once. A live claimer keeps its run, and so does one this machine
// cannot see (another boot, pid namespace or host): it waits for the hour.
TEST(RunIndexTest, AClaimOfAKilledServerIsQueuedAgainAtOnce) {
  const std::string path = TempPath("killed.db");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the server that is killed while it converts a.json
    auto ix = RunIndex::Open(path);
    if (!ix.ok() || !(*ix)->Upsert("a.json", 1, 1).ok() || !(*ix)->Upsert("b.json", 1, 1).ok()) _exit(2);
    auto claimed = (*ix)->ClaimNext();
    if (!claimed.ok() || !claimed->has_value() || (*claimed)->path != "a.json") _exit(3);
    if (write(ready[1], "c", 1) != 1) _exit(4);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char b = 0;
  ASSERT_EQ(read(ready[0], &b, 1), 1);
  close(ready[0]);
  auto index = RunIndex::Open(path);
  ASSERT_TRUE(index.ok()) << index.status().message();
  RunIndex& ix = **index;
  auto claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  EXPECT_EQ((*claimed)->path, "b.json");
  claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed->has_value()) << "a live converter's run was taken from it";
  ASSERT_EQ(kill(child, SIGKILL), 0);
  // Not reaped yet: a zombie converts nothing either.
  for (int i = 0; i < 2000 && !claimed->has_value(); ++i) {
    claimed = ix.ClaimNext();
    ASSERT_TRUE(claimed.ok());
    if (!claimed->has_value()) usleep(1000);  // SIGKILL is delivered asynchronously
  }
  ASSERT_TRUE(claimed->has_value()) << "the killed converter's run waits for the stale-claim hour";
  EXPECT_EQ((*claimed)->path, "a.json");
  EXPECT_EQ((*claimed)->state, RunState::kConverting);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(ix.MarkReady(**claimed).ok());
  EXPECT_EQ((*ix.Get((*claimed)->id))->state, RunState::kReady);

  // Claims this machine cannot judge: another boot, another pid namespace,
  // a claim written over by a server that records no claimer, a claim
  // recorded by none (a server before claimed_by).
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::ifstream boot_in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  boot_in >> boot;
  struct stat ns;
  ASSERT_EQ(stat("/proc/self/ns/pid", &ns), 0);
  const std::string dead = std::to_string(child), ms = std::to_string(now_ms), our_ns = std::to_string(ns.st_ino);
  const std::vector<std::pair<std::string, std::string>> foreign = {
      {"c.json", "00000000-0000-0000-0000-000000000000:1:" + dead + ":1@" + ms},
      {"d.json", boot + ":1:" + dead + ":1@" + ms},
      {"e.json", boot + ":" + our_ns + ":" + dead + ":1@" + std::to_string(now_ms - 1)},
      {"f.json", ""},
  };
  for (const auto& [run, by] : foreign) {
    ASSERT_TRUE(ix.Upsert(run, 1, 1).ok());
    const std::string sql = "UPDATE runs SET state = 'converting', claimed_unix_ms = " + ms + ", claimed_by = '" + by +
                            "' WHERE path = '" + run + "'";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok());
  EXPECT_FALSE(claimed->has_value()) << (*claimed)->path;
}

// The runs list showed "Device utilisation 56.0%" with no base, read as the
// summary's 60.6% of the device span (audit2 item 10): the index keeps the
// base beside the share, also in an index made before it kept one.
TEST(RunIndexTest, DeviceUtilisationKeepsItsBase) {
  const std::string path = TempPath("basis.db");
  {
    // An index as an earlier server made it: no device_util_basis column.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const char* old_schema =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '2');"
        "CREATE TABLE runs(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, name TEXT NOT NULL, "
        "tag TEXT NOT NULL DEFAULT '', service TEXT NOT NULL DEFAULT '', size_bytes INTEGER NOT NULL, "
        "mtime_ns INTEGER NOT NULL, state TEXT NOT NULL, claimed_unix_ms INTEGER NOT NULL DEFAULT 0, "
        "claimed_by TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '', cache TEXT NOT NULL DEFAULT '', "
        "source_format TEXT NOT NULL DEFAULT '', steps INTEGER NOT NULL DEFAULT 0, "
        "step_p50_ns REAL NOT NULL DEFAULT 0, device_util REAL NOT NULL DEFAULT -1, "
        "top_finding TEXT NOT NULL DEFAULT '', top_share REAL NOT NULL DEFAULT 0, "
        "top_basis TEXT NOT NULL DEFAULT '', indexed_unix_ms INTEGER NOT NULL DEFAULT 0, "
        "convert_ms REAL NOT NULL DEFAULT 0);"
        "INSERT INTO runs(path, name, size_bytes, mtime_ns, state, device_util) "
        "VALUES ('old.json', 'old.json', 1, 1, 'ready', 0.5);";
    ASSERT_EQ(sqlite3_exec(db, old_schema, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  auto index = RunIndex::Open(path);
  ASSERT_TRUE(index.ok()) << index.status().message();
  RunIndex& ix = **index;
  auto runs = ix.List("", 10);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].device_util, 0.5);
  EXPECT_EQ((*runs)[0].device_util_basis, "") << "converted before the base was kept";
  auto a = ix.Upsert("a.json", 10, 100);
  ASSERT_TRUE(a.ok());
  auto claimed = ix.ClaimNext();
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  RunRow row = **claimed;
  row.device_util = 0.56;
  row.device_util_basis = "device busy time / the steady steps' wall time";
  ASSERT_TRUE(ix.MarkReady(row).ok());
  auto got = ix.Get(*a);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((**got).device_util, 0.56);
  EXPECT_EQ((**got).device_util_basis, "device busy time / the steady steps' wall time");
}

TEST(ServeTokensTest, RolesLinesAndErrors) {
  const std::string path = TempPath("tokens");
  std::ofstream(path) << "# team\n\nread  0123456789abcdef\r\nupload fedcba9876543210xyz\n";
  auto tokens = ReadTokenFile(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status().message();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].role, TokenRole::kRead);
  EXPECT_EQ((*tokens)[0].token, "0123456789abcdef");
  EXPECT_EQ((*tokens)[1].role, TokenRole::kUpload);
  std::ofstream(path) << "read 0123456789abcdef\nadmin 0123456789abcdef\n";
  auto bad = ReadTokenFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path + ":2: role \"admin\""), std::string::npos) << bad.status().message();
  std::ofstream(path) << "read short\n";
  EXPECT_FALSE(ReadTokenFile(path).ok());
  std::ofstream(path) << "# nothing\n";
  EXPECT_FALSE(ReadTokenFile(path).ok());
  EXPECT_FALSE(ReadTokenFile(path + ".missing").ok());
}

TEST(ServeTokensTest, ATokenWithTwoRolesIsRefused) {
  const std::string path = TempPath("tokens2");
  std::ofstream(path) << "read 0123456789abcdef\nupload other0123456789abc\nupload 0123456789abcdef\n";
  auto bad = ReadTokenFile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path + ":3: this token is also on line 1 with another role"), std::string::npos)
      << bad.status().message();
  std::ofstream(path) << "read 0123456789abcdef\nread 0123456789abcdef\n";  // the same role twice: harmless
  EXPECT_TRUE(ReadTokenFile(path).ok());
}

}  // namespace
}  // namespace aiprof
