// aiprof tracing SDK: C++ scopes over the C API (include/aiprof/aiprof.h).
//
//   #include <aiprof/aiprof.hpp>
//   void Decode() {
//     AIPROF_FUNCTION();                 // span named "Decode" until return
//     { AIPROF_SCOPE("dequant"); Dequant(); }
//   }
//   aiprof::sdk::Request r("request");   // movable; ends when destroyed or End()
//
// Compile with -DAIPROF_DISABLE to make every macro, class and helper here
// compile to nothing (the C functions of aiprof.h stay callable).
#ifndef AIPROF_AIPROF_HPP_
#define AIPROF_AIPROF_HPP_

#include <cstdint>

#include "aiprof/aiprof.h"

#ifndef AIPROF_DISABLE
#define AIPROF_CALL_(call) call
#else
#define AIPROF_CALL_(call) static_cast<void>(0)
#endif

namespace aiprof::sdk {

// A span from construction to destruction on the constructing thread.
class Scope {
 public:
  explicit Scope(const char* name) noexcept { (void)name; AIPROF_CALL_(aiprof_span_begin(name)); }
  ~Scope() { AIPROF_CALL_(aiprof_span_end()); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
};

// A pipeline node ("node:<name>") from construction to destruction.
class NodeScope {
 public:
  explicit NodeScope(const char* node) noexcept { (void)node; AIPROF_CALL_(aiprof_node_begin(node)); }
  ~NodeScope() { AIPROF_CALL_(aiprof_node_end()); }
  NodeScope(const NodeScope&) = delete;
  NodeScope& operator=(const NodeScope&) = delete;
};

// One step (iteration) from construction to destruction.
class IterationScope {
 public:
  IterationScope() noexcept { AIPROF_CALL_(aiprof_iteration_start()); }
  ~IterationScope() { AIPROF_CALL_(aiprof_iteration_end()); }
  IterationScope(const IterationScope&) = delete;
  IterationScope& operator=(const IterationScope&) = delete;
};

// A request: begins at construction, ends at End() or destruction, on
// whichever thread holds it then (move it between threads).
class Request {
 public:
  explicit Request(const char* name) noexcept {
    (void)name;
    AIPROF_CALL_(id_ = aiprof_request_begin(name));
  }
  Request(Request&& other) noexcept : id_(other.id_) { other.id_ = 0; }
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      End();
      id_ = other.id_;
      other.id_ = 0;
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { End(); }
  void End() noexcept {
    AIPROF_CALL_(aiprof_request_end(id_));
    id_ = 0;
  }
  uint64_t id() const { return id_; }
  // LLM serving (aiprof_request_prefill/_token/_tokens): prefill starts now
  // over `prompt_tokens` input tokens; one or `n` output tokens are ready now.
  void Prefill(uint32_t prompt_tokens) noexcept {
    (void)prompt_tokens;
    AIPROF_CALL_(aiprof_request_prefill(id_, prompt_tokens));
  }
  void Token() noexcept { AIPROF_CALL_(aiprof_request_token(id_)); }
  void Tokens(uint32_t n) noexcept {
    (void)n;
    AIPROF_CALL_(aiprof_request_tokens(id_, n));
  }

 private:
  uint64_t id_ = 0;
};

inline void Counter(const char* name, double value) noexcept {
  (void)name, (void)value;
  AIPROF_CALL_(aiprof_counter(name, value));
}
inline void Mark(const char* name) noexcept {
  (void)name;
  AIPROF_CALL_(aiprof_mark(name));
}
inline void Flush() noexcept { AIPROF_CALL_(aiprof_flush()); }

}  // namespace aiprof::sdk

#define AIPROF_CONCAT_INNER_(a, b) a##b
#define AIPROF_CONCAT_(a, b) AIPROF_CONCAT_INNER_(a, b)

#ifndef AIPROF_DISABLE
// A span named `name` (a string literal) until the end of the enclosing block.
#define AIPROF_SCOPE(name) ::aiprof::sdk::Scope AIPROF_CONCAT_(aiprof_scope_, __LINE__)(name)
// A span named after the enclosing function (__func__) until it returns.
#define AIPROF_FUNCTION() AIPROF_SCOPE(__func__)
// A pipeline node until the end of the enclosing block.
#define AIPROF_NODE(name) ::aiprof::sdk::NodeScope AIPROF_CONCAT_(aiprof_node_, __LINE__)(name)
// A step until the end of the enclosing block.
#define AIPROF_ITERATION() ::aiprof::sdk::IterationScope AIPROF_CONCAT_(aiprof_iteration_, __LINE__)
// A counter sample.
#define AIPROF_COUNTER(name, value) aiprof_counter((name), (value))
#else
#define AIPROF_SCOPE(name) static_cast<void>(0)
#define AIPROF_FUNCTION() static_cast<void>(0)
#define AIPROF_NODE(name) static_cast<void>(0)
#define AIPROF_ITERATION() static_cast<void>(0)
#define AIPROF_COUNTER(name, value) static_cast<void>(0)
#endif

#endif  // AIPROF_AIPROF_HPP_
