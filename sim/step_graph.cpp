#include "sim/step_graph.hpp"

#include <stdexcept>

namespace semsim {

void StepGraph::reject_dependency() {
  throw std::logic_error("step graph: at most 4 dependencies, each an earlier activity");
}

}  // namespace semsim
