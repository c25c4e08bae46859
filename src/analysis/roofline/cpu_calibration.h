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
#include <string>

#include "src/analysis/roofline/device_peaks.h"

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

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_CPU_CALIBRATION_H_
