// `aiprof roofline TRACE [--device NAME] [--devices FILE] [-o summary.csv]`:
// per-op roofline (src/analysis/roofline/ops_to_roofline.h) as CSV, one row
// per (op name, precision, where bytes came from), the seed's four columns
// first. Bytes_Source says whether bytes were measured (pmu: Ascend PMU
// main-memory bandwidth × core time) or estimated from shapes; Level whether
// the row is a host op or a device task with a kernel_details/op_summary row.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/analysis/roofline/roofline_analysis.h"
#include "src/cli/capture_trace_flag.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/cli/phase_timer.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

std::string Num(const std::optional<double>& v, double scale, const char* fmt = "%.6g") {
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, *v * scale);
  return buf;
}

std::string FlopsSource(const RooflineRow& row) {
  if (!row.flops_known) return "unavailable";
  if (row.flops_from_trace == row.count) return "profiler";
  return row.flops_from_trace == 0 ? "shapes" : "mixed";
}

// Which figures of the row are our estimates rather than the profiler's.
std::string Estimated(const RooflineRow& row) {
  bool flops = row.flops_known && row.flops_from_trace != row.count;
  bool bytes = row.bytes_source == BytesSource::kShapes;
  if (flops && bytes) return "flops+bytes";
  return flops ? "flops" : bytes ? "bytes" : "none";
}

}  // namespace

// Visible for testing.
std::string RooflineToCsv(const RooflineResult& r) {
  std::string out =
      "Operator,Arithmetic_Intensity,AI_Utilization,Memory_Bound,Precision,Family,Count,Total_Time_us,FLOPs,Bytes,"
      "Achieved_GFLOPS,Achieved_GBps,Compute_Utilization,Bandwidth_Utilization,Bound,Estimated,FLOPs_Source,"
      "Output_Assumed,Bytes_Source,Level\n";
  const DevicePeaks* d = r.device ? &*r.device : nullptr;
  for (const RooflineRow& row : r.rows) {
    RooflinePoint p = EvaluateRow(row, d);
    std::string mem = p.bound == Bound::kUnknown ? "" : p.bound == Bound::kMemory ? "Yes" : "No";
    std::string ai_util = p.ai_utilization ? Num(p.ai_utilization, 100, "%.1f") + "%" : "";
    std::string flops = row.flops_known ? Num(row.flops, 1, "%.0f") : "";
    out += CsvField(row.name) + "," + Num(p.arithmetic_intensity_flops_per_byte, 1, "%.4g") + "," + ai_util + "," +
           mem + "," + PrecisionName(row.precision) + "," + OpFamilyName(row.family) + "," +
           std::to_string(row.count) + "," + Num(static_cast<double>(row.time_ns), 1e-3, "%.3f") + "," +
           flops + "," + Num(row.bytes, 1, "%.0f") + "," +
           Num(p.achieved_flops_per_second, 1e-9, "%.4g") + "," + Num(p.achieved_bytes_per_second, 1e-9, "%.4g") +
           "," + Num(p.compute_utilization, 1, "%.4g") + "," + Num(p.bandwidth_utilization, 1, "%.4g") + "," +
           BoundName(p.bound) + "," + Estimated(row) + "," + FlopsSource(row) + "," + std::to_string(row.output_assumed) +
           "," + BytesSourceName(row.bytes_source) + "," + (row.device_task ? "device_task" : "host_op") + "\n";
  }
  return out;
}

namespace {

class RooflineCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("roofline", "Per-op roofline: FLOPs, bytes, arithmetic intensity, bound (CSV)");
    in_.Add(sub, "Trace file or .aiprof (recorded with shapes: record_shapes=True)");
    AddDeviceFlag(sub, &options_.analyze);
    AddDevicesFileFlag(sub, &options_.analyze);
    captures_.Add(sub);
    out_.Add(sub, {render::CsvFormat()}, "Write the CSV here (atomically) instead of standard output");
    return sub;
  }

  Status Run() override {
    PhaseTimer timer(in_.timing);
    options_.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, captures_.Open(in_, options_));
    timer.Mark("import");
    AnalysisResults& results = session->results();
    const RooflineResult& r = results.Get(kRoofline).result;
    const std::optional<DevicePeaks>& device = results.Get(kRoofline).device;
    if (!device && !options_.analyze.device.empty()) return ErrStatus(results.Get(kRoofline).problem);
    if (!device)
      std::fprintf(stderr, "aiprof: %s; bounds and utilizations left empty\n", results.Get(kRoofline).problem.c_str());
    if (r.ops == 0) {
      std::fprintf(stderr, "aiprof: no tensor op with a FLOP model and recorded shapes (%llu without usable shapes)\n",
                   static_cast<unsigned long long>(r.ops_without_shapes));
    }
    for (const std::string& line : DescribeDeviceTasks(r)) std::fprintf(stderr, "aiprof: %s\n", line.c_str());
    timer.Mark("analyse");
    RETURN_IF_ERROR(WriteOutput(out_.output, RooflineToCsv(r)));
    timer.Mark("render+write");
    return OkStatus();
  }

 private:
  InputFlags in_;
  CaptureTraceFlag captures_;
  OutputFlags out_;
  SessionOptions options_;
};

}  // namespace

std::unique_ptr<Command> NewRooflineCommand() { return std::make_unique<RooflineCommand>(); }

}  // namespace aiprof
