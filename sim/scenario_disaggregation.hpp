#pragma once
// `disaggregation:` read into its two pools, each a scenario of its own (see Disaggregation).
#include <functional>
#include <memory>
#include <vector>

#include "models/yaml_input.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_overrides.hpp"

namespace semsim {

// Reads a pool's scenario: the whole scenario's document with `overrides` (the pool's nodes, role
// and `set:` keys after the run's own), without its `disaggregation` key.
using PoolLoader = std::function<Scenario(const std::vector<ScenarioOverride>& overrides)>;

// `in` is the `disaggregation` key of `whole`, read with `overrides`.
std::shared_ptr<const Disaggregation> read_disaggregation(const YamlInput& in, const Scenario& whole,
                                                          const std::vector<ScenarioOverride>& overrides,
                                                          const PoolLoader& load);

}  // namespace semsim
