// Device peaks for the roofline: peak FLOP/s per precision, memory bandwidth
// and capacity, read from YAML (data/devices.yaml; users add their own, and
// `aiprof calibrate` writes a measured entry for this machine's CPU).
//
// File format:
//   devices:
//     - name: A100-SXM4-80GB
//       aliases: [A100]                 # optional, matched case-insensitively
//       peak_flops_per_second: {fp64: 9.7e12, fp32: 19.5e12, fp16: 312e12, bf16: 312e12, int8: 624e12}
//       memory_bandwidth_bytes_per_second: 2.039e12
//       memory_capacity_bytes: 85899345920
//       source: "NVIDIA A100 datasheet"  # optional
//
// Lookup order (LoadDevices): an explicit file, else $AIPROF_DEVICES, else the
// installed data/devices.yaml, else the source tree's; then the user's file
// (UserDevicesFile(), where calibrate writes by default) is merged on top, its
// entries replacing built-in ones of the same name.
#ifndef AIPROF_SRC_ANALYSIS_ROOFLINE_DEVICE_PEAKS_H_
#define AIPROF_SRC_ANALYSIS_ROOFLINE_DEVICE_PEAKS_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/analysis/roofline/op_cost.h"
#include "src/base/status.h"

namespace aiprof {

// The entry `aiprof calibrate` writes by default, used for CPU-only traces.
inline constexpr const char* kCalibratedCpuName = "cpu-local";

struct DevicePeaks {
  std::string name;
  std::vector<std::string> aliases;
  std::map<std::string, double> peak_flops_per_second;  // "fp32", "fp16", "bf16", "int8", "fp64"
  double memory_bandwidth_bytes_per_second = 0;
  double memory_capacity_bytes = 0;  // 0 = unknown
  std::string source;

  // Peak for `p`; kOther uses fp32. nullopt when the file gives none.
  std::optional<double> PeakFlops(Precision p) const;
};

// Parses the YAML text of a devices file; `origin` names it in errors.
StatusOr<std::vector<DevicePeaks>> ParseDevicesYaml(std::string_view text, std::string_view origin);
// Reads one devices file.
StatusOr<std::vector<DevicePeaks>> ReadDevicesFile(const std::string& path);
// The built-in/explicit file (see the lookup order above) plus the user's file.
StatusOr<std::vector<DevicePeaks>> LoadDevices(const std::string& explicit_file);
// $XDG_CONFIG_HOME/aiprof/devices.yaml, else $HOME/.config/aiprof/devices.yaml.
std::string UserDevicesFile();

// The entry whose name or alias equals `name` (any case), or nullptr.
const DevicePeaks* FindDevice(const std::vector<DevicePeaks>& devices, std::string_view name);
// A device named in the trace metadata (device_properties, gpu.N.name): the
// entry whose name or alias occurs in it (longest match), or nullptr.
const DevicePeaks* DetectDevice(const std::vector<DevicePeaks>& devices,
                                const std::map<std::string, std::string>& metadata);

// Serialises entries in the file format above.
std::string DevicesToYaml(const std::vector<DevicePeaks>& devices);
// Adds `device` to `devices`, replacing an entry of the same name.
void UpsertDevice(DevicePeaks device, std::vector<DevicePeaks>* devices);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_ROOFLINE_DEVICE_PEAKS_H_
