// Closed-loop load generator for test/monitor/service.cc: C connections to
// 127.0.0.1:PORT, each sending one request and waiting for its answer, for D
// seconds (or until the service goes away). Prints one JSON line:
//   {"requests": N, "seconds": S, "throughput": N/S, "errors": E}
//
//   load PORT CONNECTIONS SECONDS [ERROR_EVERY]
// ERROR_EVERY k > 0: every k-th request asks for an error answer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: load PORT CONNECTIONS SECONDS [ERROR_EVERY]\n");
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int conns = std::atoi(argv[2]);
  const double seconds = std::atof(argv[3]);
  const long error_every = argc > 4 ? std::atol(argv[4]) : 0;
  std::atomic<long> total{0}, errors{0};
  const double start = Now();
  std::vector<std::thread> threads;
  for (int c = 0; c < conns; ++c) {
    threads.emplace_back([&] {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(port));
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      long n = 0;
      char buf[8];
      while (Now() - start < seconds) {
        const bool fail = error_every > 0 && (n + 1) % error_every == 0;
        if (write(fd, fail ? "e\n" : "r\n", 2) != 2) break;
        ssize_t got = 0;
        while (got < 3) {
          ssize_t r = read(fd, buf + got, 3 - static_cast<size_t>(got));
          if (r <= 0) break;
          got += r;
        }
        if (got < 3) break;
        ++n;
        if (buf[0] == 'e') errors.fetch_add(1);
      }
      total.fetch_add(n);
      close(fd);
    });
  }
  for (std::thread& t : threads) t.join();
  const double took = Now() - start;
  std::printf("{\"requests\": %ld, \"seconds\": %.3f, \"throughput\": %.1f, \"errors\": %ld}\n", total.load(), took,
              static_cast<double>(total.load()) / took, errors.load());
  return 0;
}
