// A small request/response service for aiprof monitor's tests and benchmark
// (test/monitor/monitor_e2e.py, bench/monitor_overhead.py): a TCP server on
// 127.0.0.1 whose worker threads answer one line per request ("r\n" ->
// "ok\n"), with the aiprof SDK around each request.
//
//   service --port-file F [--threads N] [--work-us U] [--slow-after S]
//           [--slow-ms M] [--die-after S] [--marks-file F]
//
// --slow-after S: from S seconds after start, every request also runs
// planted_slow_path() for M ms (default 25): the function the monitor's deep
// trace and diagnosis must name. The CLOCK_MONOTONIC ns of that moment is
// written to --marks-file ("slow_from_ns N"). --die-after S: the process
// exits with status 1 (through exit(), so the SDK writes its flight
// recorder) S seconds after start.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "aiprof/aiprof.h"

namespace {

std::atomic<bool> g_slow{false};
int g_slow_ms = 25;
int g_work_us = 200;
bool g_many_counters = false;

// --many-counters (trial_monitor D6): two names that differ only past the
// live channel's 59 bytes, and 70 more names than its table of 64 holds.
void SetManyCounters() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 70; ++i) v.push_back("c" + std::to_string(100 + i));
    return v;
  }();
  aiprof_counter("queue_depth_of_the_very_long_named_inference_pipeline_stage_one", 1);
  aiprof_counter("queue_depth_of_the_very_long_named_inference_pipeline_stage_two", 2);
  for (size_t i = 0; i < kNames.size(); ++i) aiprof_counter(kNames[i].c_str(), static_cast<double>(i));
}

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Spins for `ns` on the CPU (so CPU samples land in the caller).
__attribute__((noinline)) uint64_t Spin(int64_t ns, uint64_t seed) {
  const int64_t until = NowNs() + ns;
  uint64_t x = seed | 1;
  while (NowNs() < until) {
    for (int i = 0; i < 200; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  }
  return x;
}

}  // namespace

// The planted slowdown: a known function, not inlined, that the deep trace's
// host samples must land in.
extern "C" __attribute__((noinline)) uint64_t planted_slow_path(uint64_t seed) {
  const int64_t until = NowNs() + static_cast<int64_t>(g_slow_ms) * 1000000;
  uint64_t x = seed | 1;
  while (NowNs() < until) {
    for (int i = 0; i < 200; ++i) x = x * 2862933555777941757ull + 3037000493ull;
  }
  return x;
}

extern "C" __attribute__((noinline)) uint64_t handle_request(uint64_t seed) {
  uint64_t r = Spin(static_cast<int64_t>(g_work_us) * 1000, seed);
  if (g_slow.load(std::memory_order_relaxed)) r ^= planted_slow_path(r);
  return r;
}

namespace {

void Serve(int fd) {
  char buf[256];
  uint64_t seed = static_cast<uint64_t>(fd);
  std::string pending;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      const bool fail = pending[0] == 'e';
      pending.erase(0, nl + 1);
      uint64_t id = aiprof_request_begin("request");
      seed = handle_request(seed);
      if (fail) {
        aiprof_request_end_error(id);
      } else {
        aiprof_request_end(id);
      }
      aiprof_counter("queue_depth", 1);  // an SDK counter for /metrics (promtool's lint)
      if (g_many_counters) SetManyCounters();
      if (write(fd, fail ? "er\n" : "ok\n", 3) != 3) return;
    }
  }
  close(fd);
}

double Arg(int argc, char** argv, const char* name, double fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atof(argv[i + 1]);
  }
  return fallback;
}

const char* StrArg(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const char* port_file = StrArg(argc, argv, "--port-file");
  const char* marks_file = StrArg(argc, argv, "--marks-file");
  const double slow_after = Arg(argc, argv, "--slow-after", -1);
  const double die_after = Arg(argc, argv, "--die-after", -1);
  g_slow_ms = static_cast<int>(Arg(argc, argv, "--slow-ms", 25));
  g_work_us = static_cast<int>(Arg(argc, argv, "--work-us", 200));
  g_many_counters = Arg(argc, argv, "--many-counters", 0) != 0;
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(listener, 64) != 0) {
    std::perror("service: bind/listen");
    return 2;
  }
  socklen_t len = sizeof(addr);
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  if (port_file) {
    const std::string tmp = std::string(port_file) + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return 2;
    std::fprintf(f, "%d\n", ntohs(addr.sin_port));
    std::fclose(f);
    std::rename(tmp.c_str(), port_file);
  }
  const int64_t start = NowNs();
  std::thread([=] {
    for (;;) {
      const double t = static_cast<double>(NowNs() - start) / 1e9;
      if (slow_after >= 0 && t >= slow_after && !g_slow.load()) {
        g_slow.store(true);
        if (marks_file) {
          FILE* f = std::fopen(marks_file, "w");
          if (f) {
            std::fprintf(f, "slow_from_ns %lld\n", static_cast<long long>(NowNs()));
            std::fclose(f);
          }
        }
      }
      if (die_after >= 0 && t >= die_after) {
        std::fprintf(stderr, "service: dying on purpose after %.1f s\n", t);
        std::exit(1);
      }
      usleep(10000);
    }
  }).detach();
  for (;;) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::thread(Serve, fd).detach();
  }
}
