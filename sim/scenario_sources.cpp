// Where a scenario comes from (a file, or the embedded default), and the scenario as it ran written
// back as YAML.
#include <filesystem>
#include <span>

#include "models/compressed_file.hpp"
#include "models/input_limits.hpp"
#include "sim/scenario.hpp"
#include "sim/scenario_overrides.hpp"

namespace semsim {
namespace scenarios_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
}

std::string default_scenario_text() {
  for (const auto& [name, text] : scenarios_data::embedded_files())
    if (name == "default.yaml") return std::string(text);
  throw std::logic_error("embedded default scenario missing");
}

Scenario load_scenario(const std::string& text, const std::string& file, const std::string& base_dir,
                       const std::vector<std::string>& assignments, long long seed) {
  std::vector<ScenarioOverride> overrides;
  for (const auto& assignment : assignments) overrides.push_back(parse_override(assignment, file));
  return load_scenario(text, file, base_dir, overrides, seed);
}

namespace {

// The scalar at `keys` below `node`, when it is a relative path naming a file or folder under
// `base_dir`, made absolute. Nodes are handles: the map's entries are the document's own.
void make_absolute(const YAML::Node& node, std::span<const char* const> keys, const std::string& base_dir) {
  if (keys.empty()) {
    const std::filesystem::path path = node.IsScalar() ? node.Scalar() : "";
    if (!path.empty() && path.is_relative() && path_exists(std::filesystem::path(base_dir) / path)) {
      YAML::Node value = node;
      value = std::filesystem::absolute(std::filesystem::path(base_dir) / path).lexically_normal().string();
    }
    return;
  }
  if (!node.IsMap()) return;
  for (const auto& entry : node)
    if (entry.first.Scalar() == keys.front()) make_absolute(entry.second, keys.subspan(1), base_dir);
}

}  // namespace

std::string resolved_scenario_yaml(const Scenario& s) {
  YAML::Node document = YAML::Clone(s.document->node());
  YamlInput::unmark_overrides(document);
  document["workload"]["seed"] = s.workload.seed;
  // Every key a file or folder may be given at (model and cluster files, a calibration profile).
  const std::vector<std::vector<const char*>> path_keys = {{"model"},
                                                           {"cluster"},
                                                           {"cluster", "preset"},
                                                           {"profile"},
                                                           {"calibration"},
                                                           {"calibration", "profile"},
                                                           {"policies", "placement", "file"},
                                                           {"workload", "routing", "file"},
                                                           {"workload", "arrival", "file"},
                                                           {"workload", "input_len", "file"},
                                                           {"workload", "output_len", "file"},
                                                           {"workload", "requests_from", "file"}};
  if (!s.base_dir.empty())
    for (const auto& keys : path_keys) make_absolute(document, keys, s.base_dir);
  YAML::Emitter out;
  out << document;
  return std::string(out.c_str()) + "\n";
}

ScenarioSource read_scenario_source(const std::string& path_or_default) {
  if (path_or_default == "default") return {default_scenario_text(), "<default>", ""};
  if (!path_exists(path_or_default))
    throw InputError(path_or_default + ": cannot open scenario file (no such file)");
  return {read_text_file(path_or_default, limits::kYamlFileBytes), path_or_default,
          std::filesystem::path(path_or_default).parent_path().string()};
}

Scenario load_scenario_file(const std::string& path_or_default, const std::vector<std::string>& overrides,
                            long long seed, const std::optional<std::string>& nodes) {
  const ScenarioSource source = read_scenario_source(path_or_default);
  std::vector<ScenarioOverride> all;
  for (const auto& assignment : overrides) all.push_back(parse_override(assignment, source.file));
  if (nodes) all.push_back(nodes_override(*nodes));
  return load_scenario(source.text, source.file, source.base_dir, all, seed);
}

}  // namespace semsim
