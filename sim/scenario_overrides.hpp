#pragma once
// Values given outside the scenario file (--set, --nodes, a sweep's axes, a disaggregated pool's
// `set:`), applied to the scenario document before validation, and the errors they cause named by
// where they were given.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "models/input_error.hpp"
#include "models/yaml_input.hpp"

namespace semsim {

// A value for a key path ("workload.arrival.rate"), applied to the scenario document before
// validation. `origin` says where it was given ("--set k=v", "sweep.yaml:7:30"): errors about the
// key end with "(value set by ORIGIN)", since the value has no line in the scenario file.
struct ScenarioOverride {
  std::string key_path;
  YAML::Node value;
  std::string origin;
};

// Parses a --set "key.path=value" string; `file` names the scenario in errors.
ScenarioOverride parse_override(const std::string& assignment, const std::string& file);
// `--nodes N`: an override of cluster.nodes, checked where the scenario's own value would be.
ScenarioOverride nodes_override(const std::string& nodes);
// Sets the value (a copy) in `document`, creating maps on the way; returns the key path of the first
// map it created ("" when the path's maps all existed). A key below `cluster: NAME` turns it into
// `cluster: {preset: NAME}` first.
std::string apply_override(YAML::Node document, const ScenarioOverride& override_value,
                           const std::string& file);

// Values that came from an override have no line in the file: rethrows `e` saying where the value
// came from when it is about an overridden key. `created[i]` is what apply_override returned for
// overrides[i] (a misspelt path's first created map), where known.
[[noreturn]] void rethrow_with_origin(const InputError& e, const std::vector<ScenarioOverride>& overrides,
                                      const std::vector<std::string>& created = {});

}  // namespace semsim
