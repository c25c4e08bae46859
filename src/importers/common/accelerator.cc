#include "src/importers/common/accelerator.h"

#include <cctype>
#include <vector>

#include "src/base/ascii.h"

namespace aiprof {
namespace {

// "MTIA 17" → "MTIA"; "GPU" → "GPU"; "" when the rest is not a number.
std::string_view DeviceWord(std::string_view name) {
  size_t end = 0;
  while (end < name.size() && std::isalpha(static_cast<unsigned char>(name[end]))) ++end;
  std::string_view word = name.substr(0, end), rest = name.substr(end);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  for (char c : rest) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return {};
  }
  return word;
}

// The family a runtime/driver call name belongs to, or "".
std::string_view AcceleratorOfRuntimeName(std::string_view n) {
  if (n.starts_with("hip") || n.starts_with("hsa_")) return "rocm";
  if (n.starts_with("cuda") || n.starts_with("cu") || n.starts_with("nccl")) return "cuda";
  if (n.starts_with("acl")) return "ascend";
  if (n.starts_with("ze") || n.starts_with("ur") || n.starts_with("sycl")) return "xpu";
  if (n.starts_with("synLaunch") || n.starts_with("syn")) return "hpu";
  return {};
}

// The family an event category names, or "".
std::string_view AcceleratorOfCategory(std::string_view c) {
  if (c.starts_with("mtia")) return "mtia";
  if (c.starts_with("hpu") || ContainsIgnoreCase(c, "habana") || ContainsIgnoreCase(c, "gaudi")) return "hpu";
  if (c.starts_with("xpu")) return "xpu";
  return {};
}

struct Verdict {
  std::string family, evidence;
  void Offer(std::string_view f, std::string why) {
    if (family.empty() && !f.empty()) {
      family = std::string(f);
      evidence = std::move(why);
    }
  }
};

}  // namespace

bool IsDeviceProcessName(std::string_view name) {
  std::string_view w = DeviceWord(name);
  for (std::string_view d : {"GPU", "MTIA", "HPU", "XPU", "NPU", "TPU"}) {
    if (EqualsIgnoreCase(w, d)) return true;
  }
  return false;
}

std::string_view AcceleratorOfProcessName(std::string_view name) {
  std::string_view w = DeviceWord(name);
  if (EqualsIgnoreCase(w, "MTIA")) return "mtia";
  if (EqualsIgnoreCase(w, "HPU")) return "hpu";
  if (EqualsIgnoreCase(w, "XPU")) return "xpu";
  if (EqualsIgnoreCase(w, "NPU")) return "ascend";
  return {};
}

void RecognizeAccelerator(Trace* trace) {
  const SliceTable& s = trace->slices;
  Verdict v;
  // Per-track facts: does a device process hold modelled activity?
  std::vector<uint8_t> track_device_activity(trace->tracks.size(), 0), track_has_slices(trace->tracks.size(), 0);
  std::vector<uint8_t> seen_name(trace->strings.size(), 0), seen_category(trace->strings.size(), 0);
  bool any_device_activity = false;
  std::string unmodelled_category;
  for (size_t i = 0; i < s.size(); ++i) {
    track_has_slices[s.track[i]] = 1;
    if (IsDeviceActivity(s.kind[i])) {
      track_device_activity[s.track[i]] = 1;
      any_device_activity = true;
    }
    uint32_t c = s.category[i].raw;
    if (c < seen_category.size() && !seen_category[c]) {
      seen_category[c] = 1;
      std::string_view cat = trace->Str(s.category[i]);
      std::string_view f = AcceleratorOfCategory(cat);
      v.Offer(f, "event category " + std::string(cat));
      if (!f.empty() && !IsDeviceActivity(s.kind[i]) && unmodelled_category.empty()) unmodelled_category = cat;
    }
    if (s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver && s.kind[i] != EventKind::kSync) continue;
    uint32_t n = s.name[i].raw;
    if (n >= seen_name.size() || seen_name[n]) continue;
    seen_name[n] = 1;
    std::string_view name = trace->Str(s.name[i]);
    v.Offer(AcceleratorOfRuntimeName(name), "runtime call " + std::string(name.substr(0, 64)));
  }
  std::string unmodelled_process;
  for (size_t t = 0; t < trace->tracks.size(); ++t) {
    std::string_view pname = trace->Str(trace->tracks.process_name[t]);
    if (!IsDeviceProcessName(pname)) continue;
    v.Offer(AcceleratorOfProcessName(pname), "device process " + std::string(pname));
    if (track_has_slices[t] && !track_device_activity[t] && unmodelled_process.empty()) {
      unmodelled_process = pname;
    }
  }
  auto& md = trace->metadata;
  if (md.count("hip_runtime_version") || md.count("roctracer_version")) v.Offer("rocm", "profiler key hip_runtime_version");
  if (md.count("cuda_runtime_version") || md.count("cupti_version")) v.Offer("cuda", "profiler key cuda_runtime_version");
  std::string unmodelled = !unmodelled_process.empty() ? unmodelled_process : unmodelled_category;
  if (v.family.empty() && (!unmodelled.empty() || any_device_activity)) {
    v.family = "unknown";
    v.evidence = unmodelled.empty() ? "device activity of no recognised runtime" : "device events " + unmodelled;
  }
  if (v.family.empty()) return;
  md["accelerator"] = v.family;
  md["accelerator_evidence"] = v.evidence;
  if (!any_device_activity && !unmodelled.empty()) md["accelerator_unmodelled"] = unmodelled;
}

}  // namespace aiprof
