// Test helper: a file in a fresh temporary folder, removed afterwards.
#ifndef AIPROF_TEST_UTIL_TEMP_FILE_H_
#define AIPROF_TEST_UTIL_TEMP_FILE_H_

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace aiprof::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "aiprof_test_XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Write(const std::string& name, std::string_view content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    return p;
  }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace aiprof::testing

#endif  // AIPROF_TEST_UTIL_TEMP_FILE_H_
