// `aiprof cluster map|reduce|analyze`: per-rank digests, the cross-rank
// reduce, and both in one job (with MPI when launched by mpirun/srun).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "src/base/atomic_file.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/cluster/cluster_map.h"
#include "src/cluster/cluster_reduce.h"
#include "src/cluster/cluster_report.h"
#include "src/cluster/mpi/mpi_gather.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) return ErrStatus(dir + ": cannot create the output folder");
  return OkStatus();
}

void WarnFailed(const RankDigest& d) {
  if (!d.ok()) std::fprintf(stderr, "aiprof: warning: %s (its digest says so)\n", TerminalSafe(d.error).c_str());
}

// A second digest of a rank (another input claiming it) is written beside
// the first, never over it; the reduce lists the duplicate.
void WarnClash(const RankDigest& d, const DigestWrite& w) {
  if (w.clash.empty() || d.rank < 0) return;
  std::fprintf(stderr,
               "aiprof: warning: %s already holds a digest of rank %d from another input; this one (of %s) is "
               "written as %s, and the reduce lists the duplicate rank\n",
               TerminalSafe(w.clash).c_str(), d.rank, TerminalSafe(d.source).c_str(), TerminalSafe(w.path).c_str());
}

Status ReduceAndWrite(const std::vector<std::string>& serialized, const ClusterOptions& options, const std::string& out_dir,
                      bool keep_digests) {
  RETURN_IF_ERROR(MakeDir(out_dir));
  if (keep_digests) RETURN_IF_ERROR(MakeDir((fs::path(out_dir) / "digests").string()));
  ClusterReducer reducer(options);
  for (size_t i = 0; i < serialized.size(); ++i) {
    StatusOr<RankDigest> d = ParseDigest(serialized[i], "digest " + std::to_string(i));
    if (!d.ok()) {
      reducer.AddBroken("digest " + std::to_string(i), d.status().message());
      continue;
    }
    WarnFailed(*d);
    if (keep_digests) {
      ASSIGN_OR_RETURN(DigestWrite w, WriteDigestFile(*d, (fs::path(out_dir) / "digests").string(), i));
      WarnClash(*d, w);
    }
    reducer.Add(*d);
  }
  ClusterResult r = reducer.Finish();
  RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "cluster.json").string(), ClusterToJson(r)));
  RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "cluster.md").string(), ClusterToMarkdown(r)));
  RETURN_IF_ERROR(WriteFileAtomically((fs::path(out_dir) / "cluster.html").string(), ClusterToHtml(r)));
  if (r.usable == 0) {
    std::string why = r.broken.empty() ? "no inputs" : r.broken.front().reason;
    return ErrStatus("no input could be read (" + why + "); the reports in " + out_dir + " list every one");
  }
  return OkStatus();
}

ClockAlign ParseAlign(const std::string& s) {
  if (s == "always") return ClockAlign::kAlways;
  if (s == "never") return ClockAlign::kNever;
  return ClockAlign::kAuto;
}

class ClusterCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("cluster", "Cross-rank analysis at scale: per-rank digests (map), their reduce, or both on MPI (analyze)");
    sub->require_subcommand(1);
    map_ = sub->add_subcommand("map", "Write one small digest per rank of the inputs");
    map_->add_option("inputs", inputs_, "Trace files, rank folders or job folders")->required();
    AddOutputPathFlag(map_, &out_, "Folder for the digests (rank-<N>.digest)")->required();
    AddMapFlags(map_, "Ranks mapped at once (default: the machine's cores)");
    reduce_ = sub->add_subcommand("reduce", "Cross-rank findings from a folder of digests");
    reduce_->add_option("digests", digests_, "Folder of *.digest files")->required();
    AddOutputPathFlag(reduce_, &out_, "cluster.json, cluster.md or cluster.html (default: JSON on standard output)");
    AddReduceFlags(reduce_);
    analyze_ = sub->add_subcommand("analyze", "Map a job folder and reduce it; under mpirun/srun each process maps its share (MPI)");
    analyze_->add_option("jobdir", inputs_, "Job folder (or several inputs)")->required();
    AddOutputPathFlag(analyze_, &out_, "Output folder: cluster.json, cluster.md, cluster.html")->required();
    AddMapFlags(analyze_, "Ranks mapped at once per process (default: cores / processes on a host)");
    AddReduceFlags(analyze_);
    analyze_->add_flag("--keep-digests", keep_digests_, "Also write the digests into OUT/digests/");
    return sub;
  }

  // The flags of the map step (map, analyze) and of the reduce step (reduce, analyze).
  void AddMapFlags(CLI::App* sub, const char* threads_help) {
    sub->add_option("--threads", threads_, threads_help);
    sub->add_option("--host", host_, "Host recorded when the trace names none (default: this machine)");
  }
  void AddReduceFlags(CLI::App* sub) {
    sub->add_option("--align", align_, "Clock alignment on the ends of collectives: auto (when clocks disagree), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    sub->add_option("--world-size", world_size_, "Expected ranks 0..N-1 (default: up to the largest rank seen)");
  }

  Status Run() override {
    if (host_.empty()) host_ = LocalHostName();
    ClusterOptions options;
    options.align = ParseAlign(align_);
    options.world_size = world_size_;
    if (map_->parsed()) return RunMap();
    if (reduce_->parsed()) {
      ASSIGN_OR_RETURN(ClusterResult r, ReduceDigestFolder(digests_, options));
      ASSIGN_OR_RETURN(std::string text, RenderClusterReport(r, out_));
      RETURN_IF_ERROR(WriteOutput(out_, text));
      // The report is written (it lists every digest and why it is unusable),
      // but a job with nothing to analyse is a failure.
      if (r.usable == 0) {
        return ErrStatus("none of the " + std::to_string(r.digests) + " digests in " + digests_ + " is usable (" +
                         (r.broken.empty() ? std::string("no digests") : r.broken.front().reason) +
                         "); the report lists every one");
      }
      return OkStatus();
    }
    return RunAnalyze(options);
  }

 private:
  Status RunMap() {
    RETURN_IF_ERROR(MakeDir(out_));
    std::vector<MapUnit> units = ListMapUnits(inputs_);
    const size_t threads = threads_ > 0 ? threads_ : std::max(1u, std::thread::hardware_concurrency());
    std::vector<RankDigest> digests = MapUnits(units, 0, 1, threads, host_);
    size_t failed = 0, rankless = 0;
    std::set<std::string> written;
    for (size_t i = 0; i < digests.size(); ++i) {
      WarnFailed(digests[i]);
      if (!digests[i].ok()) {
        ++failed;
      } else if (digests[i].rank < 0) {
        ++rankless;
        std::fprintf(stderr,
                     "aiprof: warning: %s: the trace does not say which rank it is (no rank in its data or "
                     "name); the reduce cannot use its digest\n",
                     TerminalSafe(digests[i].source).c_str());
      }
      ASSIGN_OR_RETURN(DigestWrite w, WriteDigestFile(digests[i], out_, i));
      WarnClash(digests[i], w);
      written.insert(w.path);
    }
    std::fprintf(stderr, "aiprof: %zu digests written to %s (%zu inputs could not be read, %zu without a rank)\n",
                 written.size(), TerminalSafe(out_).c_str(), failed, rankless);
    if (failed + rankless == digests.size()) {
      return ErrStatus("no input gave a usable digest (" + std::to_string(failed) + " could not be read, " +
                       std::to_string(rankless) + " without a rank; the warnings above and their digests say why)");
    }
    return OkStatus();
  }

  Status RunAnalyze(const ClusterOptions& options) {
    std::vector<MapUnit> units = ListMapUnits(inputs_);
    if (LaunchedByMpi()) {
      MpiGathered info;
      const size_t threads = threads_ > 0 ? threads_ : 1;
      return MpiMapAndGather(units, threads, host_,
                             [&](std::vector<std::string> digests) {
                               std::fprintf(stderr, "aiprof: %zu digests gathered from %d MPI processes\n", digests.size(),
                                            info.processes);
                               return ReduceAndWrite(digests, options, out_, keep_digests_);
                             },
                             &info);
    }
    const size_t threads = threads_ > 0 ? threads_ : std::max(1u, std::thread::hardware_concurrency());
    std::vector<RankDigest> digests = MapUnits(units, 0, 1, threads, host_);
    std::vector<std::string> serialized(digests.size());
    for (size_t i = 0; i < digests.size(); ++i) SerializeDigest(digests[i], &serialized[i]);
    digests.clear();
    return ReduceAndWrite(serialized, options, out_, keep_digests_);
  }

  CLI::App *map_ = nullptr, *reduce_ = nullptr, *analyze_ = nullptr;
  std::vector<std::string> inputs_;
  std::string out_, digests_, host_;
  std::string align_ = "auto";
  int64_t world_size_ = 0;
  size_t threads_ = 0;
  bool keep_digests_ = false;
};

}  // namespace

std::unique_ptr<Command> NewClusterCommand() { return std::make_unique<ClusterCommand>(); }

}  // namespace aiprof
