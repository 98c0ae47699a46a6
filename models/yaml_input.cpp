#include "models/yaml_input.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

namespace semsim {
namespace {

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "an undefined value";
  }
}

}  // namespace

YamlInput YamlInput::parse(const std::string& text, const std::string& file_name) {
  auto file = std::make_shared<const std::string>(file_name);
  try {
    return YamlInput(YAML::Load(text), file, "");
  } catch (const YAML::Exception& e) {
    throw InputError(file_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
}

YamlInput YamlInput::load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

YamlInput::YamlInput(YAML::Node node, std::shared_ptr<const std::string> file, std::string key_path)
    : node_(std::move(node)), file_(std::move(file)), key_path_(std::move(key_path)) {}

void YamlInput::mark_as_override(YAML::Node node) {
  node.SetTag(kOverrideTag);
  if (node.IsMap())
    for (auto entry : node) mark_as_override(entry.second);
  if (node.IsSequence())
    for (auto item : node) mark_as_override(item);
}

void YamlInput::unmark_overrides(YAML::Node node) {
  if (node.Tag() == kOverrideTag) node.SetTag("?");  // yaml-cpp's tag of an untagged plain value
  if (node.IsMap())
    for (auto entry : node) unmark_overrides(entry.second);
  if (node.IsSequence())
    for (auto item : node) unmark_overrides(item);
}

std::string YamlInput::location() const {
  const YAML::Mark mark = node_.Mark();
  // Values from --set were parsed on their own: their positions are not positions in the file.
  if (mark.is_null() || node_.Tag() == kOverrideTag) return *file_;
  return *file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

void YamlInput::fail(const std::string& message) const {
  const std::string where = key_path_.empty() ? "" : " " + key_path_ + ":";
  throw InputError(location() + ":" + where + " " + message, key_path_);
}

const YamlInput& YamlInput::expect_map(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("expected a map, got " + describe(node_));
  std::vector<std::string> seen;
  for (const auto& entry : node_) {
    const std::string key = entry.first.as<std::string>();
    // yaml-cpp keeps the first of duplicate keys silently; a second value is almost always a mistake.
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      YamlInput(entry.first, file_, join_path(key_path_, key)).fail("duplicate key '" + key + "'");
    seen.push_back(key);
    bool known = false;
    for (const auto& name : allowed) known = known || name == key;
    if (!known) {
      YamlInput(entry.first, file_, join_path(key_path_, key))
          .fail("unknown key '" + key + "'" + did_you_mean(key, allowed));
    }
  }
  return *this;
}

bool YamlInput::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined();
}

YamlInput YamlInput::required(const std::string& key) const {
  if (!node_.IsMap()) fail("expected a map, got " + describe(node_));
  const YAML::Node child = node_[key];
  if (!child.IsDefined()) fail("missing required key '" + key + "'");
  return YamlInput(child, file_, join_path(key_path_, key));
}

std::optional<YamlInput> YamlInput::optional(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return required(key);
}

std::vector<std::string> YamlInput::keys() const {
  std::vector<std::string> out;
  if (node_.IsMap())
    for (const auto& entry : node_) out.push_back(entry.first.as<std::string>());
  return out;
}

std::vector<YamlInput> YamlInput::items() const {
  if (!node_.IsSequence()) fail("expected a list, got " + describe(node_));
  std::vector<YamlInput> out;
  for (std::size_t i = 0; i < node_.size(); ++i)
    out.emplace_back(node_[i], file_, key_path_ + "[" + std::to_string(i) + "]");
  return out;
}

std::string YamlInput::as_string() const {
  if (!node_.IsScalar()) fail("expected a string, got " + describe(node_));
  return node_.Scalar();
}

double YamlInput::as_double() const {
  if (!node_.IsScalar()) fail("expected a number, got " + describe(node_));
  const auto value = parse_number(node_.Scalar());
  if (!value) fail("expected a number, got '" + node_.Scalar() + "'");
  return *value;
}

double YamlInput::as_double_in(double min, double max) const {
  const double value = as_double();
  if (value < min || value > max) {
    std::ostringstream range;
    range << "must be in [" << min << ", " << max << "], got " << value;
    fail(range.str());
  }
  return value;
}

double YamlInput::as_positive() const {
  const double value = as_double();
  if (!(value > 0)) fail("must be positive, got " + node_.Scalar());
  return value;
}

long long YamlInput::as_int() const {
  if (!node_.IsScalar()) fail("expected an integer, got " + describe(node_));
  const std::string& text = node_.Scalar();
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) fail("expected an integer, got '" + text + "'");
  return value;
}

long long YamlInput::as_int_in(long long min, long long max) const {
  const long long value = as_int();
  if (value < min || value > max)
    fail("must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
         std::to_string(value));
  return value;
}

bool YamlInput::as_bool() const {
  if (!node_.IsScalar()) fail("expected true or false, got " + describe(node_));
  const std::string& text = node_.Scalar();
  if (text == "true") return true;
  if (text == "false") return false;
  fail("expected true or false, got '" + text + "'");
}

std::string YamlInput::as_choice(const std::vector<std::string>& choices) const {
  const std::string value = as_string();
  for (const auto& choice : choices)
    if (choice == value) return value;
  std::string list;
  for (const auto& choice : choices) list += (list.empty() ? "" : ", ") + choice;
  fail("unknown value '" + value + "'" + did_you_mean(value, choices) + "; valid: " + list);
}

double YamlInput::get_double(const std::string& key, double fallback) const {
  const auto child = optional(key);
  return child ? child->as_double() : fallback;
}

double YamlInput::get_positive(const std::string& key, double fallback) const {
  const auto child = optional(key);
  return child ? child->as_positive() : fallback;
}

long long YamlInput::get_int_in(const std::string& key, long long fallback, long long min,
                                long long max) const {
  const auto child = optional(key);
  return child ? child->as_int_in(min, max) : fallback;
}

std::string YamlInput::get_string(const std::string& key, const std::string& fallback) const {
  const auto child = optional(key);
  return child ? child->as_string() : fallback;
}

bool YamlInput::get_bool(const std::string& key, bool fallback) const {
  const auto child = optional(key);
  return child ? child->as_bool() : fallback;
}

}  // namespace semsim
