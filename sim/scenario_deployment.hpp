#pragma once
// `deployment:` read into its instances, each a scenario of its own (see Deployment).
#include <functional>
#include <memory>
#include <vector>

#include "models/yaml_input.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_disaggregation.hpp"
#include "sim/scenario_overrides.hpp"

namespace semsim {

// Reads an instance's scenario: the whole scenario's document with `overrides` (the instance's nodes
// and `set:` keys after the run's own), without its `deployment` key.
using InstanceLoader = std::function<Scenario(const std::vector<ScenarioOverride>& overrides)>;

// `in` is the `deployment` key of `whole`, read with `overrides`. With `disaggregation` (the key of
// `whole`, read into whole.disaggregation), each instance is a prefill pool and a decode pool on its
// own nodes: its pools read from that key over the instance's own keys.
std::shared_ptr<const Deployment> read_deployment(const YamlInput& in, const Scenario& whole,
                                                  const std::vector<ScenarioOverride>& overrides,
                                                  const InstanceLoader& load,
                                                  const std::optional<YamlInput>& disaggregation);

}  // namespace semsim
