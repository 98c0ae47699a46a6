#include "sim/runs/sweep_file.hpp"

#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "models/compressed_file.hpp"
#include "models/content_hash.hpp"
#include "models/input_limits.hpp"
#include "models/memory_budget.hpp"
#include "models/yaml_input.hpp"

namespace semsim {
namespace {

// One dimension of the product: its keys step together, so every key has the same number of values.
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<ScenarioOverride>> steps;  // steps[i][k]: key k's value at step i
  std::string where;                                 // "axes[2] (file:line:column)", for errors
};

struct Series {
  std::string name;
  std::vector<ScenarioOverride> values;
  std::string where;
};

std::string value_label(const YAML::Node& value) {
  if (value.IsScalar()) return value.Scalar();
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << value;
  return out.c_str();
}

nlohmann::json canonical(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();  // std::map underneath: keys come out sorted
      for (const auto& entry : node) object[entry.first.Scalar()] = canonical(entry.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const auto& item : node) array.push_back(canonical(item));
      return array;
    }
    case YAML::NodeType::Scalar:
      if (const auto number = parse_number(node.Scalar())) return *number;
      return node.Scalar();
    default:
      return nullptr;
  }
}

// `in` is a map of key path -> value; every value becomes an override that names its own position.
std::vector<ScenarioOverride> read_values(const YamlInput& in) {
  in.expect_map(in.keys());  // every key allowed: this only rejects duplicates
  std::vector<ScenarioOverride> values;
  for (const std::string& key : in.keys()) {
    const YamlInput value = in.required(key);
    values.push_back({key, value.node(), value.location()});
  }
  return values;
}

std::vector<Series> read_series(const YamlInput& in) {
  in.expect_map(in.keys());
  std::vector<Series> series;
  for (const std::string& name : in.keys()) {
    const YamlInput bundle = in.required(name);
    series.push_back({name, read_values(bundle), "series '" + name + "' (" + bundle.location() + ")"});
  }
  return series;
}

std::vector<Axis> read_axes(const YamlInput& in) {
  std::vector<Axis> axes;
  for (const YamlInput& item : in.items()) {
    item.expect_map(item.keys());
    if (item.keys().empty()) item.fail("an axis needs at least one key path with a list of values");
    Axis axis;
    axis.where = item.key_path() + " (" + item.location() + ")";
    for (const std::string& key : item.keys()) {
      const YamlInput list = item.required(key);
      const std::vector<YamlInput> values = list.items();
      if (values.empty()) list.fail("an axis needs at least one value");
      if (!axis.steps.empty() && values.size() != axis.steps.size())
        list.fail(fmt::format("zipped keys need lists of the same length: {} has {} values, {} has {}",
                              axis.keys[0], axis.steps.size(), key, values.size()));
      axis.steps.resize(values.size());
      for (std::size_t i = 0; i < values.size(); ++i)
        axis.steps[i].push_back({key, values[i].node(), values[i].location()});
      axis.keys.push_back(key);
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

// Each key path may be given in one place only: set, series (any number of them), or one axis.
void check_keys_given_once(const YamlInput& root, const std::vector<ScenarioOverride>& set,
                           const std::vector<Series>& series, const std::vector<Axis>& axes) {
  std::map<std::string, std::string> owner;  // key path -> where it is given
  auto claim = [&](const std::string& key, const std::string& where) {
    const auto [it, inserted] = owner.emplace(key, where);
    if (!inserted && it->second != where)
      root.fail("key path '" + key + "' is given in " + it->second + " and again in " + where);
  };
  for (const auto& value : set) claim(value.key_path, "set");
  for (const auto& s : series)
    for (const auto& value : s.values) claim(value.key_path, "series");
  for (std::size_t a = 0; a < axes.size(); ++a)
    for (const auto& key : axes[a].keys) claim(key, "axes[" + std::to_string(a) + "]");
}

class Expander {
 public:
  explicit Expander(ScenarioSource base) : base_(std::move(base)) {
    base_document_ = YamlInput::parse(base_.text, base_.file).node();
  }

  // Values that are bad by themselves are input errors, not failed points: try each on the base.
  void check_alone(const std::vector<ScenarioOverride>& values, const std::string& where) const {
    try {
      load_scenario(base_.text, base_.file, base_.base_dir, values);
    } catch (const InputError& e) {
      // The bad value is in the sweep file, at its origin: that location comes first.
      if (!e.origin().empty()) throw InputError(e.origin() + ": " + e.what(), e.key_path(), e.origin());
      throw InputError(std::string(e.what()) + " (with the values of " + where + ")", e.key_path());
    }
  }

  SweepPoint point(std::size_t index, std::vector<ScenarioOverride> overrides,
                   std::vector<std::string> labels) const {
    SweepPoint p;
    p.index = index;
    YAML::Node document = YAML::Clone(base_document_);
    for (const auto& o : overrides) apply_override(document, o, base_.file);
    p.id = point_id(document);
    try {
      p.scenario = load_scenario(base_.text, base_.file, base_.base_dir, overrides);
    } catch (const InputError& e) {
      p.error = e.what();
    }
    p.overrides = std::move(overrides);
    p.labels = std::move(labels);
    return p;
  }

 private:
  ScenarioSource base_;
  YAML::Node base_document_;
};

// The scenario `base:` names: a file (relative to the sweep file) or 'default'.
ScenarioSource read_base(const YamlInput& root, const std::string& path) {
  const YamlInput base_ref = root.required("base");
  std::string base_path = base_ref.as_string();
  if (base_path != "default" && std::filesystem::path(base_path).is_relative())
    base_path = (std::filesystem::path(path).parent_path() / base_path).string();
  ScenarioSource base;
  try {
    base = read_scenario_source(base_path);
  } catch (const InputError& e) {
    base_ref.fail(e.what());
  }
  // The embedded scenario has no folder: paths the sweep gives (placement files, traces) are
  // relative to the sweep file, where they were written.
  if (base_path == "default") base.base_dir = std::filesystem::path(path).parent_path().string();
  return base;
}

// Counted before anything is expanded or validated: each point costs a scenario's validation.
void check_point_count(const YamlInput& root, const std::vector<Series>& series,
                       const std::vector<Axis>& axes) {
  double points = std::max<double>(1, static_cast<double>(series.size()));
  for (const Axis& axis : axes) points *= static_cast<double>(axis.steps.size());
  if (points > static_cast<double>(limits::kSweepPoints))
    root.fail(
        fmt::format("the sweep has {:.0f} points, more than the {} one sweep may have: split it into "
                    "several sweep files",
                    points, limits::kSweepPoints));
  // Every point is held as a validated scenario: about 50 KB each for the default one (measured).
  constexpr double kBytesPerPoint = 50e3;
  try {
    check_memory_need(points * kBytesPerPoint, fmt::format("the sweep's {:.0f} validated points", points));
  } catch (const InputError& e) {
    root.fail(e.what());
  }
}

// Each series' values and each axis value, with `set`, on the base alone (see Expander::check_alone).
void check_values_alone(const Expander& expander, const std::vector<ScenarioOverride>& set,
                        const std::vector<Series>& series, const std::vector<Axis>& axes) {
  for (const Series& s : series) {
    std::vector<ScenarioOverride> values = set;
    values.insert(values.end(), s.values.begin(), s.values.end());
    expander.check_alone(values, s.where);
  }
  for (const Axis& axis : axes)
    for (std::size_t i = 0; i < axis.steps.size(); ++i) {
      std::vector<ScenarioOverride> values = set;
      values.insert(values.end(), axis.steps[i].begin(), axis.steps[i].end());
      expander.check_alone(values, fmt::format("{} value {}", axis.where, i + 1));
    }
}

// The points of each series over the product of the axes, into `sweep`; `labelled`: each point's
// labels start with its series' name.
void expand(const YamlInput& root, const Expander& expander, const std::vector<ScenarioOverride>& set,
            const std::vector<Series>& series, const std::vector<Axis>& axes, bool labelled, Sweep& sweep) {
  std::map<std::string, std::size_t> seen;  // point id -> index, to refuse two points that are one scenario
  for (const Series& s : series) {
    std::vector<std::size_t> step(axes.size(), 0);  // an odometer over the axes, last one fastest
    while (true) {
      std::vector<ScenarioOverride> overrides = set;
      overrides.insert(overrides.end(), s.values.begin(), s.values.end());
      std::vector<std::string> labels;
      if (labelled) labels.push_back(s.name);
      for (std::size_t a = 0; a < axes.size(); ++a)
        for (const ScenarioOverride& value : axes[a].steps[step[a]]) {
          overrides.push_back(value);
          labels.push_back(value_label(value.value));
        }
      SweepPoint p = expander.point(sweep.points.size(), std::move(overrides), std::move(labels));
      if (const auto [it, inserted] = seen.emplace(p.id, p.index); !inserted)
        root.fail(fmt::format("points {} ({}) and {} ({}) resolve to the same scenario", it->second + 1,
                              fmt::join(sweep.points[it->second].labels, ", "), p.index + 1,
                              fmt::join(p.labels, ", ")));
      sweep.points.push_back(std::move(p));
      std::size_t a = axes.size();
      while (a > 0 && ++step[a - 1] == axes[a - 1].steps.size()) step[--a] = 0;
      if (a == 0) break;
    }
  }
}

}  // namespace

std::string point_id(const YAML::Node& scenario_document) {
  return content_hash(canonical(scenario_document).dump());
}

Sweep load_sweep(const std::string& path) {
  if (is_folder(path)) throw InputError(path + ": is a directory, not a sweep file");
  const YamlInput root = YamlInput::load_file(path);
  if (!root.is_map())
    root.fail("a sweep file must be a map with sweep, base, and optionally set, series, axes");
  root.expect_map({"sweep", "base", "set", "series", "axes"});
  if (root.required("sweep").as_int() != 1)
    root.required("sweep").fail("unsupported sweep version (this semsim reads 1)");
  const ScenarioSource base = read_base(root, path);

  const std::vector<ScenarioOverride> set =
      root.has("set") ? read_values(root.required("set")) : std::vector<ScenarioOverride>{};
  std::vector<Series> series =
      root.has("series") ? read_series(root.required("series")) : std::vector<Series>{};
  const std::vector<Axis> axes = root.has("axes") ? read_axes(root.required("axes")) : std::vector<Axis>{};
  check_keys_given_once(root, set, series, axes);
  check_point_count(root, series, axes);

  Sweep sweep;
  sweep.file = path;
  if (!series.empty()) sweep.columns.push_back("series");
  for (const Axis& axis : axes) sweep.columns.insert(sweep.columns.end(), axis.keys.begin(), axis.keys.end());

  const Expander expander(base);
  const bool labelled = !series.empty();
  if (series.empty()) series.push_back({"", {}, "set"});
  check_values_alone(expander, set, series, axes);
  expand(root, expander, set, series, axes, labelled, sweep);
  std::string expansion = fmt::format("{}\n", fmt::join(sweep.columns, ","));
  for (const SweepPoint& p : sweep.points) expansion += p.id + "\n";
  sweep.fingerprint = content_hash(expansion);
  return sweep;
}

}  // namespace semsim
