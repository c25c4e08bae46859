#include "src/view/view_registry.h"

#include <algorithm>
#include <set>
#include <string>

#include "src/model/trace.h"
#include "src/render/escape.h"
#include "src/render/format.h"

namespace aiprof {

const ViewSpec* FindView(std::string_view name) {
  for (const ViewSpec& spec : AllViews()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

namespace {

std::string TrackThreadLabel(const Trace& trace, uint32_t track) {
  return TerminalSafe(trace.Str(trace.tracks.name[track]));
}

}  // namespace

std::string FormatForPath(const ViewSpec& spec, std::string_view path) {
  std::vector<render::OutputFormat> formats;
  for (const ViewFormat& f : spec.formats) formats.push_back({f.name, {f.extensions.begin(), f.extensions.end()}});
  return render::FormatForPath(formats, path);
}

bool HasFormat(const ViewSpec& spec, std::string_view format) {
  return std::any_of(spec.formats.begin(), spec.formats.end(),
                     [&](const ViewFormat& f) { return format == f.name; });
}

bool TrackSelected(const Trace& trace, uint32_t track, const ViewOptions& options) {
  if (options.rank >= 0 && trace.tracks.rank[track] != options.rank) return false;
  if (options.thread.empty()) return true;
  const TrackTable& t = trace.tracks;
  if (trace.Str(t.name[track]) == options.thread) return true;
  if (!t.tid_label[track].empty() && trace.Str(t.tid_label[track]) == options.thread) return true;
  std::string tid = std::to_string(t.tid[track]);
  if (t.tid_label[track].empty() && tid == options.thread) return true;
  std::string pid = t.pid_label[track].empty() ? std::to_string(t.pid[track]) : std::string(trace.Str(t.pid_label[track]));
  std::string tid_text = t.tid_label[track].empty() ? tid : std::string(trace.Str(t.tid_label[track]));
  return options.thread == pid + "/" + tid_text;
}

Status CheckFiltersMatch(const Trace& trace, const ViewOptions& options) {
  if (options.thread.empty() && options.rank < 0) return OkStatus();
  std::set<std::string> threads;
  std::set<int32_t> ranks;
  for (uint32_t i = 0; i < trace.tracks.size(); ++i) {
    if (TrackSelected(trace, i, options)) return OkStatus();
    if (trace.tracks.kind[i] == TrackKind::kThread) threads.insert(TrackThreadLabel(trace, i));
    ranks.insert(trace.tracks.rank[i]);
  }
  std::string message = "no track matches";
  if (!options.thread.empty()) message += " --thread '" + TerminalSafe(options.thread) + "'";
  if (options.rank >= 0) message += " --rank " + std::to_string(options.rank);
  message += " (threads:";
  size_t shown = 0;
  for (const std::string& name : threads) {
    if (++shown > 12) {
      message += " ...";
      break;
    }
    message += " '" + name + "'";
  }
  message += "; ranks:";
  for (int32_t r : ranks) message += r < 0 ? std::string(" unknown") : " " + std::to_string(r);
  return ErrStatus(message + ")");
}

}  // namespace aiprof
