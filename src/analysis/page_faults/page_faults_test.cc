#include "src/analysis/page_faults/page_faults.h"

#include <gtest/gtest.h>

#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/page_fault_records.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

// A hand-made trace (not a recording): three 1 ms steps on pid 1 / tid 1,
// each with an op A holding an op a1 (step 3 also an op B), and minor-fault
// instants as aiprof trace writes them (category aiprof_page_fault, one
// fault each). Worked by hand:
//   step 1: 250, 260, 270 µs in A > a1; 500 in A only           -> 4
//   step 2: 1250, 1300 in A > a1; 1900 in no op; tid 2 at 1500   -> 4
//   step 3: 2300, 2350 in A > a1; 2750 in B                      -> 3
//   pid 2 at 2500: another process, not the steps' -> not counted
// 11 faults over 3 steady steps = 11/3 per step; at 20 µs a fault,
// 73.33 µs per step, 7.33% of the 1 ms step. Ops: (A, a1) 7, (no op) 2,
// (A, A) 1, (B, B) 1.
constexpr const char* kFaultTrace = R"({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":1000,"dur":1000},
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":2000,"dur":1000},
  {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":100,"dur":500},
  {"ph":"X","cat":"cpu_op","name":"a1","pid":1,"tid":1,"ts":200,"dur":200},
  {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":1100,"dur":500},
  {"ph":"X","cat":"cpu_op","name":"a1","pid":1,"tid":1,"ts":1200,"dur":200},
  {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":2100,"dur":500},
  {"ph":"X","cat":"cpu_op","name":"a1","pid":1,"tid":1,"ts":2200,"dur":200},
  {"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":2700,"dur":100},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":250},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":260},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":270},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":500},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":1250},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":1300},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":1900},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":2,"ts":1500},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":2300},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":2350},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":1,"tid":1,"ts":2750},
  {"ph":"i","s":"t","cat":"aiprof_page_fault","name":"minor page fault","pid":2,"tid":2,"ts":2500}
]})";

std::unique_ptr<Trace> LoadCapture(bool with_cost) {
  auto t = ImportJsonText(kFaultTrace);
  if (!t) return t;
  t->metadata[kPageFaultsMeta] = "on";
  t->metadata[kPageFaultPeriodMeta] = "1";
  if (with_cost) t->metadata[kPageFaultCostMeta] = "20000";
  return t;
}

TEST(PageFaultsTest, HandMadeTraceFiguresWorkedByHand) {
  auto t = LoadCapture(true);
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(HasPageFaultData(*t));
  const AnalysisWindow w = ComputeAnalysisWindow(*t, /*warmup_steps=*/0);
  ASSERT_EQ(w.steps, 3u);
  const PageFaultsResult r = ComputePageFaults(*t, w);
  EXPECT_TRUE(r.has_data);
  EXPECT_TRUE(r.cost_known);
  EXPECT_EQ(r.records, 12u);
  EXPECT_EQ(r.total_faults, 12u);
  EXPECT_EQ(r.window_faults, 11u);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].faults, 4u);
  EXPECT_EQ(r.steps[1].faults, 4u);
  EXPECT_EQ(r.steps[2].faults, 3u);
  EXPECT_NEAR(r.faults_per_base, 11.0 / 3, 1e-12);
  EXPECT_NEAR(r.fault_ns_per_base, 11.0 / 3 * 20000, 1e-6);
  EXPECT_NEAR(r.share, 11.0 / 3 * 20000 / 1e6, 1e-12);
  ASSERT_EQ(r.ops.size(), 4u);
  EXPECT_EQ(r.ops[0].outer, "A");
  EXPECT_EQ(r.ops[0].inner, "a1");
  EXPECT_EQ(r.ops[0].faults, 7u);
  EXPECT_EQ(r.ops[1].outer, "");
  EXPECT_EQ(r.ops[1].faults, 2u);
  EXPECT_EQ(r.ops[2].outer, "A");
  EXPECT_EQ(r.ops[2].inner, "A");
  EXPECT_EQ(r.ops[2].faults, 1u);
  EXPECT_EQ(r.ops[3].outer, "B");
  EXPECT_EQ(r.ops[3].faults, 1u);
  MetricSet m;
  PublishPageFaults(r, &m);
  ASSERT_NE(m.Get("page_fault_ns"), nullptr);
  EXPECT_NEAR(m.Get("page_fault_ns")->value, 11.0 / 3 * 20000, 1e-6);
  EXPECT_FALSE(m.Get("page_fault_ns")->measured);  // count x measured cost: an estimate
  EXPECT_NEAR(m.Get("page_fault_ratio")->value, 11.0 / 3 * 0.02, 1e-12);
  EXPECT_NEAR(m.Get("page_faults_per_step")->value, 11.0 / 3, 1e-12);
  const std::string note = PageFaultWhatIfNote(r);
  EXPECT_NE(note.find("4 page faults per step, ~0.07 ms (7.3% of the step)"), std::string::npos) << note;
  EXPECT_NE(note.find("the replay keeps them in the ops that took them"), std::string::npos) << note;
}

// A period of 4 (one record per 4 faults) scales every count.
TEST(PageFaultsTest, PeriodScalesCounts) {
  auto t = LoadCapture(true);
  ASSERT_NE(t, nullptr);
  t->metadata[kPageFaultPeriodMeta] = "4";
  const PageFaultsResult r = ComputePageFaults(*t, ComputeAnalysisWindow(*t, 0));
  EXPECT_EQ(r.window_faults, 44u);
  EXPECT_EQ(r.steps[0].faults, 16u);
  EXPECT_NEAR(r.faults_per_base, 44.0 / 3, 1e-12);
}

// Bad input: fault records without the cost metadata give no time, and say
// why ("cost unknown"), never a time from a made-up cost.
TEST(PageFaultsTest, NoCostMetadataSaysCostUnknown) {
  auto t = LoadCapture(false);
  ASSERT_NE(t, nullptr);
  const PageFaultsResult r = ComputePageFaults(*t, ComputeAnalysisWindow(*t, 0));
  EXPECT_FALSE(r.cost_known);
  EXPECT_EQ(r.fault_ns_per_base, 0);
  MetricSet m;
  PublishPageFaults(r, &m);
  EXPECT_NEAR(m.Get("page_faults_per_step")->value, 11.0 / 3, 1e-12);
  EXPECT_EQ(m.Get("page_fault_ns"), nullptr);
  EXPECT_EQ(m.Get("page_fault_ratio"), nullptr);
  ASSERT_TRUE(m.UnavailableReason("page_fault_ns").has_value());
  EXPECT_NE(m.UnavailableReason("page_fault_ns")->find("cost unknown"), std::string::npos);
  EXPECT_NE(PageFaultWhatIfNote(r).find("unknown"), std::string::npos);
  // A cost that is not a positive number is unknown too.
  t->metadata[kPageFaultCostMeta] = "-3";
  EXPECT_FALSE(ComputePageFaults(*t, ComputeAnalysisWindow(*t, 0)).cost_known);
  t->metadata[kPageFaultCostMeta] = "12abc";
  EXPECT_FALSE(ComputePageFaults(*t, ComputeAnalysisWindow(*t, 0)).cost_known);
}

// A trace from another recorder: no records, no metadata -> the analysis
// does not apply (no section, no metrics, the rule left out).
TEST(PageFaultsTest, OtherTracesHaveNoData) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":10}]})");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(HasPageFaultData(*t));
  EXPECT_FALSE(ComputePageFaults(*t, ComputeAnalysisWindow(*t)).has_data);
  // Recording turned off: data present as metadata, metrics unavailable with the reason.
  t->metadata[kPageFaultsMeta] = "off";
  EXPECT_TRUE(HasPageFaultData(*t));
  const PageFaultsResult r = ComputePageFaults(*t, ComputeAnalysisWindow(*t));
  EXPECT_FALSE(r.has_data);
  MetricSet m;
  PublishPageFaults(r, &m);
  ASSERT_TRUE(m.UnavailableReason("page_fault_ns").has_value());
  EXPECT_NE(m.UnavailableReason("page_fault_ns")->find("--no-page-faults"), std::string::npos);
}

// Which note each allocator and its settings get (the sentences are the
// analysis's judgement, measured in docs/analyses.md, "page_faults").
TEST(PageFaultsTest, MallocNoteReadsTheSettings) {
  EXPECT_EQ(MallocNote("", ""), "");
  EXPECT_EQ(MallocNote("unknown", "LD_PRELOAD=x"), "");
  const std::string je = MallocNote("jemalloc", "LD_PRELOAD=libjemalloc.so.2");
  EXPECT_NE(je.find("decay on (MALLOC_CONF unset)"), std::string::npos) << je;
  EXPECT_NE(je.find("dirty_decay_ms:-1,muzzy_decay_ms:-1 keeps it"), std::string::npos) << je;
  // Debian torch 1.13's launcher setting (torch.backends.xeon.run_cpu) has decay on.
  const std::string launcher =
      MallocNote("jemalloc", "LD_PRELOAD=libjemalloc.so.2; MALLOC_CONF=oversize_threshold:1,background_thread:true,metadata_thp:auto");
  EXPECT_NE(launcher.find("decay on (MALLOC_CONF =oversize_threshold:1,"), std::string::npos) << launcher;
  EXPECT_EQ(MallocNote("jemalloc", "MALLOC_CONF=oversize_threshold:1,dirty_decay_ms:-1,muzzy_decay_ms:-1"),
            "jemalloc with dirty_decay_ms:-1: freed memory stays mapped and is reused");
  // A setting's name must match whole: MY_MALLOC_CONF is not MALLOC_CONF.
  EXPECT_NE(MallocNote("jemalloc", "XMALLOC_CONF=dirty_decay_ms:-1").find("decay on"), std::string::npos);
  EXPECT_NE(MallocNote("glibc", "").find("glibc malloc with its defaults"), std::string::npos);
  EXPECT_NE(MallocNote("glibc", "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432")
                .find("fixed mmap and trim thresholds"),
            std::string::npos);
  EXPECT_NE(MallocNote("glibc", "MALLOC_MMAP_THRESHOLD_=33554432; MALLOC_TRIM_THRESHOLD_=1073741824").find("fixed"),
            std::string::npos);
  EXPECT_NE(MallocNote("glibc", "GLIBC_TUNABLES=glibc.malloc.arena_max=2").find("(GLIBC_TUNABLES=glibc.malloc.arena_max=2)"),
            std::string::npos);
  EXPECT_NE(MallocNote("tcmalloc", "").find("tcmalloc"), std::string::npos);
}

// Which allocators keep freed memory (metric malloc_keeps_freed): the
// measured table of docs/analyses.md, "page_faults".
TEST(PageFaultsTest, MallocKeepsFreedFollowsTheMeasuredTable) {
  EXPECT_TRUE(MallocKeepsFreed("tcmalloc", ""));
  EXPECT_TRUE(MallocKeepsFreed("jemalloc", "LD_PRELOAD=libjemalloc.so.2; MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1"));
  EXPECT_FALSE(MallocKeepsFreed("jemalloc", "LD_PRELOAD=libjemalloc.so.2"));
  EXPECT_FALSE(MallocKeepsFreed("jemalloc", "MALLOC_CONF=oversize_threshold:1,background_thread:true,metadata_thp:auto"));
  EXPECT_FALSE(MallocKeepsFreed("jemalloc", "XMALLOC_CONF=dirty_decay_ms:-1"));
  EXPECT_FALSE(MallocKeepsFreed("glibc", "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432"));
  EXPECT_FALSE(MallocKeepsFreed("", ""));
  EXPECT_TRUE(GlibcThresholdsFixed("GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432"));
  EXPECT_TRUE(GlibcThresholdsFixed("MALLOC_MMAP_THRESHOLD_=33554432; MALLOC_TRIM_THRESHOLD_=1073741824"));
  EXPECT_FALSE(GlibcThresholdsFixed("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432"));
  EXPECT_FALSE(GlibcThresholdsFixed(""));
}

// The allocator metrics the allocator suggestions' `when:` read: published
// from the capture's malloc and settings, unavailable without them.
TEST(PageFaultsTest, AllocatorMetricsFromTheCapturesMalloc) {
  auto metric = [](const char* malloc, const char* settings, const char* name) {
    PageFaultsResult r;
    r.malloc = malloc;
    r.malloc_settings = settings;
    MetricSet m;
    PublishPageFaults(r, &m);
    const MetricValue* v = m.Get(name);
    return v ? v->value : -1.0;
  };
  const char* fixed = "GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432";
  EXPECT_EQ(metric("glibc", "", "malloc_glibc"), 1);
  EXPECT_EQ(metric("glibc", "", "malloc_glibc_fixed"), 0);
  EXPECT_EQ(metric("glibc", fixed, "malloc_glibc_fixed"), 1);
  EXPECT_EQ(metric("glibc", fixed, "malloc_keeps_freed"), 0);
  EXPECT_EQ(metric("jemalloc", "LD_PRELOAD=libjemalloc.so.2", "malloc_glibc"), 0);
  EXPECT_EQ(metric("jemalloc", "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1", "malloc_keeps_freed"), 1);
  EXPECT_EQ(metric("tcmalloc", "", "malloc_keeps_freed"), 1);
  EXPECT_EQ(metric("", "", "malloc_glibc"), -1);  // not said: unavailable
}

TEST(PageFaultsTest, AllocatorEvidenceComesBeforeTheOps) {
  auto t = LoadCapture(true);
  ASSERT_NE(t, nullptr);
  t->metadata[kMallocMeta] = "jemalloc";
  t->metadata[kMallocSettingsMeta] = "LD_PRELOAD=libjemalloc.so.2";
  const PageFaultsResult r = ComputePageFaults(*t, ComputeAnalysisWindow(*t, 0));
  EXPECT_EQ(r.malloc, "jemalloc");
  MetricSet m;
  PublishPageFaults(r, &m);
  const std::vector<std::string>& ev = m.Evidence("page_faults");
  ASSERT_GE(ev.size(), 4u);
  EXPECT_EQ(ev[2].rfind("allocator: jemalloc with decay on", 0), 0u) << ev[2];
  EXPECT_EQ(ev[3].find("allocator"), std::string::npos) << ev[3];
}

}  // namespace
}  // namespace aiprof
