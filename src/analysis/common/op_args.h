// Reading PyTorch op args ("Input Dims", "Input type") from a slice. The
// importer keeps nested JSON as text (ArgType::kJson); these parse it.
#ifndef AIPROF_SRC_ANALYSIS_COMMON_OP_ARGS_H_
#define AIPROF_SRC_ANALYSIS_COMMON_OP_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

using Dims = std::vector<int64_t>;

// "[[8, 3, 64, 64], [], [2]]" → {{8,3,64,64},{},{2}}; nullopt if malformed
// (a number of over 18 digits included, in either form).
// torch_npu writes the same as text, one input per ";\r\n"-separated item
// ("32,3,224,224;\r\n64,3,11,11;\r\n" → {{32,3,224,224},{64,3,11,11},{}}):
// read alike, an empty item being Kineto's [].
std::optional<std::vector<Dims>> ParseDimsList(std::string_view text);
// One recorded integer list or scalar, as Concrete Inputs write an int[]
// argument: "[2, 2]" → {2, 2}, "1" → {1}; nullopt if malformed or if
// anything follows it.
std::optional<Dims> ParseIntList(std::string_view text);
// "[\"float\", \"\", \"Scalar\"]" → {"float", "", "Scalar"}; nullopt if malformed.
// torch_npu's text form ("float;\r\nNone;\r\nScalar") is read alike.
std::optional<std::vector<std::string>> ParseStringList(std::string_view text);

// An arg's JSON text on one line, for a label or a grouping key: some traces
// write it indented over several lines or end it with a newline. Runs of
// white space become one space, none at the ends, after an opening bracket
// or before a closing one, so texts that differ only in white space are one.
std::string OneLineArgText(std::string_view text);

// Looks up keys once per trace.
class OpArgReader {
 public:
  explicit OpArgReader(const Trace& trace);
  // Input Dims / Input type of slice `s`, or nullopt when absent or malformed.
  std::optional<std::vector<Dims>> InputDims(uint32_t s) const;
  std::optional<std::vector<std::string>> InputTypes(uint32_t s) const;
  // "Concrete Inputs" (scalar values as text, "" for tensors), or nullopt.
  std::optional<std::vector<std::string>> ConcreteInputs(uint32_t s) const;
  // A numeric arg (int, uint or double) named `key`, or nullopt.
  std::optional<double> Number(uint32_t s, std::string_view key) const;
  // A string arg named `key`, or nullopt.
  std::optional<std::string_view> String(uint32_t s, std::string_view key) const;

 private:
  const Trace& trace_;
  std::optional<StringId> dims_key_, types_key_;
  std::optional<std::string_view> Text(uint32_t s, std::optional<StringId> key) const;
  std::optional<StringId> Key(std::string_view name) const;
};

// Bytes per element of a PyTorch dtype name ("float" 4, "c10::Half" 2,
// "double" 8, "long int" 8, ...); 0 when unknown or not a tensor.
int BytesPerElement(std::string_view dtype);

// Product of dims (1 for a 0-dim tensor); INT64_MAX where it would overflow.
int64_t NumElements(const Dims& d);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_OP_ARGS_H_
