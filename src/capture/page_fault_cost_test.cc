#include "src/capture/page_fault_cost.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/capture/host_trace.h"
#include "src/capture/perf_sampler.h"
#include "src/model/page_fault_records.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

TEST(PageFaultCostTest, MeasuresEveryRepetition) {
  PageFaultCost c = MeasurePageFaultCost(64, 3);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.runs_ns.size(), 3u);
  EXPECT_GT(c.median_ns, 0);
  EXPECT_NE(c.method.find("median of 3 repetitions"), std::string::npos);
}

// The page-fault sampler on this thread: touching N fresh pages gives at
// least N fault records of this thread (more: the test's own allocations),
// each on this thread's host track as an instant of the fault category.
TEST(PageFaultSamplerTest, CountsThisThreadsFirstTouches) {
  PerfOptions o;
  o.event = PerfEvent::kPageFaults;
  o.dwarf = false;
  o.ring_pages = 64;
  PerfSampler s(o);
  int err = 0;
  const int32_t tid = static_cast<int32_t>(syscall(SYS_gettid));
  if (!s.OpenTask(tid, false, &err).ok()) GTEST_SKIP() << "perf_event_open refused here (errno " << err << ")";
  ASSERT_TRUE(s.Start().ok());
  constexpr size_t kPages = 200;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* m = mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  madvise(m, kPages * page, MADV_NOHUGEPAGE);
  volatile char* p = static_cast<volatile char*>(m);
  for (size_t i = 0; i < kPages; ++i) p[i * page] = 1;
  munmap(m, kPages * page);
  s.Stop();
  size_t mine = 0;
  for (const RawFault& f : s.data().faults) mine += f.tid == tid ? f.period : 0;
  EXPECT_GE(mine, kPages);
  EXPECT_LT(mine, kPages + 2000);  // the sampler's own thread start and gtest's work, not thousands more
  Trace trace;
  TraceBuilder b(&trace);
  EXPECT_EQ(AddPageFaults(s.data(), &b), s.data().faults.size());
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_EQ(trace.instants.size(), s.data().faults.size());
  EXPECT_EQ(trace.Str(trace.instants.category[0]), kPageFaultCategory);
}

}  // namespace
}  // namespace aiprof
