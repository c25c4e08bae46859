// `aiprof calibrate [--name NAME] [--devices FILE]`: measures this machine's
// CPU peak FLOP/s and memory bandwidth (src/analysis/roofline/cpu_calibration.h)
// and saves them as a devices-file entry, so CPU traces get a real roofline.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "src/analysis/roofline/cpu_calibration.h"
#include "src/analysis/roofline/device_peaks.h"
#include "src/cli/command.h"

namespace aiprof {
namespace {

class CalibrateCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("calibrate", "Measure this CPU's peak FLOP/s and memory bandwidth; save them as a roofline device");
    sub->add_option("--name", name_, "Device name to save (default cpu-local, which CPU traces use when no --device is given)");
    sub->add_option("--devices", file_, "Devices file to update (default: $AIPROF_DEVICES, else ~/.config/aiprof/devices.yaml)");
    sub->add_option("--seconds", seconds_, "Seconds per FLOP/s measurement (fp32, fp64)")->check(CLI::Range(0.05, 5.0));
    sub->add_flag("--no-save", no_save_, "Print the figures only");
    sub->add_flag("--even-if-busy", even_if_busy_,
                  "Measure and save even while other tasks run (by default it does not measure then, and peaks "
                  "measured while such tasks started, likely low, are printed and not saved; "
                  "AIPROF_CALIBRATE=save does the same)");
    return sub;
  }

  Status Run() override {
    const int busy_before = OtherRunnableTasks();
    const bool save_anyway = even_if_busy_ || CalibrationSavesWhenBusy();  // AIPROF_CALIBRATE=save
    if (!no_save_ && !save_anyway && busy_before >= BusyTasksLimit()) {
      // The seconds of a measurement that would not be saved are not spent.
      return ErrStatus("not measuring: " + std::to_string(busy_before) +
                       " other tasks are running, so the peaks would be low; run `aiprof calibrate` again on an idle "
                       "machine, or pass --even-if-busy to measure and save them anyway");
    }
    CpuCalibration c = CalibrateCpu(seconds_);
    const int busy = std::max(busy_before, OtherRunnableTasks());
    DevicePeaks d = CalibrationToDevice(c, name_);
    std::printf("%s: fp32 peak %.1f GFLOP/s, fp64 peak %.1f GFLOP/s (%s, %u threads); memory bandwidth %.2f GB/s "
                "(triad, 3 x %zu MiB); memory %.1f GiB; measured in %.1f s\n",
                name_.c_str(), c.fp32_flops_per_second * 1e-9, c.fp64_flops_per_second * 1e-9, c.method.c_str(),
                c.threads, c.memory_bandwidth_bytes_per_second * 1e-9, c.triad_array_bytes >> 20,
                c.memory_capacity_bytes / (1024.0 * 1024 * 1024), c.seconds);
    if (!(c.fp32_flops_per_second > 0) || !(c.memory_bandwidth_bytes_per_second > 0)) {
      return ErrStatus("calibration measured zero; nothing saved");
    }
    // Peaks measured beside other work are low by however much it took: saved,
    // every later CPU roofline would read utilisations above 100%.
    const bool disturbed = busy >= BusyTasksLimit();
    if (disturbed) {
      std::printf(
          "measured while %d other task%s ran (this machine has %u hardware threads): the peaks are likely low\n", busy,
          busy == 1 ? "" : "s", std::thread::hardware_concurrency());
    }
    if (no_save_) return OkStatus();
    if (disturbed && !save_anyway) {
      return ErrStatus(
          "not saved: measured beside other work; run `aiprof calibrate` again on an idle machine, or pass "
          "--even-if-busy to save these peaks anyway");
    }
    std::string path = file_;
    if (path.empty()) {
      const char* env = std::getenv("AIPROF_DEVICES");
      path = env != nullptr && *env ? env : UserDevicesFile();
    }
    if (path.empty()) return ErrStatus("no devices file: pass --devices FILE (HOME is not set)");
    RETURN_IF_ERROR(SaveDevice(d, path));
    std::printf("saved as '%s' in %s\n", name_.c_str(), path.c_str());
    return OkStatus();
  }

 private:
  std::string name_ = kCalibratedCpuName;
  std::string file_;
  double seconds_ = 0.5;
  bool no_save_ = false;
  bool even_if_busy_ = false;
};

}  // namespace

std::unique_ptr<Command> NewCalibrateCommand() { return std::make_unique<CalibrateCommand>(); }

}  // namespace aiprof
