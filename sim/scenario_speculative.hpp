#pragma once
// `serving.speculative`: speculative decoding's method, draft tokens and acceptance model
// (workloads/speculative_acceptance.hpp), read and checked against the rest of the scenario.
#include <string>

#include "models/yaml_input.hpp"
#include "workloads/speculative_acceptance.hpp"

namespace semsim {

struct Scenario;

// Reads `in` (the speculative map) into s.serving.speculative; relative files resolve against
// `base_dir`. Needs the model and the attention layout read first.
void read_speculative(const YamlInput& in, const std::string& base_dir, Scenario& s);

}  // namespace semsim
