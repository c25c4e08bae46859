#include "src/analysis/roofline/device_peaks.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace aiprof {
namespace {

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

StatusOr<DevicePeaks> ParseEntry(const YAML::Node& n, std::string_view origin) {
  DevicePeaks d;
  if (!n.IsMap() || !n["name"]) return ErrStatus(std::string(origin) + ": a device entry has no name");
  d.name = n["name"].as<std::string>();
  auto where = std::string(origin) + ": device '" + d.name + "': ";
  if (n["aliases"]) {
    for (const auto& a : n["aliases"]) d.aliases.push_back(a.as<std::string>());
  }
  const YAML::Node peaks = n["peak_flops_per_second"];
  if (!peaks || !peaks.IsMap()) return ErrStatus(where + "peak_flops_per_second (a map of precision: FLOP/s) missing");
  for (const auto& kv : peaks) {
    double v = kv.second.as<double>();
    if (!(v > 0)) return ErrStatus(where + "peak for " + kv.first.as<std::string>() + " must be > 0");
    d.peak_flops_per_second[kv.first.as<std::string>()] = v;
  }
  if (!n["memory_bandwidth_bytes_per_second"]) return ErrStatus(where + "memory_bandwidth_bytes_per_second missing");
  d.memory_bandwidth_bytes_per_second = n["memory_bandwidth_bytes_per_second"].as<double>();
  if (!(d.memory_bandwidth_bytes_per_second > 0)) return ErrStatus(where + "memory bandwidth must be > 0");
  if (n["memory_capacity_bytes"]) d.memory_capacity_bytes = n["memory_capacity_bytes"].as<double>();
  if (n["source"]) d.source = n["source"].as<std::string>();
  return d;
}

std::optional<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string BuiltInDevicesFile() {
  for (const char* dir : {AIPROF_INSTALLED_DATA_DIR, AIPROF_SOURCE_DIR "/data"}) {
    std::string p = std::string(dir) + "/devices.yaml";
    std::error_code ec;
    if (std::filesystem::exists(p, ec)) return p;
  }
  return "";
}

}  // namespace

std::optional<double> DevicePeaks::PeakFlops(Precision p) const {
  auto it = peak_flops_per_second.find(PrecisionName(p == Precision::kOther ? Precision::kFp32 : p));
  if (it == peak_flops_per_second.end()) return std::nullopt;
  return it->second;
}

StatusOr<std::vector<DevicePeaks>> ParseDevicesYaml(std::string_view text, std::string_view origin) {
  std::vector<DevicePeaks> out;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    if (root.IsNull()) return out;
    if (!root.IsMap() || !root["devices"] || !root["devices"].IsSequence()) {
      return ErrStatus(std::string(origin) + ": expected a top-level 'devices:' list");
    }
    for (const auto& n : root["devices"]) {
      ASSIGN_OR_RETURN(DevicePeaks d, ParseEntry(n, origin));
      UpsertDevice(std::move(d), &out);
    }
  } catch (const YAML::Exception& e) {
    return ErrStatus(std::string(origin) + ": " + e.what());
  }
  return out;
}

StatusOr<std::vector<DevicePeaks>> ReadDevicesFile(const std::string& path) {
  std::optional<std::string> text = ReadText(path);
  if (!text) return ErrStatus("cannot read devices file " + path);
  return ParseDevicesYaml(*text, path);
}

std::string UserDevicesFile() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x != nullptr && *x) return std::string(x) + "/aiprof/devices.yaml";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h) return std::string(h) + "/.config/aiprof/devices.yaml";
  return "";
}

StatusOr<std::vector<DevicePeaks>> LoadDevices(const std::string& explicit_file) {
  std::string base = explicit_file;
  if (base.empty()) {
    const char* env = std::getenv("AIPROF_DEVICES");
    base = env != nullptr && *env ? env : BuiltInDevicesFile();
  }
  std::vector<DevicePeaks> out;
  if (!base.empty()) {
    ASSIGN_OR_RETURN(out, ReadDevicesFile(base));
  }
  std::string user = UserDevicesFile();
  std::error_code ec;
  if (!user.empty() && user != base && std::filesystem::exists(user, ec)) {
    ASSIGN_OR_RETURN(std::vector<DevicePeaks> mine, ReadDevicesFile(user));
    for (DevicePeaks& d : mine) UpsertDevice(std::move(d), &out);
  }
  if (out.empty()) return ErrStatus("no devices file found (data/devices.yaml, $AIPROF_DEVICES or --devices)");
  return out;
}

const DevicePeaks* FindDevice(const std::vector<DevicePeaks>& devices, std::string_view name) {
  std::string want = LowerCopy(name);
  for (const DevicePeaks& d : devices) {
    if (LowerCopy(d.name) == want) return &d;
    for (const std::string& a : d.aliases) {
      if (LowerCopy(a) == want) return &d;
    }
  }
  return nullptr;
}

const DevicePeaks* DetectDevice(const std::vector<DevicePeaks>& devices,
                                const std::map<std::string, std::string>& metadata) {
  std::string text;
  for (const auto& [key, value] : metadata) {
    bool gpu_name = key.rfind("gpu.", 0) == 0 && key.size() > 5 && key.compare(key.size() - 5, 5, ".name") == 0;
    if (key == "device_properties" || gpu_name || key == "device_name") text += LowerCopy(value) + "\n";
  }
  if (text.empty()) return nullptr;
  const DevicePeaks* best = nullptr;
  size_t best_len = 0;
  auto consider = [&](const DevicePeaks& d, const std::string& n) {
    std::string l = LowerCopy(n);
    if (l.size() > best_len && text.find(l) != std::string::npos) best = &d, best_len = l.size();
  };
  for (const DevicePeaks& d : devices) {
    consider(d, d.name);
    for (const std::string& a : d.aliases) consider(d, a);
  }
  return best;
}

void UpsertDevice(DevicePeaks device, std::vector<DevicePeaks>* devices) {
  for (DevicePeaks& d : *devices) {
    if (LowerCopy(d.name) == LowerCopy(device.name)) {
      d = std::move(device);
      return;
    }
  }
  devices->push_back(std::move(device));
}

std::string DevicesToYaml(const std::vector<DevicePeaks>& devices) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const DevicePeaks& d : devices) {
    e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << d.name;
    if (!d.aliases.empty()) e << YAML::Key << "aliases" << YAML::Value << YAML::Flow << d.aliases;
    e << YAML::Key << "peak_flops_per_second" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : d.peak_flops_per_second) e << YAML::Key << k << YAML::Value << v;
    e << YAML::EndMap;
    e << YAML::Key << "memory_bandwidth_bytes_per_second" << YAML::Value << d.memory_bandwidth_bytes_per_second;
    if (d.memory_capacity_bytes > 0) e << YAML::Key << "memory_capacity_bytes" << YAML::Value << d.memory_capacity_bytes;
    if (!d.source.empty()) e << YAML::Key << "source" << YAML::Value << d.source;
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

}  // namespace aiprof
