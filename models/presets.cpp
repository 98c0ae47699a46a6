#include "models/presets.hpp"

#include <filesystem>
#include <string_view>
#include <utility>

#include "models/compressed_file.hpp"

namespace semsim {
namespace presets_data {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_files();
}

namespace {

std::string folder(PresetKind kind) {
  switch (kind) {
    case PresetKind::kModel:
      return "models/";
    case PresetKind::kDevice:
      return "hardware/";
    default:
      return "clusters/";
  }
}

bool looks_like_path(const std::string& value) {
  return value.find('/') != std::string::npos || value.ends_with(".yaml") || value.ends_with(".yml");
}

// The preset's YAML document, from the embedded set or from disk.
YamlInput open_preset(PresetKind kind, const YamlInput& ref, const std::string& base_dir) {
  const std::string value = ref.as_string();
  if (looks_like_path(value)) {
    std::filesystem::path path(value);
    if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
    if (!path_exists(path)) ref.fail("preset file '" + path.string() + "' does not exist");
    if (is_folder(path)) ref.fail("preset file '" + path.string() + "' is a folder, not a file");
    return YamlInput::load_file(path.string());
  }
  const std::string wanted = folder(kind) + value + ".yaml";
  for (const auto& [name, text] : presets_data::embedded_files())
    if (name == wanted) return YamlInput::parse(std::string(text), "<preset " + std::string(name) + ">");
  std::string list;
  const auto names = preset_names(kind);
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  ref.fail("unknown preset '" + value + "'" + did_you_mean(value, names) + "; available: " + list);
}

// A cluster preset by name or file, at its own size.
Cluster load_cluster_file(const YamlInput& ref, const std::string& base_dir) {
  const YamlInput doc = open_preset(PresetKind::kCluster, ref, base_dir);
  // A cluster file on disk names its device relative to itself; an embedded one by preset name.
  const std::string cluster_dir =
      looks_like_path(ref.as_string()) ? std::filesystem::path(doc.file()).parent_path().string() : base_dir;
  return Cluster::from_yaml(
      doc, [&](const YamlInput& device_ref) { return load_device(device_ref, cluster_dir); });
}

YamlInput plain_name(const std::string& name) {
  return YamlInput(YAML::Node(name), std::make_shared<const std::string>("<name>"), "");
}

}  // namespace

std::vector<std::string> preset_names(PresetKind kind) {
  std::vector<std::string> names;
  const std::string prefix = folder(kind);
  for (const auto& [name, text] : presets_data::embedded_files()) {
    if (!name.starts_with(prefix)) continue;
    std::string stem(name.substr(prefix.size()));
    names.push_back(stem.substr(0, stem.size() - std::string_view(".yaml").size()));
  }
  return names;
}

MoeModel load_model(const YamlInput& ref, const std::string& base_dir) {
  return MoeModel::from_yaml(open_preset(PresetKind::kModel, ref, base_dir));
}

Device load_device(const YamlInput& ref, const std::string& base_dir) {
  return Device::from_yaml(open_preset(PresetKind::kDevice, ref, base_dir));
}

Cluster load_cluster(const YamlInput& ref, const std::string& base_dir) {
  // `{preset: NAME, nodes: N, fabric: KIND}`: the preset at another size or fabric.
  if (ref.is_map()) {
    ref.expect_map({"preset", "nodes", "fabric"});
    return load_cluster_file(ref.required("preset"), base_dir)
        .sized(ref.optional("nodes"), ref.optional("fabric"));
  }
  return load_cluster_file(ref, base_dir);
}

MoeModel model_preset(const std::string& name) {
  return load_model(plain_name(name), "");
}
Cluster cluster_preset(const std::string& name) {
  return load_cluster(plain_name(name), "");
}

}  // namespace semsim
