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

// Every key a file or folder may be given at (model and cluster files, a calibration profile).
const std::vector<std::vector<const char*>> kPathKeys = {{"model"},
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
                                                         {"workload", "requests_from", "file"},
                                                         {"serving", "speculative", "draft_model"},
                                                         {"serving", "speculative", "acceptance", "trace"}};

// Calls `visit(value, path)` for the scalar at `keys` below `node` when it names an existing file or
// folder, `path` being it resolved against `base_dir`, made absolute. Nodes are handles: the map's
// entries are the document's own.
template <typename Visit>
void visit_path(const YAML::Node& node, std::span<const char* const> keys, const std::string& base_dir,
                const Visit& visit) {
  if (keys.empty()) {
    const std::filesystem::path path = node.IsScalar() ? node.Scalar() : "";
    const std::filesystem::path resolved = path.is_relative() ? std::filesystem::path(base_dir) / path : path;
    if (!path.empty() && path_exists(resolved))
      visit(node, std::filesystem::absolute(resolved).lexically_normal().string());
    return;
  }
  if (!node.IsMap()) return;
  for (const auto& entry : node)
    if (entry.first.Scalar() == keys.front()) visit_path(entry.second, keys.subspan(1), base_dir, visit);
}

}  // namespace

std::string resolved_scenario_yaml(const Scenario& s) {
  YAML::Node document = YAML::Clone(s.document->node());
  YamlInput::unmark_overrides(document);
  document["workload"]["seed"] = s.workload.seed;
  // Relative paths made absolute.
  if (!s.base_dir.empty())
    for (const auto& keys : kPathKeys)
      visit_path(document, keys, s.base_dir, [](YAML::Node value, const std::string& path) {
        if (std::filesystem::path(value.Scalar()).is_relative()) value = path;
      });
  YAML::Emitter out;
  out << document;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::string> scenario_input_files(const Scenario& s) {
  std::vector<std::string> inputs;
  if (s.file != kDefaultScenarioFile) inputs.push_back(s.file);
  if (s.document)
    for (const auto& keys : kPathKeys)
      visit_path(s.document->node(), keys, s.base_dir.empty() ? "." : s.base_dir,
                 [&](const YAML::Node&, const std::string& path) { inputs.push_back(path); });
  return inputs;
}

ScenarioSource read_scenario_source(const std::string& path_or_default) {
  if (path_or_default == "default") return {default_scenario_text(), kDefaultScenarioFile, ""};
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
