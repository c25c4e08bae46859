#include "src/importers/common/importer_registry.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "src/base/phase_log.h"
#include "src/importers/ascend/trace_view_importer.h"
#include "src/importers/common/accelerator.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/decompressed_copy.h"
#include "src/importers/common/folder_importer.h"
#include "src/importers/common/import_confinement.h"
#include "src/importers/graph_capture/graph_capture_merge.h"
#include "src/importers/json/chrome_json_importer.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/importers/nsys/nsys_sqlite_importer.h"
#include "src/importers/sdk/sdk_event_importer.h"
#include "src/model/native_file.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// Order matters: the first entry whose detect() accepts the prefix imports.
// ascend_timeline (bare array, ts as strings) precedes the general chrome_json.
constexpr ImporterEntry kImporters[] = {
    {"aiprof_sdk", "SDK event file", ".aiprof .aiprof.part", &DetectSdkEventFile, &ImportSdkEventFile,
     /*reads_in_place=*/true},
    {"nsys_sqlite", "Nsight Systems SQLite export", ".sqlite", &DetectNsysSqlite, &ImportNsysSqlite,
     /*reads_in_place=*/true},
    {"ascend_timeline", "Ascend timeline JSON", ".json", &DetectAscendTimeline, &ImportAscendTimelineFile,
     /*reads_in_place=*/false},
    {"chrome_json", "Chrome/Kineto trace JSON", ".json", &DetectChromeJson, &ImportChromeJson,
     /*reads_in_place=*/false},
};

// The native file (not in kImporters: ReadNativeFile reads it, and its
// magic is checked first) and the compressions any format may come in.
constexpr char kNativeLabel[] = ".aiprof file";
constexpr char kNativeEnding[] = ".aiprof";
constexpr std::string_view kCompressedEndings[] = {".gz", ".zst"};

bool EndsWith(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

// What an unrecognised file is, when its first (decompressed) bytes say it
// is an archive or a compression aiprof does not read, with what to do;
// else "". A tar.gz of a profiler folder was only "unrecognised format".
std::string ArchiveAdvice(std::string_view prefix, const std::string& compression) {
  const std::string packed = compression == "none" ? "" : " (" + compression + "-compressed)";
  if (prefix.size() >= 262 && prefix.substr(257, 5) == "ustar") {
    return "a tar archive" + packed + ": unpack it first (tar xf) and give the trace file or profiler folder inside";
  }
  if (prefix.substr(0, 4) == std::string_view("PK\x03\x04", 4)) {
    return "a zip archive" + packed + ": unpack it first (unzip) and give the trace file or profiler folder inside";
  }
  if (prefix.substr(0, 3) == "BZh")
    return "bzip2-compressed" + packed + ": aiprof reads gzip and zstd; decompress it first";
  if (prefix.substr(0, 6) == std::string_view("\xFD"
                                              "7zXZ\0",
                                              6)) {
    return "xz-compressed" + packed + ": aiprof reads gzip and zstd; decompress it first";
  }
  if (prefix.substr(0, 6) == std::string_view("7z\xBC\xAF\x27\x1C", 6)) {
    return "a 7-Zip archive" + packed + ": unpack it first";
  }
  return "";
}

}  // namespace

std::span<const ImporterEntry> FileImporters() { return kImporters; }

const ImporterEntry* DetectFileImporter(std::string_view prefix) {
  if (prefix.substr(0, kNativeMagic.size()) == kNativeMagic) return nullptr;
  for (const ImporterEntry& importer : kImporters) {
    if (importer.detect(prefix)) return &importer;
  }
  return nullptr;
}

bool IsImportableFilePrefix(std::string_view prefix) {
  return prefix.substr(0, kNativeMagic.size()) == kNativeMagic || DetectFileImporter(prefix) != nullptr;
}

std::string KnownFileFormats() {
  std::string out;
  for (const ImporterEntry& importer : kImporters) out += std::string(importer.label) + ", ";
  out.resize(out.size() - 2);
  return out + " or " + kNativeLabel + ", each optionally gzip or zstd compressed";
}

bool HasTraceFileEnding(std::string_view name) {
  for (std::string_view end : kCompressedEndings) {
    if (EndsWith(name, end)) return true;
  }
  if (EndsWith(name, kNativeEnding)) return true;
  for (const ImporterEntry& importer : kImporters) {
    std::string_view endings = importer.endings;
    while (!endings.empty()) {
      const size_t space = endings.find(' ');
      if (EndsWith(name, endings.substr(0, space))) return true;
      endings = space == std::string_view::npos ? std::string_view() : endings.substr(space + 1);
    }
  }
  return false;
}

namespace {

// A file in a known format of which no record could be read is not a trace
// of that format: a JSON list of {"file": ...} objects (TraceLens's
// execution_details.json) read as a Chrome trace whose every record lacked
// "ph", and was shown as an empty run. An empty file of the format (no
// records at all, or metadata only) is still an empty trace.
Status CheckSomethingWasRead(const Trace& trace, const std::string& path) {
  if (trace.slices.size() + trace.instants.size() + trace.counters.size() + trace.flows.size() + trace.samples.size() >
      0) {
    return OkStatus();
  }
  uint64_t skipped = 0;
  const std::pair<const std::string, DiagnosticEntry>* largest = nullptr;
  for (const auto& entry : trace.diagnostics.entries()) {
    if (IsNoteOnlyDiagnostic(entry.first)) continue;
    skipped += entry.second.count;
    if (largest == nullptr || entry.second.count > largest->second.count) largest = &entry;
  }
  if (largest == nullptr) return OkStatus();
  return ErrStatus(path + ": no event could be read (" + std::to_string(skipped) + " record" +
                   (skipped == 1 ? "" : "s") + " skipped; " + largest->first + ": " +
                   std::to_string(largest->second.count) + ", first at " + largest->second.first_where + ": " +
                   largest->second.description + ")");
}

}  // namespace

namespace {

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// An import of a copy (a stream's, a compressed file's decompressed one),
// its error and diagnostics naming the input as given instead of the copy.
StatusOr<std::unique_ptr<Trace>> NamedAs(StatusOr<std::unique_ptr<Trace>> trace, const std::string& copy,
                                         const std::string& shown) {
  if (!trace.ok()) return ErrStatus(ReplaceAll(trace.status().message(), copy, shown));
  for (auto& [kind, entry] : (*trace)->diagnostics.mutable_entries()) {
    entry.first_where = ReplaceAll(entry.first_where, copy, shown);
  }
  std::string& source = (*trace)->metadata["source_path"];
  source = source.empty() ? shown : ReplaceAll(source, copy, shown);
  return trace;
}

// Imports `path` with `importer` (nullptr: an .aiprof file).
StatusOr<std::unique_ptr<Trace>> ImportAs(const std::string& path, const ImporterEntry* importer) {
  if (importer == nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ReadNativeFile(path));
    // A file converted from another keeps the path it was read from; a
    // capture has none (its parts were the capture's temporary files), so
    // titles name this file.
    trace->metadata.try_emplace("source_path", path);
    return trace;
  }
  auto trace = std::make_unique<Trace>();
  TraceBuilder builder(trace.get());
  {
    ScopedPhase phase("parse");
    RETURN_IF_ERROR(importer->import(path, &builder));
  }
  {
    ScopedPhase phase("finalize");
    RETURN_IF_ERROR(builder.Finalize());
  }
  RETURN_IF_ERROR(CheckSomethingWasRead(*trace, path));
  RecognizeAccelerator(trace.get());
  trace->metadata["source_path"] = path;
  return trace;
}

}  // namespace

StatusOr<std::unique_ptr<Trace>> ImportTraceFile(const std::string& path) {
  std::string compression;
  ASSIGN_OR_RETURN(std::string prefix, ReadPrefix(path, kDetectPrefixBytes, &compression));
  if (prefix.empty()) return ErrStatus(path + ": the file is empty");
  const ImporterEntry* importer = DetectFileImporter(prefix);
  if (importer == nullptr && prefix.substr(0, kNativeMagic.size()) != kNativeMagic) {
    if (std::string advice = ArchiveAdvice(prefix, compression); !advice.empty()) {
      return ErrStatus(path + ": " + advice);
    }
    return ErrStatus(path + ": unrecognised format (expected " + KnownFileFormats() + ", or a profiler folder)");
  }
  if (compression == "none" || (importer != nullptr && !importer->reads_in_place)) return ImportAs(path, importer);
  // Read in place: through a decompressed copy (a gzip'd Nsight export or
  // .aiprof was "corrupt": input trial, 'in').
  ASSIGN_OR_RETURN(std::unique_ptr<DecompressedCopy> copy,
                   DecompressedCopy::Create(path, importer != nullptr ? importer->label : kNativeLabel));
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, NamedAs(ImportAs(copy->path(), importer), copy->path(), path));
  // An .aiprof file keeps what its own source was compressed with.
  if (importer != nullptr) trace->metadata["compression"] = compression;
  return trace;
}

namespace {

// Cuts the JSON copied so far into events without parsing them: an error
// in its structure (not its end) is the whole input's error too. `yes '{'`
// passed the format check ('{') and was copied until 64 GiB of $TMPDIR were
// written (input trial, 'in'); it fails at its byte 2 now.
Status CheckJsonStructure(const std::string& copy) {
  class Nothing : public TokenBatchConsumer {
   public:
    void Parse(TokenBatch*, size_t) override {}
    void Merge(TokenBatch*) override {}
  } nothing;
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(copy));
  Status status = ChromeJsonTokenizer(source.get(), &nothing, 0).Run();
  const std::string& m = status.message();
  if (status.ok() ||
      (m.find(": invalid JSON") == std::string::npos && m.find(": unexpected data after") == std::string::npos)) {
    return OkStatus();  // the copy ends inside the JSON, or its compression is cut: read on
  }
  return status;
}

// A pipe, socket or terminal (`-`: standard input) can be read only once,
// and an import reads its input twice (the first bytes to detect the format,
// then the whole from the start): it is copied to a file under $TMPDIR
// (mode 0600), unlinked at once and read back through /proc/self/fd, so no
// exit, not even SIGKILL, leaves it behind; a mapped .aiprof stays readable.
// The format is checked on the first MiB, so /dev/zero or a stream of
// anything else fails at once, and the copy stops at kMaxStreamedInputBytes.
// Errors and diagnostics name the input as given.
StatusOr<std::unique_ptr<Trace>> ImportStream(const std::string& path) {
  const std::string shown = path == "-" ? "<stdin>" : path;
  if (ImportsConfined()) return ErrStatus(shown + ": not a regular file or folder; not opened");
  if (path == "-" && ::isatty(STDIN_FILENO)) return ErrStatus("<stdin> is a terminal: pipe a trace into it");
  const int in = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return ErrStatus(shown + ": cannot open: " + std::strerror(errno));
  std::error_code ec;
  std::string tmp = (std::filesystem::temp_directory_path(ec) / "aiprof-input-XXXXXX").string();
  const int out = ec ? -1 : ::mkostemp(tmp.data(), O_CLOEXEC);
  if (out < 0) {
    ::close(in);
    return ErrStatus(shown + ": cannot create a temporary file to copy it to: " +
                     (ec ? ec.message() : std::string(std::strerror(errno))));
  }
  ::unlink(tmp.c_str());
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_out{out};
  const std::string copy = "/proc/self/fd/" + std::to_string(out);
  std::vector<char> buffer(1 << 20);
  std::string failed;
  uint64_t copied = 0;
  bool checked = false;
  for (;;) {
    const ssize_t got = ::read(in, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) failed = shown + ": cannot read: " + std::strerror(errno);
    if (got <= 0) break;
    for (ssize_t done = 0; done < got && failed.empty();) {
      const ssize_t put = ::write(out, buffer.data() + done, static_cast<size_t>(got - done));
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) failed = shown + ": cannot copy it to " + tmp + ": " + std::strerror(errno);
      done += put > 0 ? put : 0;
    }
    if (!failed.empty()) break;
    copied += static_cast<uint64_t>(got);
    if (!checked && copied >= kStreamFormatCheckBytes) {
      checked = true;
      StatusOr<std::string> prefix = ReadPrefix(copy, kDetectPrefixBytes);
      if (prefix.ok() && !IsImportableFilePrefix(*prefix)) {
        failed = shown + ": unrecognised format in its first " + std::to_string(copied) + " bytes (expected " +
                 KnownFileFormats() + ")";
        break;
      }
      if (prefix.ok() && DetectChromeJson(*prefix)) {
        Status cut = CheckJsonStructure(copy);
        if (!cut.ok()) {
          failed = ReplaceAll(cut.message(), copy, shown);
          break;
        }
      }
    }
    if (copied > kMaxStreamedInputBytes) {
      failed = shown + ": more than " + std::to_string(kMaxStreamedInputBytes >> 30) +
               " GiB read from a pipe or device; the limit of a streamed input (give a file instead)";
      break;
    }
  }
  ::close(in);
  if (!failed.empty()) return ErrStatus(failed);
  // SQLite resolves the links of the path it opens, and this copy has no
  // name (and cannot be given one): a plain Nsight export on a pipe was
  // "cannot open as SQLite: unable to open database file". It is read
  // through a DecompressedCopy, which can name itself for SQLite's open.
  std::string compression;
  StatusOr<std::string> head = ReadPrefix(copy, kDetectPrefixBytes, &compression);
  if (head.ok() && compression == "none" && DetectNsysSqlite(*head)) {
    StatusOr<std::unique_ptr<DecompressedCopy>> named = DecompressedCopy::Create(copy, "Nsight Systems SQLite export");
    if (!named.ok()) return ErrStatus(ReplaceAll(named.status().message(), copy, shown));
    const std::string& second = (*named)->path();
    return NamedAs(NamedAs(ImportTraceFile(second), second, shown), copy, shown);
  }
  return NamedAs(ImportTraceFile(copy), copy, shown);
}

StatusOr<std::unique_ptr<Trace>> ImportAny(const std::string& path) {
  struct stat st;
  if (path == "-") return ImportStream(path);
  if (::stat(path.c_str(), &st) != 0) {
    // Its reason: a symbolic link loop or a folder it may not enter was
    // reported as "no such file or folder" (input trial, 'in').
    if (errno == ENOENT) return ErrStatus(path + ": no such file or folder");
    return ErrStatus(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)) return ImportStream(path);
  if (!S_ISDIR(st.st_mode)) {
    ASSIGN_OR_RETURN(std::unique_ptr<Trace> file, ImportTraceFile(path));
    NoteGraphCaptureBeside(path, file.get());  // a graph capture beside a replay is said, not merged
    return file;
  }
  ASSIGN_OR_RETURN(std::optional<GraphCaptureLayout> graphs, FindGraphCaptureLayout(path));
  std::unique_ptr<Trace> trace;
  if (graphs) {
    ASSIGN_OR_RETURN(trace, ImportWithGraphCaptures(graphs->replay, graphs->captures));
  } else {
    ASSIGN_OR_RETURN(trace, ImportFolder(path));
  }
  trace->metadata["source_path"] = path;
  return trace;
}

}  // namespace

StatusOr<std::unique_ptr<Trace>> ImportTrace(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportAny(path));
  RETURN_IF_ERROR(CheckDurationSum(*trace, path == "-" ? "<stdin>" : path));
  return trace;
}

StatusOr<std::unique_ptr<Trace>> ImportTraces(const std::vector<std::string>& paths) {
  if (paths.empty()) return ErrStatus("no input given");
  if (paths.size() == 1) return ImportTrace(paths.front());
  std::string label;
  for (const std::string& p : paths) label += (label.empty() ? "" : " ") + p;
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, ImportSdkFiles(paths));
  RETURN_IF_ERROR(CheckDurationSum(*trace, label));
  trace->metadata["source_path"] = label;
  return trace;
}

}  // namespace aiprof
