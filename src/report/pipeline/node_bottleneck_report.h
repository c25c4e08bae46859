// `aiprof node-bottleneck` as a document: the pipeline stages (latency share,
// working versus waiting, the largest and the limiting stage) and the stage
// graph. Its JSON is the published form (pipeline_ns, stages, top_stage,
// limiting_stage, edges), unchanged; the other formats come from the
// renderers (src/render/renderers.h).
#ifndef AIPROF_SRC_REPORT_PIPELINE_NODE_BOTTLENECK_REPORT_H_
#define AIPROF_SRC_REPORT_PIPELINE_NODE_BOTTLENECK_REPORT_H_

#include <string_view>

#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/render/document.h"

namespace aiprof {

// `source`: the input path as given, named in the title.
render::Document NodeBottleneckToDocument(const PipelineResult& result, std::string_view source = {});

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_PIPELINE_NODE_BOTTLENECK_REPORT_H_
