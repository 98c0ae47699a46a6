#include "sim/step_graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace semsim {

Activity& StepGraph::add(ActivityKind kind, Phase phase, int layer, int micro_batch,
                         std::initializer_list<int> after) {
  if (after.size() > Activity::kMaxDependencies) throw std::logic_error("step graph: too many dependencies");
  for (const int dependency : after)
    if (dependency < 0 || dependency >= static_cast<int>(size_))
      throw std::logic_error("step graph: a dependency must name an earlier activity");
  if (size_ == activities_.size()) activities_.emplace_back();
  Activity& a = activities_[size_++];
  a.kind = kind;
  a.phase = phase;
  a.layer = layer;
  a.micro_batch = micro_batch;
  a.dependency_count = static_cast<int>(after.size());
  std::copy(after.begin(), after.end(), a.dependencies.begin());
  return a;
}

Activity& StepGraph::add_compute(Phase phase, int layer, int micro_batch, std::initializer_list<int> after) {
  Activity& a = add(ActivityKind::kCompute, phase, layer, micro_batch, after);
  a.seconds.resize(static_cast<std::size_t>(devices_));  // every entry is the caller's to set
  return a;
}

Activity& StepGraph::add_collective(Phase phase, int layer, int micro_batch, const Collective& collective,
                                    std::initializer_list<int> after) {
  Activity& a = add(ActivityKind::kCollective, phase, layer, micro_batch, after);
  a.seconds.clear();
  a.collective = collective;
  return a;
}

}  // namespace semsim
