// A small document tree (null, bool, number, string, list, map with ordered
// keys) that structured results are turned into once and then written as
// JSON or YAML, so both formats carry the same content.
#ifndef AIPROF_SRC_RENDER_TREE_H_
#define AIPROF_SRC_RENDER_TREE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiprof {

class Tree {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kList, kMap };

  Tree() = default;
  static Tree Null() { return Tree(); }
  static Tree Bool(bool b);
  static Tree Number(double v);  // NaN and infinities are written as null
  // A number written exactly: an int64 past 2^53 (epoch nanoseconds, ~1.8e18;
  // a monotonic clock after 104 days up) is not exact in a double.
  static Tree Integer(int64_t v);
  static Tree String(std::string_view s);
  static Tree List();
  static Tree Map();

  // Map: appends key (keys keep insertion order); returns the new value.
  Tree& Set(std::string_view key, Tree value);
  // List: appends; returns the new value.
  Tree& Push(Tree value);

  Kind kind() const { return kind_; }
  bool boolean() const { return bool_; }
  double number() const { return number_; }  // an Integer's value, rounded
  bool is_integer() const { return is_integer_; }
  int64_t integer() const { return integer_; }
  const std::string& str() const { return str_; }
  const std::vector<Tree>& items() const { return items_; }
  const std::vector<std::pair<std::string, Tree>>& entries() const { return entries_; }

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  bool is_integer_ = false;
  int64_t integer_ = 0;
  std::string str_;
  std::vector<Tree> items_;
  std::vector<std::pair<std::string, Tree>> entries_;
};

// JSON with two-space indentation; strings escaped (escape.h).
std::string TreeToJson(const Tree& tree);
// Block-style YAML through yaml-cpp's emitter, which quotes what needs it.
std::string TreeToYaml(const Tree& tree);

}  // namespace aiprof

#endif  // AIPROF_SRC_RENDER_TREE_H_
