// Status and StatusOr: fallible calls return these; no exceptions cross modules.
#ifndef AIPROF_SRC_BASE_STATUS_H_
#define AIPROF_SRC_BASE_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "src/base/check.h"

namespace aiprof {

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Error(std::string message) { return Status(std::move(message)); }
  // A bad command line (a value or a combination of flags no run could
  // use): the CLI exits 2, as for CLI11's own parse errors.
  static Status Usage(std::string message) {
    Status s(std::move(message));
    s.usage_ = true;
    return s;
  }
  bool ok() const { return !message_.has_value(); }
  bool usage() const { return usage_; }
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
  bool usage_ = false;
};

inline Status OkStatus() { return Status(); }
Status ErrStatus(std::string message);
inline Status UsageStatus(std::string message) { return Status::Usage(std::move(message)); }

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : data_(std::move(status)) {  // NOLINT
    AIPROF_CHECK(!std::get<Status>(data_).ok());
  }
  bool ok() const { return std::holds_alternative<T>(data_); }
  Status status() const { return ok() ? OkStatus() : std::get<Status>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& value() const& { return std::get<T>(data_); }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<Status, T> data_;
};

}  // namespace aiprof

#define AIPROF_CONCAT_INNER(a, b) a##b
#define AIPROF_CONCAT(a, b) AIPROF_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    ::aiprof::Status status_macro_ = (expr);  \
    if (!status_macro_.ok()) return status_macro_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(AIPROF_CONCAT(status_or_, __LINE__), lhs, expr)

#endif  // AIPROF_SRC_BASE_STATUS_H_
