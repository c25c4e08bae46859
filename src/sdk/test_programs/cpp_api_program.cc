// A C++ program using include/aiprof/aiprof.hpp, for test/sdk/sdk_test.cc:
// the scope macros, a step, a node, a counter, and a Request moved to
// another thread that ends it. Built twice: as is, and with -DAIPROF_DISABLE
// (every macro compiles to nothing, so that build records nothing).
#include <thread>
#include <utility>

#include "aiprof/aiprof.hpp"

namespace {

int Handle(int x) {
  AIPROF_FUNCTION();
  AIPROF_SCOPE("cpp_scope");
  return x * 2;
}

}  // namespace

int main() {
  int sum = 0;
  {
    AIPROF_ITERATION();
    AIPROF_NODE("cpp_node");
    for (int i = 0; i < 3; ++i) sum += Handle(i);
    AIPROF_COUNTER("cpp_counter", static_cast<double>(sum));
  }
  std::thread worker;
  {
    AIPROF_SCOPE("submit");
    aiprof::sdk::Request request("cpp_request");
    request.Prefill(8);
    request.Token();
    worker = std::thread([r = std::move(request)]() mutable {
      AIPROF_SCOPE("serve");
      r.Tokens(2);
      r.End();
    });
  }
  worker.join();
  return sum == 6 ? 0 : 1;
}
