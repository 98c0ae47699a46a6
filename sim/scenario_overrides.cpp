#include "sim/scenario_overrides.hpp"

#include <sstream>
#include <utility>

#include "models/input_error.hpp"

namespace semsim {

ScenarioOverride parse_override(const std::string& assignment, const std::string& file) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0)
    throw InputError(file + ": --set '" + assignment + "': expected key.path=value");
  ScenarioOverride o{assignment.substr(0, equals), {}, "--set " + assignment};
  try {
    o.value = YamlInput::parse(assignment.substr(equals + 1), "value").node();
  } catch (const InputError& e) {
    throw InputError(file + ": --set '" + assignment + "': value is not valid YAML: " + e.what());
  }
  return o;
}

ScenarioOverride nodes_override(const std::string& nodes) {
  // The text as a plain scalar: the cluster's node count check says what is wrong with it.
  return {"cluster.nodes", YAML::Node(nodes), "--nodes " + nodes};
}

namespace {

// `cluster: NAME` is short for `cluster: {preset: NAME}`, which a key below it needs. The scalar
// keeps its data (and so its line, for an unknown preset): the new map holds a handle to it, made
// before the document's node is turned into the map.
void expand_cluster_shorthand(YAML::Node document, const std::string& key_path) {
  if (!key_path.starts_with("cluster.") || !document.IsMap()) return;
  const YAML::Node cluster = std::as_const(document)["cluster"];  // const: looking adds no key
  if (!cluster.IsDefined() || !cluster.IsScalar()) return;
  YAML::Node preset(YAML::NodeType::Null);
  preset = cluster;  // shares the scalar's data, not its node
  YAML::Node map(YAML::NodeType::Map);
  map["preset"] = preset;
  document["cluster"] = map;
}

// `parallelism: {ep: N, attention: dp | tp}` is short for the layout in full, `{attention: {dp: N}}` or
// `{attention: {tp: N}}`, which a key below `parallelism.moe` or `parallelism.attention` needs. The EP
// size keeps its data (and so its line). A shorthand with more keys, or an attention mode that is
// neither, cannot be expanded without guessing: the error says what to write instead.
void expand_parallelism_shorthand(YAML::Node document, const ScenarioOverride& o, const std::string& file) {
  const bool needs_layout = o.key_path == "parallelism.moe" || o.key_path.starts_with("parallelism.moe.") ||
                            o.key_path.starts_with("parallelism.attention.");
  if (!needs_layout || !document.IsMap()) return;
  const YAML::Node parallelism = std::as_const(document)["parallelism"];  // const: looking adds no key
  if (!parallelism.IsDefined() || !parallelism.IsMap()) return;
  const YAML::Node attention = parallelism["attention"];
  if (!attention.IsDefined() || attention.IsMap()) return;  // already the layout in full
  const YAML::Node ep = parallelism["ep"];
  const bool only_ep_and_attention = parallelism.size() == 2 && ep.IsDefined() && ep.IsScalar();
  const std::string mode = attention.IsScalar() ? attention.Scalar() : "";
  if (!only_ep_and_attention || (mode != "dp" && mode != "tp"))
    throw InputError(file + ": " + o.origin +
                     ": the scenario's parallelism is the shorthand {ep, attention, ...}, which --set "
                     "cannot extend with '" +
                     o.key_path +
                     "'; give the layout in full instead: --set 'parallelism={attention: {tp: T, dp: D}, "
                     "moe: {tp: MT, ep: ME}}'");
  YAML::Node size(YAML::NodeType::Null);
  size = ep;  // shares the scalar's data, not its node
  YAML::Node layout(YAML::NodeType::Map);
  layout[mode] = size;
  YAML::Node expanded(YAML::NodeType::Map);
  expanded["attention"] = layout;
  document["parallelism"] = expanded;
}

// The other way round: a shorthand key set on the layout in full (written so, or expanded by an
// earlier --set) would leave a map that is neither; say what to write.
void refuse_shorthand_on_layout(YAML::Node document, const ScenarioOverride& o, const std::string& file) {
  const bool shorthand_key = o.key_path == "parallelism.ep" || o.key_path == "parallelism.dp" ||
                             o.key_path == "parallelism.tp" ||
                             (o.key_path == "parallelism.attention" && !o.value.IsMap());
  if (!shorthand_key || !document.IsMap()) return;
  const YAML::Node parallelism = std::as_const(document)["parallelism"];
  if (!parallelism.IsDefined() || !parallelism.IsMap()) return;
  const YAML::Node attention = parallelism["attention"];
  if (!(attention.IsDefined() && attention.IsMap()) && !parallelism["moe"].IsDefined()) return;
  throw InputError(
      file + ": " + o.origin +
      ": parallelism is the layout in full {attention: {tp, dp}, moe: {tp, ep}} (in the scenario "
      "or after an earlier --set parallelism.attention.* or parallelism.moe.*), which '" +
      o.key_path +
      "' of the shorthand cannot change; set parallelism.attention.tp, .dp, parallelism.moe.tp, "
      ".ep instead, or replace it whole: --set 'parallelism={ep: N, attention: dp}'");
}

}  // namespace

std::string apply_override(YAML::Node document, const ScenarioOverride& o, const std::string& file) {
  expand_cluster_shorthand(document, o.key_path);
  expand_parallelism_shorthand(document, o, file);
  refuse_shorthand_on_layout(document, o, file);
  YAML::Node value = YAML::Clone(o.value);
  YamlInput::mark_as_override(value);
  std::vector<std::string> keys;
  std::stringstream parts(o.key_path);
  for (std::string key; std::getline(parts, key, '.');) {
    if (key.empty()) throw InputError(file + ": " + o.origin + ": empty key in path '" + o.key_path + "'");
    keys.push_back(key);
  }
  if (keys.empty() || o.key_path.back() == '.')
    throw InputError(file + ": " + o.origin + ": empty key in path '" + o.key_path + "'");
  // yaml-cpp nodes are handles: walking with operator[] on copies edits the same tree.
  std::vector<YAML::Node> chain{document};
  std::string path, created;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    path += (i > 0 ? "." : "") + keys[i];
    if (next.IsDefined() && !next.IsMap() && !next.IsNull())
      throw InputError(file + ": " + o.origin + ": '" + keys[i] + "' is not a map");
    if (!next.IsDefined() && created.empty()) created = path;
    chain.push_back(next);
  }
  chain.back()[keys.back()] = value;
  return created;
}

// Values that came from --set have no line in the file: say where they came from. An error may be
// about the overridden key, a key below it, a map the override created on the way (a misspelt
// path), or one of its parent keys with at least two segments. Of several related overrides the
// last applied is named: the document holds its value (--nodes 4 after --set cluster=NAME).
[[noreturn]] void rethrow_with_origin(const InputError& e, const std::vector<ScenarioOverride>& overrides,
                                      const std::vector<std::string>& created) {
  const std::string& path = e.key_path();
  auto within = [](const std::string& key, const std::string& prefix) {
    return key == prefix || key.starts_with(prefix + ".");
  };
  for (std::size_t i = overrides.size(); i-- > 0;) {
    const std::string& key = overrides[i].key_path;
    bool related = !path.empty() && (within(path, key) || (i < created.size() && path == created[i]));
    for (std::size_t dot = key.find('.', key.find('.') + 1); dot != std::string::npos;
         dot = key.find('.', dot + 1))
      related = related || path == key.substr(0, dot);  // parents with at least two segments
    if (related) throw e.set_by(overrides[i].origin);
  }
  throw e;
}

}  // namespace semsim
