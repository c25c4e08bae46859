// The parallel Chrome JSON import gives the same model whatever the number
// of parser workers: each real fixture is imported with 0 (all on one
// thread), 1, 2, 4 and 8 workers and with batches small enough that even
// these files span tens to hundreds of batches, and the native files written from
// the models must be byte-for-byte identical.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "src/importers/json/chrome_json_importer.h"
#include "src/model/native_file.h"
#include "src/model/trace_builder.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The native file of `path` imported with `options`.
std::string NativeBytes(const std::string& path, const ChromeJsonOptions& options, const testing::TempDir& dir) {
  Trace trace;
  TraceBuilder builder(&trace);
  Status st = ImportChromeJson(path, &builder, options);
  EXPECT_TRUE(st.ok()) << st.message();
  st = builder.Finalize();
  EXPECT_TRUE(st.ok()) << st.message();
  std::string out = dir.Path("t.aiprof");
  st = WriteNativeFile(trace, out);
  EXPECT_TRUE(st.ok()) << st.message();
  return ReadFileText(out);
}

class ParallelImportTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ParallelImportTest, SameNativeFileForAnyWorkerCountAndBatchSize) {
  const std::string path = std::string(AIPROF_FIXTURES_DIR) + "/" + GetParam();
  testing::TempDir dir;
  ChromeJsonOptions serial;
  serial.workers = 0;
  const std::string reference = NativeBytes(path, serial, dir);
  ASSERT_GT(reference.size(), 1000u);
  // Both sizes cut each of these files into many batches (a plain file that
  // fits one batch is parsed on the reading thread whatever the count).
  for (size_t batch : {size_t{4096}, size_t{64 << 10}}) {
    for (size_t workers : {0, 1, 2, 4, 8}) {
      ChromeJsonOptions options;
      options.workers = workers;
      options.batch_bytes = batch;
      EXPECT_TRUE(NativeBytes(path, options, dir) == reference)
          << GetParam() << " workers " << workers << " batch " << batch;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealTraces, ParallelImportTest,
    ::testing::Values(
        // torch.profiler on CPU: stacks, shapes, [memory] counters, python_function.
        "torch-cpu/resnet18_bs1_full.kineto.json",
        "torch-cpu/transformer_enc_bs2.kineto.json",
        // Kineto on GPU (gzip): kernels, runtime calls, flows, distributedInfo.
        "kineto/kineto__tb_plugin__samples__resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz",
        "kineto/HolisticTraceAnalysis__tests__data__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"));

}  // namespace
}  // namespace aiprof
