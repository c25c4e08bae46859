// Transparent huge pages for aiprof's own large allocations.
//
// In the virtual machines aiprof runs on, a first-touch page fault costs
// 20-30 us (a paravirtualised guest), so an analysis that fills a fresh
// 50 MB array spends most of its time faulting 4 KiB pages in. glibc's
// malloc backs its memory with 2 MiB transparent huge pages when the
// tunable glibc.malloc.hugetlb=1 is set, but tunables are read only when a
// program starts. So the CLI re-executes itself once, with the tunable
// added, when an input is large enough for it to matter; the re-executed
// process puts GLIBC_TUNABLES back as it was before it does anything else,
// so the commands aiprof starts (`aiprof trace -- CMD`) never inherit it.
#ifndef AIPROF_BASE_HUGE_PAGES_H_
#define AIPROF_BASE_HUGE_PAGES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace aiprof {

// Inputs at least this large (the sum of the regular files named on the
// command line) are worth the second start (about 10-50 ms of exec and
// dynamic linking).
inline constexpr uint64_t kHugePageInputBytes = uint64_t{64} << 20;

// The environment variable that turns the re-execution off ("0").
inline constexpr const char* kHugePagesEnv = "AIPROF_HUGEPAGES";

// Whether to re-execute: THP is not "never", the user did not opt out
// (AIPROF_HUGEPAGES=0), the tunables do not already name
// glibc.malloc.hugetlb, and `input_bytes` reaches the threshold.
// `thp_enabled`: the contents of /sys/kernel/mm/transparent_hugepage/enabled
// ("always [madvise] never"); empty when unreadable.
bool WantHugePageRestart(std::string_view thp_enabled, const char* opt_out, const char* tunables,
                         uint64_t input_bytes);

// GLIBC_TUNABLES with glibc.malloc.hugetlb=1 appended to `tunables` (null: unset).
std::string TunablesWithHugePages(const char* tunables);

// Called first in main(). In a re-executed process: restores GLIBC_TUNABLES
// and returns. Otherwise, when WantHugePageRestart says so for the files
// among argv, re-executes /proc/self/exe with the same arguments; returns
// (and the program goes on as it is) when that fails.
void MaybeRestartWithHugePages(int argc, char** argv);

}  // namespace aiprof

#endif  // AIPROF_BASE_HUGE_PAGES_H_
