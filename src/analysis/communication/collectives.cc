#include "src/analysis/communication/collectives.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "src/analysis/common/op_args.h"

namespace aiprof {

int ScalarTypeBytes(std::string_view t) {
  if (t == "Float" || t == "Int" || t == "ComplexHalf") return 4;
  if (t == "Double" || t == "Long" || t == "ComplexFloat") return 8;
  if (t == "Half" || t == "BFloat16" || t == "Short") return 2;
  if (t == "Byte" || t == "Char" || t == "Bool" || t.starts_with("Float8")) return 1;
  if (t == "ComplexDouble") return 16;
  return 0;
}

namespace {

// Message size of a Kineto NCCL kernel, or -1.
double MessageBytes(const OpArgReader& args, uint32_t s) {
  std::optional<double> in = args.Number(s, "In msg nelems"), out = args.Number(s, "Out msg nelems");
  std::optional<std::string_view> dtype = args.String(s, "dtype");
  if ((!in && !out) || !dtype) return -1;
  const int element_bytes = ScalarTypeBytes(*dtype);
  if (element_bytes == 0) return -1;
  return std::max(in.value_or(0), out.value_or(0)) * element_bytes;
}

// The group of slice `s`: Process Group Name arg, else the HCCL track's name.
StringId GroupOf(const Trace& trace, std::optional<StringId> pg_key, uint32_t s) {
  if (pg_key) {
    const Arg* a = trace.FindSliceArg(s, *pg_key);
    if (a != nullptr && a->type == ArgType::kString) return StringId{a->str};
  }
  if (trace.Str(trace.slices.category[s]) == "hccl") return trace.tracks.name[trace.slices.track[s]];
  return StringId{};
}

bool IsHostCollectiveSpan(const Trace& trace, uint32_t s) {
  if (trace.slices.kind[s] != EventKind::kUserAnnotation) return false;
  std::string_view name = trace.Str(trace.slices.name[s]);
  return name.starts_with("gloo:");
}

std::vector<CollectiveSlice> Collect(const Trace& trace, bool host_spans) {
  std::vector<CollectiveSlice> out;
  OpArgReader args(trace);
  const std::optional<StringId> pg_key = trace.strings.Find("Process Group Name");
  const std::optional<StringId> name_key = trace.strings.Find("Collective name");
  for (uint32_t s = 0; s < trace.slices.size(); ++s) {
    if (host_spans ? !IsHostCollectiveSpan(trace, s) : trace.slices.kind[s] != EventKind::kCollective) continue;
    CollectiveSlice c;
    c.slice = s;
    const uint32_t track = trace.slices.track[s];
    c.rank = trace.tracks.rank[track];
    c.device = trace.tracks.device[track];
    std::string_view type_name = trace.Str(trace.slices.name[s]);
    if (name_key) {
      const Arg* a = trace.FindSliceArg(s, *name_key);
      if (a != nullptr && a->type == ArgType::kString) type_name = trace.Str(StringId{a->str});
    }
    c.type = ClassifyCollective(type_name);
    c.group = GroupOf(trace, pg_key, s);
    c.bytes = MessageBytes(args, s);
    c.group_size = static_cast<int64_t>(args.Number(s, "Group size").value_or(0));
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<CollectiveSlice> CollectCollectives(const Trace& trace) {
  std::vector<CollectiveSlice> device = Collect(trace, /*host_spans=*/false);
  return device.empty() ? Collect(trace, /*host_spans=*/true) : device;
}

}  // namespace aiprof
