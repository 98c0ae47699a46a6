#pragma once
// Presets shipped inside the binary (models/presets/**.yaml), found by name; any value that looks
// like a path (contains '/' or ends in .yaml) is read from disk instead.
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/moe_model.hpp"

namespace semsim {

enum class PresetKind { kModel, kDevice, kCluster };

std::vector<std::string> preset_names(PresetKind kind);

// `ref` is the YAML value naming the preset (its location is used for errors); `base_dir` resolves
// relative paths. A cluster may also be `{preset: NAME, nodes: N, fabric: KIND}` (Cluster::sized).
MoeModel load_model(const YamlInput& ref, const std::string& base_dir);
Device load_device(const YamlInput& ref, const std::string& base_dir);
Cluster load_cluster(const YamlInput& ref, const std::string& base_dir);

// By plain name (CLI listings, tests).
MoeModel model_preset(const std::string& name);
Cluster cluster_preset(const std::string& name);

}  // namespace semsim
