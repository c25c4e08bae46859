// The reduce's result as JSON (everything), Markdown or HTML (the findings
// and the tables a performance engineer reads first). Trace strings (hosts,
// paths, groups, op names) are escaped for each format (src/render/escape.h).
// Output is deterministic: the same digests give byte-identical reports.
#ifndef AIPROF_SRC_CLUSTER_CLUSTER_REPORT_H_
#define AIPROF_SRC_CLUSTER_CLUSTER_REPORT_H_

#include <string>

#include "src/cluster/cluster_reduce.h"

namespace aiprof {

std::string ClusterToJson(const ClusterResult& r);
std::string ClusterToMarkdown(const ClusterResult& r);
std::string ClusterToHtml(const ClusterResult& r);

// By the output's extension: .json, .md, .html (else an error).
StatusOr<std::string> RenderClusterReport(const ClusterResult& r, const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_CLUSTER_REPORT_H_
