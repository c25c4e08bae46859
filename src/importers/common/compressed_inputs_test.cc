// Compressed inputs of the formats read in place (an Nsight Systems SQLite
// export, an .aiprof file): gzip and zstd files, compressed here from real
// files, import as their plain files do, through a private copy that is
// gone afterwards; damage, the copy's limit and the import's errors name the
// compressed file. They were "corrupt" before (input trial, 'in').
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "src/base/import_budget.h"
#include "src/importers/common/decompressed_copy.h"
#include "src/importers/common/import_confinement.h"
#include "src/importers/common/importer_registry.h"
#include "src/model/native_file.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"

namespace aiprof {
// Named, not anonymous: the unity build puts this file beside the others.
namespace compressed_inputs_test {

using testing::GzipBytes;
using testing::ZstdBytes;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What two imports of the same run must agree on.
std::string Summary(const Trace& t) {
  int64_t dur = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) dur += t.slices.dur_ns[i];
  std::string out = std::to_string(t.slices.size()) + " slices, " + std::to_string(dur) + " ns, " +
                    std::to_string(t.tracks.size()) + " tracks, " + std::to_string(t.counters.size()) + " counters, " +
                    std::to_string(t.samples.size()) + " samples, " + std::to_string(t.flows.size()) + " flows;";
  for (const auto& [kind, entry] : t.diagnostics.entries()) {
    out += " " + kind + "=" + std::to_string(entry.count) + "@" + entry.first_where;
  }
  return out;
}

// $TMPDIR pointed at a fresh folder for the copies, restored afterwards.
class ScopedTmpDir {
 public:
  ScopedTmpDir() {
    const char* old = std::getenv("TMPDIR");
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv("TMPDIR", dir_.path().c_str(), 1);
  }
  ~ScopedTmpDir() {
    if (had_) {
      ::setenv("TMPDIR", old_.c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  size_t Entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_.path())) ++n;
    return n;
  }

 private:
  testing::TempDir dir_;
  bool had_ = false;
  std::string old_;
};

const std::string kNsys = std::string(AIPROF_FIXTURES_DIR) + "/nsys/perlmutter-cloverleaf-cuda.sqlite";

TEST(CompressedInputsTest, NsightExportGzipAndZstdImportLikeThePlainFile) {
  auto plain = ImportTrace(kNsys);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_GT((*plain)->slices.size(), 0u);
  const std::string bytes = ReadFile(kNsys);
  testing::TempDir dir;
  ScopedTmpDir tmp;
  for (const auto& [name, compressed, kind] : {std::tuple{"cloverleaf.sqlite.gz", GzipBytes(bytes), "gzip"},
                                               std::tuple{"cloverleaf.sqlite.zst", ZstdBytes(bytes), "zstd"}}) {
    const std::string path = dir.Write(name, compressed);
    auto got = ImportTrace(path);
    ASSERT_TRUE(got.ok()) << got.status().message();
    // The diagnostics' places name the file as given, not the copy.
    std::string want = Summary(**plain);
    for (size_t at = want.find(kNsys); at != std::string::npos; at = want.find(kNsys, at + path.size())) {
      want.replace(at, kNsys.size(), path);
    }
    EXPECT_EQ(Summary(**got), want) << name;
    EXPECT_EQ((*got)->metadata.at("source_path"), path);
    EXPECT_EQ((*got)->metadata.at("compression"), kind);
    EXPECT_EQ((*got)->metadata.at("source_format"), (*plain)->metadata.at("source_format"));
    EXPECT_EQ(tmp.Entries(), 0u) << "the decompressed copy was left in $TMPDIR";
  }
}

// A plain Nsight export on a pipe (`aiprof summary - < report.sqlite`, a
// named pipe, `<(cat report.sqlite)`) was "cannot open as SQLite: unable to
// open database file": the stream's copy has no name SQLite can open. It
// imports as the file does now, its diagnostics naming the pipe, and no
// copy is left in $TMPDIR. Real export, written into a FIFO by a thread.
TEST(CompressedInputsTest, NsightExportOnAPipeImportsLikeThePlainFile) {
  auto plain = ImportTrace(kNsys);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  testing::TempDir dir;
  ScopedTmpDir tmp;
  const std::string fifo = dir.Path("report.sqlite");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << ReadFile(kNsys);
  });
  auto piped = ImportTrace(fifo);
  writer.join();
  ASSERT_TRUE(piped.ok()) << piped.status().message();
  std::string got = Summary(**piped);
  for (size_t at = got.find(fifo); at != std::string::npos; at = got.find(fifo, at + kNsys.size())) {
    got.replace(at, fifo.size(), kNsys);
  }
  EXPECT_EQ(got, Summary(**plain));
  EXPECT_EQ(got.find("/proc/self/fd"), std::string::npos) << got;
  EXPECT_EQ(tmp.Entries(), 0u);
}

TEST(CompressedInputsTest, AiprofFileGzipAndZstdLoadLikeThePlainFile) {
  auto source = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/alexnet_a100_kineto.json.gz");
  ASSERT_TRUE(source.ok()) << source.status().message();
  testing::TempDir dir;
  const std::string native = dir.Path("alexnet.aiprof");
  ASSERT_TRUE(WriteNativeFile(**source, native).ok());
  auto plain = ImportTrace(native);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  const std::string bytes = ReadFile(native);
  ScopedTmpDir tmp;
  for (const auto& [name, compressed] :
       {std::pair{"alexnet.aiprof.gz", GzipBytes(bytes)}, std::pair{"alexnet.aiprof.zst", ZstdBytes(bytes)}}) {
    auto got = ImportTrace(dir.Write(name, compressed));
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(Summary(**got), Summary(**plain)) << name;
    ASSERT_GT((*got)->slices.size(), 0u);
    EXPECT_EQ((*got)->Str((*got)->slices.name[0]), (*plain)->Str((*plain)->slices.name[0]));
    // The file keeps the path and compression of the trace it was converted from.
    EXPECT_EQ((*got)->metadata.at("source_path"), (*plain)->metadata.at("source_path"));
    EXPECT_EQ((*got)->metadata.at("compression"), (*plain)->metadata.at("compression"));
    EXPECT_EQ(tmp.Entries(), 0u);
  }
}

TEST(CompressedInputsTest, DamageAndTheLimitAreErrorsNamingTheCompressedFile) {
  const std::string bytes = ReadFile(kNsys);
  testing::TempDir dir;
  ScopedTmpDir tmp;
  const std::string gz = GzipBytes(bytes);

  // Cut short: the decompression's error, at its compressed byte.
  const std::string cut = dir.Write("cut.sqlite.gz", gz.substr(0, gz.size() / 2));
  auto truncated = ImportTrace(cut);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find(cut + ": gzip stream truncated"), std::string::npos)
      << truncated.status().message();

  // Whole gzip stream, but the database in it damaged past its header: SQLite's
  // error, naming the .gz file and never the private copy.
  std::string damaged = bytes.substr(0, 4096) + std::string(bytes.size() - 4096, '\x5a');
  const std::string bad = dir.Write("damaged.sqlite.gz", GzipBytes(damaged));
  auto corrupt = ImportTrace(bad);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find(bad), std::string::npos) << corrupt.status().message();
  EXPECT_EQ(corrupt.status().message().find("/proc/self/fd"), std::string::npos) << corrupt.status().message();

  // Past the copy's limit: said, with the limit, and nothing left behind.
  DecompressedCopy::SetMaxBytesForTesting(1 << 20);
  const std::string big = dir.Write("big.sqlite.gz", gz);
  auto limited = ImportTrace(big);
  DecompressedCopy::SetMaxBytesForTesting(0);
  ASSERT_FALSE(limited.ok());
  EXPECT_NE(limited.status().message().find(big + ": gzip-compressed Nsight Systems SQLite export decompresses to "
                                                  "more than 1048576 bytes"),
            std::string::npos)
      << limited.status().message();
  EXPECT_EQ(tmp.Entries(), 0u);
}

// Under an import budget (serve's --max-convert-mb) a compressed Nsight
// export counts its bytes once, as its plain file does (its size: SQLite
// reads pages). It counted them twice, the copy's writes and then the
// copy's size, so serve refused a gzip'd export whose plain file passed.
// The copy still stops at the limit while it is made.
TEST(CompressedInputsTest, ImportBudgetCountsACompressedExportOnce) {
  const std::string bytes = ReadFile(kNsys);
  testing::TempDir dir;
  ScopedTmpDir tmp;
  auto charged = [](const std::string& path, uint64_t max_bytes, Status* status) {
    ImportBudget budget;
    budget.max_bytes = max_bytes;
    budget.bytes_flag = "--max-convert-mb";
    ScopedImportBudget scope(&budget);
    auto got = ImportTrace(path);
    *status = got.ok() ? OkStatus() : got.status();
    return budget.bytes.load();
  };
  Status status;
  const uint64_t plain = charged(kNsys, 0, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_GE(plain, bytes.size());  // its size, and the first 4 KiB read to recognise it
  for (const auto& [name, compressed] :
       {std::pair{"cloverleaf.sqlite.gz", GzipBytes(bytes)}, std::pair{"cloverleaf.sqlite.zst", ZstdBytes(bytes)}}) {
    const std::string path = dir.Write(name, compressed);
    EXPECT_EQ(charged(path, 0, &status), plain) << name;
    ASSERT_TRUE(status.ok()) << status.message();
    // A limit the plain file passes, the compressed one passes too.
    charged(path, plain + plain / 2, &status);
    EXPECT_TRUE(status.ok()) << name << ": " << status.message();
    // Under the file's size: stopped while the copy is made, naming the file and the flag.
    charged(path, plain / 4, &status);
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_NE(status.message().find(path), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("--max-convert-mb"), std::string::npos) << status.message();
    EXPECT_EQ(tmp.Entries(), 0u);
  }
}

// A front end confined to a folder (`aiprof mcp --allow`) reads a compressed
// export inside it: the private copy is not refused as outside the folder.
TEST(CompressedInputsTest, ConfinedImportsReadTheirCompressedFiles) {
  testing::TempDir dir;
  const std::string path = dir.Write("cloverleaf.sqlite.zst", ZstdBytes(ReadFile(kNsys)));
  ASSERT_TRUE(ConfineImportsTo({dir.path()}).ok());
  auto got = ImportTrace(path);
  auto outside = ImportTrace(kNsys);
  ASSERT_TRUE(ConfineImportsTo({}).ok());
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_GT((*got)->slices.size(), 0u);
  ASSERT_FALSE(outside.ok());
}

// Every figure of an imported profiler folder that names no file path: the
// slices, tracks (with names: "memory (memory_record.csv)"), counters,
// instants, flows, op metrics and step breakdown with their source names,
// the metadata but source_path, and the diagnostics' kinds and counts.
std::string FolderFigures(const Trace& t) {
  std::ostringstream out;
  int64_t dur = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) dur += t.slices.dur_ns[i];
  out << t.slices.size() << " slices " << dur << " ns; " << t.flows.size() << " flows; " << t.instants.size()
      << " instants; tracks:";
  for (size_t i = 0; i < t.tracks.size(); ++i) out << " " << t.Str(t.tracks.name[i]) << "@" << t.tracks.rank[i];
  double counter_sum = 0;
  for (size_t i = 0; i < t.counters.size(); ++i) counter_sum += t.counters.value[i];
  out << "; " << t.counters.size() << " counters sum " << counter_sum << "; op metrics:";
  for (size_t i = 0; i < t.op_metrics.size(); ++i) {
    out << " " << t.Str(t.op_metrics.source[i]) << "|" << t.Str(t.op_metrics.op[i]) << "|" << t.Str(t.op_metrics.key[i])
        << "=" << t.op_metrics.value[i] << t.Str(t.op_metrics.text[i]) << "@" << t.op_metrics.slice[i].raw();
  }
  out << "; breakdown:";
  for (size_t i = 0; i < t.step_breakdown.size(); ++i) {
    out << " " << t.step_breakdown.rank[i] << "/" << t.step_breakdown.step[i] << "/"
        << t.Str(t.step_breakdown.source[i]) << "/" << t.Str(t.step_breakdown.key[i]) << "="
        << t.step_breakdown.value_ns[i];
  }
  out << "; metadata:";
  for (const auto& [key, value] : t.metadata) {
    if (key != "source_path") out << " " << key << "=" << value;
  }
  out << "; diagnostics:";
  for (const auto& [kind, entry] : t.diagnostics.entries()) out << " " << kind << "=" << entry.count;
  return out.str();
}

// Copies `from` to `to` and replaces each file of the copy by its gzip'd
// (".gz") or zstd'd (".zst") form, as `gzip -r` does.
void CopyCompressed(const std::filesystem::path& from, const std::filesystem::path& to, const std::string& suffix) {
  std::filesystem::create_directories(to.parent_path());
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  std::vector<std::filesystem::path> files;
  std::filesystem::permissions(to, std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
  for (const auto& e : std::filesystem::recursive_directory_iterator(to)) {
    std::filesystem::permissions(e.path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
    if (e.is_regular_file()) files.push_back(e.path());
  }
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    const std::string bytes = ReadFile(f.string());
    std::ofstream(f.string() + suffix, std::ios::binary) << (suffix == ".gz" ? GzipBytes(bytes) : ZstdBytes(bytes));
    std::filesystem::remove(f);
  }
}

// A torch_npu folder gzip'd or zstd'd member by member (`gzip -r`; the real
// level-0 and level-1 fixtures, both ranks: trace_view.json, kernel_details,
// memory_record, operator_memory, l2_cache, step_trace_time, op_statistic,
// api_statistic, communication(_matrix).json, profiler_info and
// profiler_metadata all compressed) imports with the plain folder's figures,
// alone and as a multi-rank parent. It was said ("a torch_npu profiler
// folder whose files are compressed ...; decompress them first"), and before
// that failed on "profiler_metadata.json.gz: not a Chrome trace".
TEST(CompressedInputsTest, CompressedTorchNpuFolderImportsLikeThePlainFolder) {
  for (const char* level : {"level0", "level1"}) {
    const std::filesystem::path fixture = std::filesystem::path(AIPROF_FIXTURES_DIR) / "ascend-pt" / level;
    auto plain_parent = ImportTrace(fixture.string());
    ASSERT_TRUE(plain_parent.ok()) << plain_parent.status().message();
    auto plain_rank = ImportTrace((fixture / "rank1_ascend_pt").string());
    ASSERT_TRUE(plain_rank.ok()) << plain_rank.status().message();
    ASSERT_GT((*plain_parent)->op_metrics.size(), 0u);
    for (const std::string suffix : {".gz", ".zst"}) {
      testing::TempDir dir;
      const std::filesystem::path run = std::filesystem::path(dir.path()) / "run";
      CopyCompressed(fixture, run, suffix);
      ASSERT_TRUE(std::filesystem::exists(run / "rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv" += suffix));
      auto parent = ImportTrace(run.string());
      ASSERT_TRUE(parent.ok()) << level << suffix << ": " << parent.status().message();
      EXPECT_EQ(FolderFigures(**parent), FolderFigures(**plain_parent)) << level << suffix;
      auto rank = ImportTrace((run / "rank1_ascend_pt").string());
      ASSERT_TRUE(rank.ok()) << level << suffix << ": " << rank.status().message();
      EXPECT_EQ(FolderFigures(**rank), FolderFigures(**plain_rank)) << level << suffix;
      EXPECT_EQ((*rank)->metadata.at("rank"), "1");
    }
  }
}

// A compressed member cut short, empty, or a link out of a confined folder
// (the real level-1 rank, gzip'd here): an error naming the member and the
// compressed byte where it ends, never a folder read as if whole; a cut
// profiler_metadata.json.gz is counted and ignored, as a malformed plain one.
TEST(CompressedInputsTest, DamagedCompressedMembersAreErrorsNamingThem) {
  namespace fs = std::filesystem;
  testing::TempDir dir;
  const fs::path pristine = fs::path(dir.path()) / "pristine" / "rank0_ascend_pt";
  CopyCompressed(fs::path(AIPROF_FIXTURES_DIR) / "ascend-pt" / "level1" / "rank0_ascend_pt", pristine, ".gz");
  int case_number = 0;
  // A fresh copy of the gzip'd rank, changed by `change` (given its output folder).
  auto damaged = [&](auto change) {
    const fs::path rank = fs::path(dir.path()) / ("case" + std::to_string(++case_number)) / "rank0_ascend_pt";
    fs::create_directories(rank.parent_path());
    fs::copy(pristine, rank, fs::copy_options::recursive);
    change(rank / "ASCEND_PROFILER_OUTPUT");
    return rank;
  };
  auto cut = [](const fs::path& file) {
    const std::string bytes = ReadFile(file.string());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
    return bytes.size() / 2;
  };
  for (const char* member : {"kernel_details.csv.gz", "communication.json.gz", "trace_view.json.gz"}) {
    size_t at = 0;
    const fs::path rank = damaged([&](const fs::path& out) { at = cut(out / member); });
    auto got = ImportTrace(rank.string());
    ASSERT_FALSE(got.ok()) << member;
    EXPECT_NE(got.status().message().find((rank / "ASCEND_PROFILER_OUTPUT" / member).string() +
                                          ": gzip stream truncated at compressed byte " + std::to_string(at)),
              std::string::npos)
        << got.status().message();
  }

  // Empty: a file of no bytes, and a gzip stream of nothing.
  const fs::path no_bytes =
      damaged([](const fs::path& out) { std::ofstream(out / "step_trace_time.csv.gz", std::ios::trunc); });
  auto empty_csv = ImportTrace(no_bytes.string());
  ASSERT_FALSE(empty_csv.ok());
  EXPECT_EQ(empty_csv.status().message(), (no_bytes / "ASCEND_PROFILER_OUTPUT/step_trace_time.csv.gz").string() +
                                              ":line 1: the CSV file is empty (no header row)");
  const fs::path nothing = damaged([](const fs::path& out) {
    std::ofstream(out / "communication.json.gz", std::ios::binary | std::ios::trunc) << GzipBytes("");
  });
  auto empty_json = ImportTrace(nothing.string());
  ASSERT_FALSE(empty_json.ok());
  EXPECT_EQ(empty_json.status().message(),
            (nothing / "ASCEND_PROFILER_OUTPUT/communication.json.gz").string() + ": the file is empty");

  // The metadata cut: counted, the import goes on.
  const fs::path metadata = damaged([&](const fs::path& out) { cut(out.parent_path() / "profiler_metadata.json.gz"); });
  auto with_cut_metadata = ImportTrace(metadata.string());
  ASSERT_TRUE(with_cut_metadata.ok()) << with_cut_metadata.status().message();
  ASSERT_EQ((*with_cut_metadata)->diagnostics.Count("bad_profiler_metadata"), 1u);
  EXPECT_NE((*with_cut_metadata)
                ->diagnostics.entries()
                .at("bad_profiler_metadata")
                .description.find("profiler_metadata.json.gz: gzip stream truncated"),
            std::string::npos);

  // Confined to the run's folder (serve, mcp): a compressed member that is a
  // link to a file outside it is refused by name, unread.
  testing::TempDir outside;
  const std::string elsewhere = outside.Write(
      "kernel_details.csv.gz", ReadFile((pristine / "ASCEND_PROFILER_OUTPUT/kernel_details.csv.gz").string()));
  const fs::path linked = damaged([&](const fs::path& out) {
    fs::remove(out / "kernel_details.csv.gz");
    fs::create_symlink(elsewhere, out / "kernel_details.csv.gz");
  });
  ASSERT_TRUE(ConfineImportsTo({linked.parent_path().string()}).ok());
  auto refused = ImportTrace(linked.string());
  ASSERT_TRUE(ConfineImportsTo({}).ok());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find((linked / "ASCEND_PROFILER_OUTPUT/kernel_details.csv.gz").string() +
                                            ": resolves to a file outside the folders"),
            std::string::npos)
      << refused.status().message();
}

// A profiler folder packed as a tar archive (plain and gzip'd, made here
// from the real torch_npu fixture by the tar program) or a zip: said, with
// what to do. They were "unrecognised format".
TEST(CompressedInputsTest, ArchivesAreSaid) {
  testing::TempDir dir;
  const std::string folder = std::string(AIPROF_FIXTURES_DIR) + "/ascend-pt/level1";
  const std::string tar = dir.Path("npu.tar");
  ASSERT_EQ(std::system(("tar cf " + tar + " -C " + folder + " rank0_ascend_pt").c_str()), 0);
  const std::string tgz = dir.Write("npu.tar.gz", GzipBytes(ReadFile(tar)));
  auto plain = ImportTrace(tar);
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().message(), tar +
                                          ": a tar archive: unpack it first (tar xf) and give the trace file or "
                                          "profiler folder inside");
  auto packed = ImportTrace(tgz);
  ASSERT_FALSE(packed.ok());
  EXPECT_EQ(packed.status().message(), tgz +
                                           ": a tar archive (gzip-compressed): unpack it first (tar xf) and give "
                                           "the trace file or profiler folder inside");
  // A zip's local file header, as zip writes it, and an xz stream's magic.
  const std::string zip = dir.Write("npu.zip", std::string("PK\x03\x04\x14\0\0\0\x08\0", 10) + "rank0/x");
  auto zipped = ImportTrace(zip);
  ASSERT_FALSE(zipped.ok());
  EXPECT_NE(zipped.status().message().find(zip + ": a zip archive: unpack it first"), std::string::npos);
  const std::string xz = dir.Write("t.json.xz", std::string("\xFD"
                                                            "7zXZ\0\0\x04",
                                                            8));
  auto xzed = ImportTrace(xz);
  ASSERT_FALSE(xzed.ok());
  EXPECT_NE(xzed.status().message().find(xz + ": xz-compressed: aiprof reads gzip and zstd"), std::string::npos);
}

}  // namespace compressed_inputs_test
}  // namespace aiprof
