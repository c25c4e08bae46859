/* A module for module_loader_test.cc, built twice by test/CMakeLists.txt:
 * aiprof_test_module_good.so (built for this aiprof's version) and
 * aiprof_test_module_old.so (for "0.0.0-old"). Compiled as C++. */
extern "C" {

__attribute__((visibility("default"))) const char* aiprof_test_module_version() { return TEST_MODULE_VERSION; }

__attribute__((visibility("default"))) int aiprof_test_module_answer() { return 42; }
}
