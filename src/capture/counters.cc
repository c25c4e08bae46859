#include "src/capture/counters.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "src/base/clock.h"

namespace aiprof {

// NVML through dlopen: the few entry points used, with NVML's own signatures
// (nvml.h); no header or link dependency, so machines without the driver run.
class Nvml {
 public:
  struct Utilization {
    unsigned int gpu, memory;
  };
  struct Memory {
    unsigned long long total, free, used;
  };
  using Device = void*;

  bool Load(std::string* status) {
    handle_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* err = dlerror();
      *status = std::string("not used: ") + (err ? err : "libnvidia-ml.so.1 not found");
      return false;
    }
    init_ = reinterpret_cast<int (*)()>(dlsym(handle_, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<int (*)()>(dlsym(handle_, "nvmlShutdown"));
    count_ = reinterpret_cast<int (*)(unsigned*)>(dlsym(handle_, "nvmlDeviceGetCount_v2"));
    by_index_ = reinterpret_cast<int (*)(unsigned, Device*)>(dlsym(handle_, "nvmlDeviceGetHandleByIndex_v2"));
    util_ = reinterpret_cast<int (*)(Device, Utilization*)>(dlsym(handle_, "nvmlDeviceGetUtilizationRates"));
    mem_ = reinterpret_cast<int (*)(Device, Memory*)>(dlsym(handle_, "nvmlDeviceGetMemoryInfo"));
    power_ = reinterpret_cast<int (*)(Device, unsigned*)>(dlsym(handle_, "nvmlDeviceGetPowerUsage"));
    if (!init_ || !shutdown_ || !count_ || !by_index_ || !util_ || !mem_ || !power_) {
      *status = "not used: libnvidia-ml.so.1 lacks an expected entry point";
      return false;
    }
    if (int rc = init_(); rc != 0) {
      *status = "not used: nvmlInit_v2 returned " + std::to_string(rc);
      return false;
    }
    inited_ = true;
    unsigned n = 0;
    if (count_(&n) == 0) {
      for (unsigned i = 0; i < n; ++i) {
        Device d = nullptr;
        if (by_index_(i, &d) == 0) devices_.push_back(d);
      }
    }
    *status = "loaded, " + std::to_string(devices_.size()) + " GPU(s)";
    return true;
  }
  ~Nvml() {
    if (inited_) shutdown_();
    if (handle_ != nullptr) dlclose(handle_);
  }
  const std::vector<Device>& devices() const { return devices_; }
  bool Util(Device d, Utilization* u) { return util_(d, u) == 0; }
  bool Mem(Device d, Memory* m) { return mem_(d, m) == 0; }
  bool PowerMilliwatts(Device d, unsigned* mw) { return power_(d, mw) == 0; }

 private:
  void* handle_ = nullptr;
  bool inited_ = false;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*by_index_)(unsigned, Device*) = nullptr;
  int (*util_)(Device, Utilization*) = nullptr;
  int (*mem_)(Device, Memory*) = nullptr;
  int (*power_)(Device, unsigned*) = nullptr;
  std::vector<Device> devices_;
};

CounterSampler::CounterSampler(int64_t period_ns, bool gpu) : period_ns_(period_ns) {
  if (gpu) {
    nvml_ = new Nvml();
    if (!nvml_->Load(&nvml_status_)) {
      delete nvml_;
      nvml_ = nullptr;
    }
  } else {
    nvml_status_ = "not used: GPU counters off";
  }
}

CounterSampler::~CounterSampler() {
  Stop();
  delete nvml_;
}

void CounterSampler::AddProcess(int32_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  procs_.push_back(Proc{pid});
}

uint16_t CounterSampler::Name(const std::string& name) {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<uint16_t>(i);
  }
  names_.push_back(name);
  return static_cast<uint16_t>(names_.size() - 1);
}

void CounterSampler::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void CounterSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CounterSampler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    SampleOnce(MonotonicNs());
    cv_.wait_for(lock, std::chrono::nanoseconds(period_ns_), [this] { return stop_; });
  }
}

void CounterSampler::SampleOnce(int64_t now_ns) {
  for (Proc& p : procs_) SampleProcess(&p, now_ns);
  if (nvml_ != nullptr) SampleGpus(now_ns);
}

void CounterSampler::SampleProcess(Proc* p, int64_t now_ns) {
  const std::string dir = "/proc/" + std::to_string(p->pid);
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return;  // the process has exited
  // Fields after the command name, which is in parentheses and may hold spaces.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream in(line.substr(close + 2));
  std::vector<std::string> f;
  for (std::string tok; in >> tok;) f.push_back(tok);
  // f[0] is field 3 (state): utime=14, stime=15, num_threads=20, rss=24.
  if (f.size() < 22) return;
  const uint64_t ticks = std::stoull(f[11]) + std::stoull(f[12]);
  const double threads = std::stod(f[17]);
  const double rss_bytes = std::stod(f[21]) * static_cast<double>(sysconf(_SC_PAGESIZE));
  uint64_t vol = 0, invol = 0;
  if (DIR* d = opendir((dir + "/task").c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream st(dir + "/task/" + e->d_name + "/status");
      for (std::string l; std::getline(st, l);) {
        if (l.rfind("voluntary_ctxt_switches:", 0) == 0) vol += std::stoull(l.substr(24));
        if (l.rfind("nonvoluntary_ctxt_switches:", 0) == 0) invol += std::stoull(l.substr(27));
      }
    }
    closedir(d);
  }
  points_.push_back(CounterPoint{now_ns, p->pid, -1, Name("rss_bytes"), rss_bytes});
  points_.push_back(CounterPoint{now_ns, p->pid, -1, Name("threads"), threads});
  if (p->have_prev && now_ns > p->prev_ts) {
    const double dt_s = static_cast<double>(now_ns - p->prev_ts) / 1e9;
    const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
    points_.push_back(CounterPoint{now_ns, p->pid, -1, Name("cpu_utilization_percent"),
                                   100.0 * static_cast<double>(ticks - p->prev_cpu_ticks) / hz / dt_s});
    points_.push_back(CounterPoint{now_ns, p->pid, -1, Name("voluntary_context_switches_per_s"),
                                   static_cast<double>(vol >= p->prev_vol ? vol - p->prev_vol : 0) / dt_s});
    points_.push_back(CounterPoint{now_ns, p->pid, -1, Name("involuntary_context_switches_per_s"),
                                   static_cast<double>(invol >= p->prev_invol ? invol - p->prev_invol : 0) / dt_s});
  }
  p->have_prev = true;
  p->prev_ts = now_ns;
  p->prev_cpu_ticks = ticks;
  p->prev_vol = vol;
  p->prev_invol = invol;
}

void CounterSampler::SampleGpus(int64_t now_ns) {
  for (size_t i = 0; i < nvml_->devices().size(); ++i) {
    Nvml::Device d = nvml_->devices()[i];
    const int32_t dev = static_cast<int32_t>(i);
    Nvml::Utilization u;
    if (nvml_->Util(d, &u)) {
      points_.push_back(CounterPoint{now_ns, -1, dev, Name("gpu_utilization_percent"), static_cast<double>(u.gpu)});
    }
    Nvml::Memory m;
    if (nvml_->Mem(d, &m)) {
      points_.push_back(CounterPoint{now_ns, -1, dev, Name("gpu_memory_used_bytes"), static_cast<double>(m.used)});
    }
    unsigned mw = 0;
    if (nvml_->PowerMilliwatts(d, &mw)) {
      points_.push_back(CounterPoint{now_ns, -1, dev, Name("gpu_power_watts"), mw / 1000.0});
    }
  }
}

}  // namespace aiprof
