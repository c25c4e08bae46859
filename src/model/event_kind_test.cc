#include "src/model/event_kind.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

// gloo's record_function spans are user annotations whatever the export
// calls them: Kineto and the legacy export write user_annotation, torch's
// profiler read directly (aiprof trace's hook without Kineto) cpu_op. Before,
// the latter were cpu ops and `analyze` found "No collectives in the trace"
// in a 2-rank gloo DDP capture (trial audit3 item 2).
TEST(EventKindTest, GlooSpansAreUserAnnotationsInEveryExport) {
  EXPECT_EQ(ClassifyEvent("cpu_op", "gloo:all_reduce"), EventKind::kUserAnnotation);
  EXPECT_EQ(ClassifyEvent("user_annotation", "gloo:all_reduce"), EventKind::kUserAnnotation);
  EXPECT_EQ(ClassifyEvent("Operator", "gloo:broadcast"), EventKind::kUserAnnotation);
  // Only the prefix: ops that merely mention gloo stay ops.
  EXPECT_EQ(ClassifyEvent("cpu_op", "c10d::allreduce_"), EventKind::kCpuOp);
  EXPECT_EQ(ClassifyEvent("cpu_op", "my_gloo:op"), EventKind::kCpuOp);
  EXPECT_EQ(ClassifyEvent("cpu_op", "Gloo:all_reduce"), EventKind::kCpuOp);
  EXPECT_EQ(ClassifyEvent("cpu_op", "aten::mm"), EventKind::kCpuOp);
}

}  // namespace
}  // namespace aiprof
