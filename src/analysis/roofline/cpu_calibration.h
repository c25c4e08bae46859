// Measures this machine's CPU peaks for the roofline (`aiprof calibrate`).
//
// Peak FLOP/s: every hardware thread runs independent chains of fused
// multiply-adds on SIMD registers (10 chains of 8 fp32 / 4 fp64 lanes with
// AVX2+FMA, enough to cover the FMA latency on two ports; a scalar std::fma
// fallback elsewhere) for a fixed time; FLOP/s = 2 · FMAs / wall time. This
// is the AVX2 peak: AVX-512 machines can go higher.
// Memory bandwidth: a STREAM triad a[i] = b[i] + s·c[i] over three double
// arrays, each ≥ 4 × the last-level cache (at least 32 MiB), split across
// all hardware threads; best of several passes; 24 bytes per element counted
// (as STREAM does, not counting write-allocate traffic).
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_CPU_CALIBRATION_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_CPU_CALIBRATION_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "src/analysis/roofline/device_peaks.h"
#include "src/base/status.h"

namespace aiprof {

struct CpuCalibration {
  double fp32_flops_per_second = 0;
  double fp64_flops_per_second = 0;
  double memory_bandwidth_bytes_per_second = 0;
  double memory_capacity_bytes = 0;
  unsigned threads = 0;
  size_t triad_array_bytes = 0;
  std::string method;  // "avx2-fma" or "scalar-fma"
  double seconds = 0;  // wall time of the whole calibration
};

// Runs both measurements: `flops_seconds` per precision, then the triad.
CpuCalibration CalibrateCpu(double flops_seconds);

// The devices-file entry for a calibration.
DevicePeaks CalibrationToDevice(const CpuCalibration& c, const std::string& name);

// Puts `device` into the devices file `path` (its other entries kept, the
// file and its folder created when missing), written atomically.
Status SaveDevice(const DevicePeaks& device, const std::string& path);

// Runnable tasks other than the caller, from /proc/loadavg's "R/T" field
// (R counts the reader itself); 0 when unreadable.
int OtherRunnableTasks();
// The count of other runnable tasks, before or after a measurement, at which
// its peaks are taken as low (measured beside other work): half the hardware
// threads, at least 1. Auto-calibration neither uses nor saves such peaks;
// `aiprof calibrate` does not save them unless asked (--even-if-busy).
int BusyTasksLimit();

// Calibration on first need: a CPU-only trace whose roofline finds no
// "cpu-local" entry measures this machine once, saves the entry in the
// user's devices file (UserDevicesFile(): later runs read it from there) and
// uses it (measured on a busy machine: not used at all, see save_when_busy). Off by default, so a library caller never
// pays a measurement or a file write it did not ask for; the CLI turns it on (`--no-calibrate` and AIPROF_CALIBRATE=0
// keep it off).
struct AutoCalibration {
  bool enabled = false;
  double flops_seconds = 0.25;  // per precision (AIPROF_CALIBRATE_SECONDS); the triad adds ~1.8 s here
  // Saved even when other tasks ran beside the measurement (at least half as
  // many as hardware threads, before or after it): by default such peaks are
  // neither used nor saved, since low peaks put utilisations above 100% and
  // findings that depend on the load of the moment, and kept they would
  // flatter every later trace.
  bool save_when_busy = false;
  // Told once, before the measurement and after it (where it was saved).
  std::function<void(std::string_view)> notify;
};
void SetAutoCalibration(AutoCalibration policy);
// The policy's save_when_busy (the CLI sets it from AIPROF_CALIBRATE=save):
// `aiprof calibrate` honours it as --even-if-busy.
bool CalibrationSavesWhenBusy();

// The "cpu-local" peaks measured by this process on first need (and saved),
// or nullopt when auto-calibration is off. Measures at most once per process;
// concurrent callers wait for the one measurement.
std::optional<DevicePeaks> CalibrateOnFirstNeed();

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_CPU_CALIBRATION_H_
