// The list of views. A new view: its folder under src/view/, a function
// returning its ViewSpec, and one line here.
#include "src/view/flame/flame_view.h"
#include "src/view/view_registry.h"

namespace aiprof {

const std::vector<ViewSpec>& AllViews() {
  static const std::vector<ViewSpec> views = {
      FlameViewSpec(),
  };
  return views;
}

}  // namespace aiprof
