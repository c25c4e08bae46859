#include "src/model/trace_merge.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <string>
#include <type_traits>
#include <vector>

namespace aiprof {
namespace {

// Gives the pages of freed blocks back to the system. A part's columns were
// allocated by the threads that imported it, in their malloc arenas, so the
// merged trace (appended on this thread) cannot reuse them, and glibc's
// free() returns only the top of a heap: without this, freeing a copied
// column did not lower the merge's peak. Columns under 1 MiB are left to
// free() (a trim walks every arena: small merges, such as the monitor's,
// would pay for it on every column).
void ReleaseFreedMemory(size_t freed_bytes) {
#ifdef __GLIBC__
  if (freed_bytes >= (size_t{1} << 20)) malloc_trim(0);
#else
  (void)freed_bytes;
#endif
}

// Appends one part to the merged trace, emptying the part's columns as it
// goes: each column is freed once copied, so the merge holds the parts and
// the merged trace together for one column at most, not for a whole part (a
// copied 13.5 M-slice SDK part was 660 MB held twice).
class PartMerger {
 public:
  PartMerger(Trace* out, Trace& in) : out_(out), in_(in) {
    strings_.resize(in.strings.size());
    for (size_t i = 0; i < in.strings.size(); ++i) strings_[i] = out->strings.Intern(in.strings.Get(StringId{uint32_t(i)}));
    track_base_ = static_cast<uint32_t>(out->tracks.size());
    slice_base_ = static_cast<uint32_t>(out->slices.size());
    arg_base_ = out->args.size();
  }

  void Run() {
    Append(in_.tracks, &out_->tracks);
    Args();
    const size_t slices = Append(in_.slices, &out_->slices);
    Offset(&out_->slices.track, slices, track_base_);
    Offset(&out_->slices.arg_begin, slices, arg_base_);
    const size_t instants = Append(in_.instants, &out_->instants);
    Offset(&out_->instants.track, instants, track_base_);
    Offset(&out_->instants.arg_begin, instants, arg_base_);
    Offset(&out_->counters.track, Append(in_.counters, &out_->counters), track_base_);
    const size_t flows = Append(in_.flows, &out_->flows);
    Offset(&out_->flows.from_slice, flows, slice_base_);
    Offset(&out_->flows.to_slice, flows, slice_base_);
    Offset(&out_->steps.track, Append(in_.steps, &out_->steps), track_base_);
    Offset(&out_->op_metrics.slice, Append(in_.op_metrics, &out_->op_metrics), slice_base_);
    Append(in_.step_breakdown, &out_->step_breakdown);
    const uint32_t callsite_base = static_cast<uint32_t>(out_->callsites.size());
    Offset(&out_->callsites.parent, Append(in_.callsites, &out_->callsites), callsite_base);
    const size_t samples = Append(in_.samples, &out_->samples);
    Offset(&out_->samples.track, samples, track_base_);
    Offset(&out_->samples.callsite, samples, callsite_base);
  }

 private:
  StringId S(StringId id) const { return strings_[id.raw]; }
  template <typename T>
  T Remap(const T& v) const {
    if constexpr (std::is_same_v<T, StringId>) {
      return S(v);
    } else {
      return v;
    }
  }

  // Appends every column of `in` to the same column of `*out`, string ids
  // re-interned (references to other tables are offset by the caller), and
  // frees each column of `in` once copied; returns the first appended row.
  template <typename Table>
  size_t Append(Table& in, Table* out) {
    const size_t first = out->size();
    std::vector<void*> columns;
    Table::Columns(*out, [&](auto& column) { columns.push_back(&column); });
    size_t k = 0;
    Table::Columns(in, [&](auto& column) {
      auto* to = static_cast<std::remove_cvref_t<decltype(column)>*>(columns[k++]);
      for (size_t i = 0; i < column.size(); ++i) to->push_back(Remap(column[i]));
      const size_t bytes = column.size() * sizeof(column[0]);
      column.clear();
      ReleaseFreedMemory(bytes);
    });
    return first;
  }

  // Adds `base` to rows [first, end) of a column of ids into another table
  // (kNoSlice / kNoTrack, both UINT32_MAX, stay as they are).
  template <typename T, typename B>
  static void Offset(ChunkedVector<T>* column, size_t first, B base) {
    for (size_t i = first; i < column->size(); ++i) {
      if constexpr (kIsRowId<T>) {
        if ((*column)[i] == kNoSlice) continue;
      }
      (*column)[i] = static_cast<T>((*column)[i] + base);
    }
  }

  void Args() {
    for (size_t i = 0; i < in_.args.size(); ++i) {
      Arg arg = in_.args[i];
      arg.key = S(arg.key);
      if (arg.type == ArgType::kString || arg.type == ArgType::kJson) arg.str = S(StringId{arg.str}).raw;
      out_->args.push_back(arg);
    }
    const size_t bytes = in_.args.size() * sizeof(Arg);
    in_.args.clear();
    ReleaseFreedMemory(bytes);
  }

  Trace* out_;
  Trace& in_;
  std::vector<StringId> strings_;
  uint32_t track_base_;
  uint32_t slice_base_;
  uint64_t arg_base_;
};

std::string PartPrefix(const Trace& part, size_t index) {
  auto it = part.metadata.find("rank");
  return it != part.metadata.end() ? "rank" + it->second + "." : "part" + std::to_string(index) + ".";
}

}  // namespace

std::unique_ptr<Trace> MergeTraces(std::vector<std::unique_ptr<Trace>> parts) {
  auto out = std::make_unique<Trace>();
  for (size_t p = 0; p < parts.size(); ++p) {
    PartMerger(out.get(), *parts[p]).Run();
    std::string prefix = PartPrefix(*parts[p], p);
    for (const auto& [key, value] : parts[p]->metadata) out->metadata[prefix + key] = value;
    for (const auto& [kind, e] : parts[p]->diagnostics.entries()) {
      DiagnosticEntry& d = out->diagnostics.mutable_entries()[kind];
      if (d.count == 0) {
        d.first_where = e.first_where;
        d.description = e.description;
      }
      d.count += e.count;
    }
    parts[p].reset();  // free each part once merged
  }
  return out;
}

}  // namespace aiprof
