// torch_npu's communication.json and communication_matrix.json.
//
// communication.json: step → p2p|collective → "op@group" → {Communication
// Time Info: {Elapse, Transit, Wait, Synchronization, Idle Time(ms), ratios},
// Communication Bandwidth Info: {RDMA|HCCS|PCIE|SDMA|SIO: {Transit Size(MB),
// Transit Time(ms), Bandwidth(GB/s), ...}}}.
// communication_matrix.json: step → p2p|collective → "op@group" →
// "src-dst" link → {Transport Type, Transit Size(MB), Transit Time(ms),
// Bandwidth(GB/s), Op Name}.
// Each numeric or text leaf becomes one aggregate op metric: op is
// "<step>/<op@group>" (plus "/<link>" for the matrix), key is the path below
// it joined with '/', e.g. "Communication Time Info/Wait Time(ms)".
// Size Distribution histograms are skipped.
#ifndef AIPROF_SRC_IMPORTERS_ASCEND_COMMUNICATION_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_ASCEND_COMMUNICATION_IMPORTER_H_

#include <cstdint>
#include <string>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

Status ImportCommunicationJson(const std::string& path, int32_t rank, bool is_matrix, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_ASCEND_COMMUNICATION_IMPORTER_H_
