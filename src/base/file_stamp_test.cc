#include "src/base/file_stamp.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace aiprof {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(FileStampTest, FolderFoldsInItsFiles) {
  char tmpl[] = "/tmp/aiprof-stamp-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  fs::create_directory(dir / "sub");
  Write(dir / "a.json", "12345");
  Write(dir / "sub" / "b.json", "123");
  fs::create_symlink(dir / "a.json", dir / "link.json");  // not followed: not counted twice

  const std::optional<FileStamp> before = StampOf(dir);
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->files, 2);
  EXPECT_EQ(before->size, 8);
  EXPECT_EQ(StampOf(dir), before);

  // Rewritten in place, same size, a later mtime; the folder's own entries
  // and mtime are unchanged.
  const auto folder_time = fs::last_write_time(dir);
  Write(dir / "sub" / "b.json", "321");
  fs::last_write_time(dir / "sub" / "b.json", folder_time + std::chrono::seconds(5));
  fs::last_write_time(dir, folder_time);
  const std::optional<FileStamp> after = StampOf(dir);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->size, 8);
  EXPECT_GT(after->mtime_ns, before->mtime_ns);
  EXPECT_NE(after, before);

  const std::optional<FileStamp> file = StampOf(dir / "a.json");
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->files, 1);
  EXPECT_EQ(file->size, 5);
  EXPECT_FALSE(StampOf(dir / "missing").has_value());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aiprof
