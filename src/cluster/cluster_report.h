// The reduce's result as one document (ClusterToDocument: summary, slowest
// rank, slow ranks' ops, steps, ranks, problems, links) rendered by the
// shared renderers (src/render/renderers.h) as Markdown, HTML or text; JSON
// is the published schema (docs/cluster.md), written by ClusterToJson
// and carried as the document's machine form. Trace strings are escaped by
// each renderer. Output is deterministic: the same digests give
// byte-identical reports.
#ifndef AIPROF_SRC_CLUSTER_CLUSTER_REPORT_H_
#define AIPROF_SRC_CLUSTER_CLUSTER_REPORT_H_

#include <string>
#include <vector>

#include "src/cluster/cluster_reduce.h"
#include "src/render/document.h"
#include "src/render/format.h"

namespace aiprof {

std::string ClusterToJson(const ClusterResult& r);
render::Document ClusterToDocument(const ClusterResult& r);
std::string ClusterToMarkdown(const ClusterResult& r);
std::string ClusterToHtml(const ClusterResult& r);

// The formats of the cluster report: json (the default), md, html, text.
std::vector<render::OutputFormat> ClusterFormats();
// By the output's file name (render/format.h): .json (and standard output),
// .md, .html/.htm, .txt; else an error naming the path.
StatusOr<std::string> RenderClusterReport(const ClusterResult& r, const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_CLUSTER_CLUSTER_REPORT_H_
