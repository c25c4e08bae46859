#include "src/analysis/roofline/cpu_calibration.h"

#include "src/base/atomic_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <memory>
#include <mutex>
#include <filesystem>
#include <thread>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace aiprof {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kFmaChunk = 1 << 17;  // iterations between clock reads
constexpr int kChains = 10;

std::atomic<double> g_sink{0};  // keeps results alive

#if defined(__AVX2__) && defined(__FMA__)
constexpr const char* kMethod = "avx2-fma";
// FLOPs done: iters × chains × lanes × 2.
uint64_t FmaChunkF32(uint64_t iters) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(1.0f + j * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  for (uint64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, c);
  }
  float out[8];
  __m256 s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm256_add_ps(s, acc[j]);
  _mm256_storeu_ps(out, s);
  g_sink.store(out[0], std::memory_order_relaxed);
  return iters * kChains * 8 * 2;
}
uint64_t FmaChunkF64(uint64_t iters) {
  __m256d acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_pd(1.0 + j * 1e-3);
  const __m256d m = _mm256_set1_pd(0.9999999), c = _mm256_set1_pd(1e-7);
  for (uint64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_pd(acc[j], m, c);
  }
  double out[4];
  __m256d s = acc[0];
  for (int j = 1; j < kChains; ++j) s = _mm256_add_pd(s, acc[j]);
  _mm256_storeu_pd(out, s);
  g_sink.store(out[0], std::memory_order_relaxed);
  return iters * kChains * 4 * 2;
}
#else
constexpr const char* kMethod = "scalar-fma";
template <typename T>
uint64_t ScalarFma(uint64_t iters) {
  T acc[kChains * 4];
  for (int j = 0; j < kChains * 4; ++j) acc[j] = T(1) + T(j) * T(1e-3);
  for (uint64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kChains * 4; ++j) acc[j] = std::fma(acc[j], T(0.9999999), T(1e-7));
  }
  T s = 0;
  for (T a : acc) s += a;
  g_sink.store(static_cast<double>(s), std::memory_order_relaxed);
  return iters * kChains * 4 * 2;
}
uint64_t FmaChunkF32(uint64_t iters) { return ScalarFma<float>(iters); }
uint64_t FmaChunkF64(uint64_t iters) { return ScalarFma<double>(iters); }
#endif

double MeasureFlops(uint64_t (*chunk)(uint64_t), unsigned threads, double seconds) {
  std::vector<uint64_t> flops(threads, 0);
  std::vector<std::thread> pool;
  Clock::time_point start = Clock::now();
  Clock::time_point deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (Clock::now() < deadline) flops[t] += chunk(kFmaChunk);
    });
  }
  for (std::thread& th : pool) th.join();
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  uint64_t total = 0;
  for (uint64_t f : flops) total += f;
  return wall > 0 ? static_cast<double>(total) / wall : 0;
}

template <typename Fn>
void Parallel(unsigned threads, size_t n, Fn fn) {
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    size_t lo = n * t / threads, hi = n * (t + 1) / threads;
    pool.emplace_back([=] { fn(lo, hi); });
  }
  for (std::thread& th : pool) th.join();
}

size_t TriadArrayBytes() {
  long l3 = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  size_t bytes = std::max<size_t>(size_t{32} << 20, l3 > 0 ? static_cast<size_t>(l3) * 4 : 0);
  return std::min<size_t>(bytes, size_t{256} << 20);
}

double MeasureTriad(unsigned threads, size_t array_bytes) {
  size_t n = array_bytes / sizeof(double);
  std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  double *pa = a.get(), *pb = b.get(), *pc = c.get();
  Parallel(threads, n, [=](size_t lo, size_t hi) {  // first touch by the thread that will use it
    for (size_t i = lo; i < hi; ++i) pa[i] = 0, pb[i] = 1.0, pc[i] = 2.0;
  });
  const double s = 3.0;
  double best = 0;
  Clock::time_point stop = Clock::now() + std::chrono::milliseconds(1500);
  for (int pass = 0; pass < 20 && (pass < 3 || Clock::now() < stop); ++pass) {
    Clock::time_point t0 = Clock::now();
    Parallel(threads, n, [=](size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
    });
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (secs > 0) best = std::max(best, 3.0 * static_cast<double>(n) * sizeof(double) / secs);
  }
  g_sink.store(pa[n / 2], std::memory_order_relaxed);
  return best;
}

}  // namespace

CpuCalibration CalibrateCpu(double flops_seconds) {
  Clock::time_point t0 = Clock::now();
  CpuCalibration c;
  c.threads = std::max(1u, std::thread::hardware_concurrency());
  c.method = kMethod;
  c.fp32_flops_per_second = MeasureFlops(&FmaChunkF32, c.threads, flops_seconds);
  c.fp64_flops_per_second = MeasureFlops(&FmaChunkF64, c.threads, flops_seconds);
  c.triad_array_bytes = TriadArrayBytes();
  c.memory_bandwidth_bytes_per_second = MeasureTriad(c.threads, c.triad_array_bytes);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) c.memory_capacity_bytes = static_cast<double>(pages) * static_cast<double>(page);
  c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return c;
}

DevicePeaks CalibrationToDevice(const CpuCalibration& c, const std::string& name) {
  DevicePeaks d;
  d.name = name;
  d.peak_flops_per_second["fp32"] = c.fp32_flops_per_second;
  d.peak_flops_per_second["fp64"] = c.fp64_flops_per_second;
  d.memory_bandwidth_bytes_per_second = c.memory_bandwidth_bytes_per_second;
  d.memory_capacity_bytes = c.memory_capacity_bytes;
  d.source = "aiprof calibrate: " + c.method + " on " + std::to_string(c.threads) + " threads, triad over 3 x " +
             std::to_string(c.triad_array_bytes >> 20) + " MiB";
  return d;
}

Status SaveDevice(const DevicePeaks& device, const std::string& path) {
  std::vector<DevicePeaks> devices;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    ASSIGN_OR_RETURN(devices, ReadDevicesFile(path));
  } else if (std::filesystem::path parent = std::filesystem::path(path).parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return ErrStatus("cannot create " + parent.string() + ": " + ec.message());
  }
  UpsertDevice(device, &devices);
  return WriteFileAtomically(path, "# Written by `aiprof calibrate` (comments are not kept).\n" + DevicesToYaml(devices));
}

namespace {

struct AutoState {
  std::mutex mu;
  AutoCalibration policy;
  bool done = false;
  std::optional<DevicePeaks> measured;
};
AutoState& Auto() {
  static AutoState* s = new AutoState;  // never destroyed: analyses may run on worker threads at exit
  return *s;
}

}  // namespace

int OtherRunnableTasks() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (f == nullptr) return 0;
  double l1, l5, l15;
  int running = 0, total = 0;
  const int n = std::fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total);
  std::fclose(f);
  return n == 5 ? std::max(0, running - 1) : 0;
}

int BusyTasksLimit() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / 2)); }

void SetAutoCalibration(AutoCalibration policy) {
  AutoState& a = Auto();
  std::lock_guard<std::mutex> lock(a.mu);
  a.policy = std::move(policy);
}

bool CalibrationSavesWhenBusy() {
  AutoState& a = Auto();
  std::lock_guard<std::mutex> lock(a.mu);
  return a.policy.save_when_busy;
}

std::optional<DevicePeaks> CalibrateOnFirstNeed() {
  AutoState& a = Auto();
  std::lock_guard<std::mutex> lock(a.mu);
  if (!a.policy.enabled) return std::nullopt;
  if (a.done) return a.measured;
  a.done = true;
  auto tell = [&](const std::string& m) {
    if (a.policy.notify) a.policy.notify(m);
  };
  const std::string path = UserDevicesFile();
  const int busy_before = OtherRunnableTasks();
  const int busy_limit = BusyTasksLimit();
  if (!a.policy.save_when_busy && busy_before >= busy_limit) {
    // Peaks measured now would not be used (below): the measurement's
    // seconds are not spent at all (they were, on every run of a busy CI box).
    tell("no CPU peaks for the roofline yet, and not measuring now: " + std::to_string(busy_before) +
         " other tasks are running, so peaks measured now would be low; run `aiprof calibrate` on an idle machine");
    return std::nullopt;
  }
  tell(
      "no CPU peaks for the roofline yet: measuring this machine once (`aiprof calibrate`; --no-calibrate or "
      "AIPROF_CALIBRATE=0 skips it)");
  CpuCalibration c = CalibrateCpu(a.policy.flops_seconds);
  if (!(c.fp32_flops_per_second > 0) || !(c.memory_bandwidth_bytes_per_second > 0)) {
    tell("calibration measured zero: the roofline stays without CPU peaks");
    return std::nullopt;
  }
  const int busy = std::max(busy_before, OtherRunnableTasks());
  char figures[160];
  std::snprintf(figures, sizeof figures, "fp32 %.1f GFLOP/s, memory %.2f GB/s in %.1f s", c.fp32_flops_per_second * 1e-9,
                c.memory_bandwidth_bytes_per_second * 1e-9, c.seconds);
  if (!a.policy.save_when_busy && busy >= busy_limit) {
    // Peaks measured beside other work are low, by however much the other
    // work took: used, they put utilisations above 100% and a finding that
    // depends on the load of the moment; kept, they would flatter every later
    // trace. Neither this run nor a later one uses them.
    tell(std::string("measured ") + figures + " while " + std::to_string(busy) +
         " other tasks were running: not used and not saved (the peaks are likely low), so the roofline stays "
         "without CPU peaks; run `aiprof calibrate` on an idle machine");
    return std::nullopt;
  }
  a.measured = CalibrationToDevice(c, kCalibratedCpuName);
  if (path.empty()) {
    tell(std::string("measured ") + figures + "; not saved (HOME is not set): this run only");
  } else if (Status st = SaveDevice(*a.measured, path); !st.ok()) {
    tell(std::string("measured ") + figures + "; not saved: " + st.message());
  } else {
    tell(std::string("measured ") + figures + "; saved as '" + kCalibratedCpuName + "' in " + path +
         " (later runs use it; `aiprof calibrate` measures again)");
  }
  return a.measured;
}

}  // namespace aiprof
