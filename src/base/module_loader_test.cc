// LoadModule on real shared objects: aiprof_test_module_good.so (built for
// this version) and aiprof_test_module_old.so (built for "0.0.0-old"), which
// test/CMakeLists.txt builds beside this test program
// (module_loader_test_module.c).
#include "src/base/module_loader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "test/util/temp_file.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

constexpr char kTestModuleEnv[] = "AIPROF_TEST_MODULE_LOADER_OVERRIDE";

int ModuleLoaderTestAnchor() { return 7; }

ModuleSpec TestModuleSpec(const std::string& file_name) {
  ModuleSpec spec;
  spec.file_name = file_name;
  spec.from_bin = "../lib/aiprof/" + file_name;
  spec.env_var = kTestModuleEnv;
  spec.version_symbol = "aiprof_test_module_version";
  spec.entry_symbol = "aiprof_test_module_answer";
  spec.anchor = reinterpret_cast<const void*>(&ModuleLoaderTestAnchor);
  return spec;
}

std::string ProgramDir() { return fs::canonical("/proc/self/exe").parent_path().string(); }

class ModuleLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv(kTestModuleEnv); }
  void TearDown() override { unsetenv(kTestModuleEnv); }
};

TEST_F(ModuleLoaderTest, FoundBesideTheProgram) {
  // The anchor is in this test program: its folder is /proc/self/exe's.
  EXPECT_EQ(ObjectDir(reinterpret_cast<const void*>(&ModuleLoaderTestAnchor)), ProgramDir());
  StatusOr<LoadedModule> module = LoadModule(TestModuleSpec("aiprof_test_module_good.so"));
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(module->path, ProgramDir() + "/aiprof_test_module_good.so");
  ASSERT_NE(module->entry, nullptr);
  EXPECT_EQ(reinterpret_cast<int (*)()>(module->entry)(), 42);
}

TEST_F(ModuleLoaderTest, MissingModuleNamesEveryPathAndWhy) {
  StatusOr<LoadedModule> module = LoadModule(TestModuleSpec("aiprof_no_such_module.so"));
  ASSERT_FALSE(module.ok());
  const std::string message = module.status().message();
  EXPECT_NE(message.find("aiprof_no_such_module.so could not be loaded"), std::string::npos) << message;
  EXPECT_NE(message.find("\n  " + ProgramDir() + "/aiprof_no_such_module.so: No such file or directory"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("\n  " + ProgramDir() + "/../lib/aiprof/aiprof_no_such_module.so: No such file or directory"),
            std::string::npos)
      << message;
}

TEST_F(ModuleLoaderTest, OtherVersionIsRefused) {
  StatusOr<LoadedModule> module = LoadModule(TestModuleSpec("aiprof_test_module_old.so"));
  ASSERT_FALSE(module.ok());
  const std::string message = module.status().message();
  EXPECT_NE(message.find(ProgramDir() + "/aiprof_test_module_old.so: built for aiprof 0.0.0-old, this is " +
                         std::string(AIPROF_VERSION)),
            std::string::npos)
      << message;
}

TEST_F(ModuleLoaderTest, FileThatIsNotAModuleIsRefused) {
  testing::TempDir dir;
  const std::string junk = dir.Write("junk.so", "not a module\n");
  setenv(kTestModuleEnv, junk.c_str(), 1);
  StatusOr<LoadedModule> module = LoadModule(TestModuleSpec("aiprof_test_module_good.so"));
  ASSERT_FALSE(module.ok());
  const std::string message = module.status().message();
  EXPECT_NE(message.find("(from $" + std::string(kTestModuleEnv) + ")"), std::string::npos) << message;
  EXPECT_NE(message.find("\n  " + junk + ": "), std::string::npos) << message;
  // The module beside the program is not tried: the variable overrides.
  EXPECT_EQ(message.find(ProgramDir()), std::string::npos) << message;

  // A real shared object without the entry point asked for.
  unsetenv(kTestModuleEnv);
  ModuleSpec spec = TestModuleSpec("aiprof_test_module_good.so");
  spec.entry_symbol = "aiprof_test_module_no_such_entry";
  module = LoadModule(spec);
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find(ProgramDir() + "/aiprof_test_module_good.so: not an aiprof module of "
                                                          "this kind (no aiprof_test_module_no_such_entry"),
            std::string::npos)
      << module.status().message();
}

TEST_F(ModuleLoaderTest, EnvironmentOverrideIsTheOnlyPathTried) {
  testing::TempDir dir;
  const std::string copy = dir.Path("elsewhere.so");
  fs::copy_file(ProgramDir() + "/aiprof_test_module_good.so", copy);
  setenv(kTestModuleEnv, copy.c_str(), 1);
  EXPECT_EQ(ModuleCandidates(TestModuleSpec("aiprof_test_module_good.so")), std::vector<std::string>{copy});
  StatusOr<LoadedModule> module = LoadModule(TestModuleSpec("aiprof_test_module_good.so"));
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_EQ(module->path, copy);
  // A bare name is the file in the working folder, as access() sees it (to
  // dlopen, a name without a slash is a library to search for).
  setenv(kTestModuleEnv, "aiprof_test_module_good.so", 1);
  EXPECT_EQ(ModuleCandidates(TestModuleSpec("x.so")), std::vector<std::string>{"./aiprof_test_module_good.so"});
}

// The Python extension's case: the calling code is in a shared object, and
// the module is looked up beside that object, not beside the program; then
// in ../lib/aiprof/ from it (an install's layout).
TEST_F(ModuleLoaderTest, FoundBesideTheSharedObjectHoldingTheCaller) {
  testing::TempDir dir;
  fs::create_directories(dir.path() + "/bin");
  fs::create_directories(dir.path() + "/lib/aiprof");
  fs::create_directories(dir.path() + "/ext");
  const std::string good = ProgramDir() + "/aiprof_test_module_good.so";
  fs::copy_file(good, dir.path() + "/ext/caller.so");
  fs::copy_file(good, dir.path() + "/ext/aiprof_sibling.so");
  fs::copy_file(good, dir.path() + "/bin/caller.so");
  fs::copy_file(good, dir.path() + "/lib/aiprof/aiprof_sibling.so");
  for (const char* folder : {"ext", "bin"}) {
    const std::string caller = dir.path() + "/" + folder + "/caller.so";
    void* handle = dlopen(caller.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    const void* anchor = dlsym(handle, "aiprof_test_module_answer");
    ASSERT_NE(anchor, nullptr);
    EXPECT_EQ(ObjectDir(anchor), fs::canonical(dir.path() + "/" + folder).string());
    ModuleSpec spec = TestModuleSpec("aiprof_sibling.so");
    spec.anchor = anchor;
    StatusOr<LoadedModule> module = LoadModule(spec);
    ASSERT_TRUE(module.ok()) << module.status().message();
    const std::string expected =
        std::string(folder) == "ext" ? "/ext/aiprof_sibling.so" : "/bin/../lib/aiprof/aiprof_sibling.so";
    EXPECT_EQ(module->path, fs::canonical(dir.path()).string() + expected);
    EXPECT_EQ(reinterpret_cast<int (*)()>(module->entry)(), 42);
  }
}

}  // namespace
}  // namespace aiprof
