#include "src/render/format.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/util/temp_file.h"

namespace aiprof::render {
namespace {

std::vector<OutputFormat> ReportFormats() {
  return {TextFormat(), MarkdownFormat(), HtmlFormat(), JsonFormat(), YamlFormat(), PdfFormat()};
}

std::string Resolve(const std::vector<OutputFormat>& offered, std::string_view format, std::string_view output,
                    std::string_view stdout_format = "") {
  StatusOr<std::string> r = ResolveFormat(offered, {format, output}, stdout_format);
  return r.ok() ? r.value() : "error: " + r.status().message();
}

TEST(FormatTest, FlagWinsOverExtension) {
  EXPECT_EQ(Resolve(ReportFormats(), "json", "out.md"), "json");
  EXPECT_EQ(Resolve(ReportFormats(), "", "out.md"), "md");
}

TEST(FormatTest, UnknownFlagIsAnErrorListingOfferedFormats) {
  std::string r = Resolve(ReportFormats(), "csv", "out.md");
  EXPECT_NE(r.find("error: --format csv"), std::string::npos) << r;
  EXPECT_NE(r.find("text, md, html, json, yaml, pdf"), std::string::npos) << r;
}

TEST(FormatTest, EveryStandardEnding) {
  std::vector<OutputFormat> all = ReportFormats();
  all.push_back(CsvFormat());
  EXPECT_EQ(Resolve(all, "", "a.txt"), "text");
  EXPECT_EQ(Resolve(all, "", "a.md"), "md");
  EXPECT_EQ(Resolve(all, "", "a.markdown"), "md");
  EXPECT_EQ(Resolve(all, "", "a.html"), "html");
  EXPECT_EQ(Resolve(all, "", "a.htm"), "html");
  EXPECT_EQ(Resolve(all, "", "a.json"), "json");
  EXPECT_EQ(Resolve(all, "", "a.yaml"), "yaml");
  EXPECT_EQ(Resolve(all, "", "a.yml"), "yaml");
  EXPECT_EQ(Resolve(all, "", "a.csv"), "csv");
  EXPECT_EQ(Resolve(all, "", "dir.v1/a.PDF"), "pdf");
}

TEST(FormatTest, LongestEndingWins) {
  std::vector<OutputFormat> flame = {HtmlFormat(), {"folded", {".folded", ".txt"}}, SpeedscopeFormat(),
                                     JsonFormat()};
  EXPECT_EQ(Resolve(flame, "", "x.speedscope.json"), "speedscope");
  EXPECT_EQ(Resolve(flame, "", "x.json"), "json");
  EXPECT_EQ(Resolve(flame, "", "x.txt"), "folded");
  // Order of the offered list does not matter.
  std::vector<OutputFormat> reversed(flame.rbegin(), flame.rend());
  EXPECT_EQ(Resolve(reversed, "", "x.speedscope.json"), "speedscope");
}

TEST(FormatTest, StandardOutputUsesDefault) {
  EXPECT_EQ(Resolve(ReportFormats(), "", ""), "text");
  EXPECT_EQ(Resolve(ReportFormats(), "", "-"), "text");
  EXPECT_EQ(Resolve(ReportFormats(), "", "-", "json"), "json");
  EXPECT_NE(Resolve({HtmlFormat()}, "", "-", "json").find("error:"), std::string::npos);
}

TEST(FormatTest, UnknownEndingNamesThePath) {
  std::string r = Resolve(ReportFormats(), "", "out/report.docx");
  EXPECT_NE(r.find("error: out/report.docx: cannot tell"), std::string::npos) << r;
  EXPECT_NE(r.find(".md"), std::string::npos) << r;
  // An ending alone is not a file name with that ending.
  EXPECT_NE(Resolve(ReportFormats(), "", ".md").find("error:"), std::string::npos);
  // A known ending the command does not offer is an error too.
  EXPECT_NE(Resolve({HtmlFormat()}, "", "a.json").find("error: a.json"), std::string::npos);
}

// A device or pipe is written in place (src/base/atomic_file.h): with no
// known ending it gets the standard output's format, as if -o were not
// given. A regular file, or a name with nothing there yet, does not.
TEST(FormatTest, DeviceOrPipeWithoutEndingGetsTheStandardOutputFormat) {
  EXPECT_EQ(Resolve(ReportFormats(), "", "/dev/null"), "text");
  EXPECT_EQ(Resolve(ReportFormats(), "", "/dev/null", "json"), "json");
  EXPECT_EQ(Resolve({HtmlFormat(), JsonFormat()}, "", "/dev/null"), "html");
  EXPECT_EQ(Resolve(ReportFormats(), "md", "/dev/null"), "md");  // --format still wins
  testing::TempDir dir;
  const std::string fifo = dir.Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // never opened: resolving only stats it
  EXPECT_EQ(Resolve(ReportFormats(), "", fifo), "text");
  const std::string plain = dir.Write("out.docx", "old");
  EXPECT_NE(Resolve(ReportFormats(), "", plain).find("error: " + plain + ": cannot tell"), std::string::npos);
  EXPECT_NE(Resolve(ReportFormats(), "", dir.Path("new")).find("cannot tell"), std::string::npos);
  // A folder is no device: still the format error (the writer names the folder).
  EXPECT_NE(Resolve(ReportFormats(), "", dir.path()).find("cannot tell"), std::string::npos);
  // A standard stream's name redirected to a regular file (review 26,
  // finding 3: `-o /dev/stdout > so.txt` was "cannot tell the output
  // format"): written in place, so the standard output's format.
  const int redirected = ::open(plain.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_GE(redirected, 0);
  EXPECT_EQ(Resolve(ReportFormats(), "", "/dev/fd/" + std::to_string(redirected)), "text");
  EXPECT_EQ(Resolve(ReportFormats(), "", "/proc/self/fd/" + std::to_string(redirected), "json"), "json");
  ::close(redirected);
}

TEST(FormatTest, FormatForPathAndOffers) {
  EXPECT_EQ(FormatForPath(ReportFormats(), "a.HTM"), "html");
  EXPECT_EQ(FormatForPath(ReportFormats(), "a.htmlx"), "");
  EXPECT_TRUE(OffersFormat(ReportFormats(), "yaml"));
  EXPECT_FALSE(OffersFormat(ReportFormats(), "csv"));
}

}  // namespace
}  // namespace aiprof::render
