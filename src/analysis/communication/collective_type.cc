#include "src/analysis/communication/collective_type.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace aiprof {

const char* CollectiveTypeName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllReduce: return "all_reduce";
    case CollectiveType::kAllGather: return "all_gather";
    case CollectiveType::kReduceScatter: return "reduce_scatter";
    case CollectiveType::kAllToAll: return "all_to_all";
    case CollectiveType::kBroadcast: return "broadcast";
    case CollectiveType::kReduce: return "reduce";
    case CollectiveType::kSendRecv: return "send_recv";
    case CollectiveType::kBarrier: return "barrier";
    case CollectiveType::kOther: return "other";
  }
  return "other";
}

const char* CollectiveTypeNameOfByte(uint8_t type) {
  return type < kCollectiveTypeCount ? CollectiveTypeName(static_cast<CollectiveType>(type)) : "other";
}

CollectiveType ClassifyCollective(std::string_view name) {
  // Lower-cased, without '_' or '-'; bounded so a huge name costs nothing.
  std::string folded;
  folded.reserve(std::min<size_t>(name.size(), 96));
  for (char c : name.substr(0, 96)) {
    if (c == '_' || c == '-') continue;
    folded.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  // Order matters: a pattern must come before any pattern it contains.
  static constexpr std::array<std::pair<std::string_view, CollectiveType>, 11> kPatterns = {{
      {"allreduce", CollectiveType::kAllReduce},
      {"reducescatter", CollectiveType::kReduceScatter},
      {"allgather", CollectiveType::kAllGather},
      {"alltoall", CollectiveType::kAllToAll},
      {"broadcast", CollectiveType::kBroadcast},
      {"sendrecv", CollectiveType::kSendRecv},
      {"receive", CollectiveType::kSendRecv},
      {"recv", CollectiveType::kSendRecv},
      {"send", CollectiveType::kSendRecv},
      {"barrier", CollectiveType::kBarrier},
      {"reduce", CollectiveType::kReduce},
  }};
  for (const auto& [pattern, type] : kPatterns) {
    if (folded.find(pattern) != std::string::npos) return type;
  }
  return CollectiveType::kOther;
}

double BusBandwidthFactor(CollectiveType type, int64_t ranks) {
  if (ranks < 1) return 1;
  const double n = static_cast<double>(ranks);
  switch (type) {
    case CollectiveType::kAllReduce: return 2 * (n - 1) / n;
    case CollectiveType::kAllGather:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kAllToAll: return (n - 1) / n;
    default: return 1;
  }
}

}  // namespace aiprof
