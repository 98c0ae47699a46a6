#include "models/yaml_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "models/compressed_file.hpp"
#include "models/input_limits.hpp"

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

// The position of the first byte of `text` that is not part of well-formed UTF-8, or npos.
std::size_t invalid_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = byte < 0x80           ? 1
                               : (byte >> 5) == 0x6  ? 2
                               : (byte >> 4) == 0xe  ? 3
                               : (byte >> 3) == 0x1e ? 4
                                                     : 0;
    if (length == 0 || i + length > text.size()) return i;
    std::uint32_t code = length == 1 ? byte : byte & (0x7f >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next >> 6) != 0x2) return i;
      code = (code << 6) | (next & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8 either.
    const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < least[length] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string position(const std::string& file_name, std::string_view text, std::size_t offset) {
  const auto before = text.substr(0, offset);
  const auto line_start = before.rfind('\n');
  const std::size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1);
  return file_name + ":" + std::to_string(std::count(before.begin(), before.end(), '\n') + 1) + ":" +
         std::to_string(column + 1);
}

// Whether the quoted scalar starting at `text[start]` (its opening quote) is closed: yaml-cpp takes
// the end of the text as the end of an unclosed one, swallowing the rest of the file.
bool quote_closed(std::string_view text, std::size_t start) {
  const char quote = text[start];
  for (std::size_t i = start + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is an escaped quote
        continue;
      }
      return true;
    }
  }
  return false;
}

// What every document must be beyond YAML syntax: keys are scalars (every reader looks keys up by
// name), quotes are closed, and the tree, aliases expanded at each use, has at most
// limits::kYamlNodes nodes (an alias bomb is refused before anything walks its expansion), nests
// at most limits::kYamlDepth deep and holds no alias inside the node it names (`x: &a [*a]`, a
// cycle that every walk of the tree would follow until its stack overflows).
class DocumentCheck {
 public:
  DocumentCheck(std::string_view text, std::shared_ptr<const std::string> file)
      : text_(text), file_(std::move(file)) {}

  void visit(const YAML::Node& node, const std::string& key_path) {
    if (++nodes_ > limits::kYamlNodes)
      YamlInput(node, file_, key_path)
          .fail(fmt::format("more than {} YAML nodes (counting each use of an alias): refused",
                            limits::kYamlNodes));
    const YAML::Mark mark = node.Mark();
    if (node.IsScalar() && !mark.is_null() && static_cast<std::size_t>(mark.pos) < text_.size() &&
        (text_[mark.pos] == '"' || text_[mark.pos] == '\'') && !quote_closed(text_, mark.pos))
      YamlInput(node, file_, key_path).fail("unclosed quote: the value runs to the end of the file");
    if (!node.IsSequence() && !node.IsMap()) return;
    for (const YAML::Node& enclosing : enclosing_)
      if (node.is(enclosing))
        YamlInput(node, file_, key_path)
            .fail("an alias refers to a node that contains it (a cycle of anchors): refused");
    if (enclosing_.size() >= limits::kYamlDepth)
      YamlInput(node, file_, key_path)
          .fail(fmt::format("nested more than {} levels deep (counting each use of an alias): refused",
                            limits::kYamlDepth));
    enclosing_.push_back(node);
    if (node.IsSequence())
      for (std::size_t i = 0; i < node.size(); ++i) visit(node[i], key_path + "[" + std::to_string(i) + "]");
    if (node.IsMap())
      for (const auto& entry : node) {
        if (!entry.first.IsScalar())
          YamlInput(entry.first, file_, key_path).fail("a key must be a name, not " + describe(entry.first));
        visit(entry.first, key_path);
        visit(entry.second, join_path(key_path, entry.first.Scalar()));
      }
    enclosing_.pop_back();
  }

 private:
  std::string_view text_;
  std::shared_ptr<const std::string> file_;
  std::size_t nodes_ = 0;
  std::vector<YAML::Node> enclosing_;  // the sequences and maps from the root down to the node visited
};

// Where the second YAML document of a text starts (the offset of its first content, or of its
// marker when it has none), or npos when there is one document. A document marker ("---" or "...",
// then a space or the end of the line) at the start of a line after the first document's content
// can only begin another document, in YAML's grammar. A scan of the lines rather than yaml-cpp's
// LoadAll, which never returns on some malformed text (a ',' before any node).
std::size_t second_document_at(std::string_view text) {
  auto is_marker = [](std::string_view line, std::string_view marker) {
    return line.starts_with(marker) && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
  };
  auto content_at = [](std::string_view line) {  // first non-blank column, npos for blank or comment
    const std::size_t first = line.find_first_not_of(" \t\r");
    return first == std::string_view::npos || line[first] == '#' ? std::string_view::npos : first;
  };
  bool first_started = false;  // a marker or content of the first document was seen
  bool first_ended = false;    // its "..."
  std::size_t second = std::string_view::npos;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size());
    const std::string_view line = text.substr(begin, end - begin);
    const bool start_marker = is_marker(line, "---");
    const std::size_t after_marker = start_marker ? content_at(line.substr(3)) : std::string_view::npos;
    const std::size_t content =
        start_marker ? (after_marker == std::string_view::npos ? after_marker : 3 + after_marker)
                     : content_at(line);
    if (second != std::string_view::npos) {
      if (content != std::string_view::npos) return begin + content;
    } else if (start_marker && (first_started || first_ended)) {
      if (content != std::string_view::npos) return begin + content;
      second = begin;
    } else if (is_marker(line, "...")) {
      first_ended = true;
    } else if (line.starts_with('%') && !first_started) {
      // a directive of the first document
    } else if (content != std::string_view::npos) {
      if (first_ended) return begin + content;
      first_started = true;
    } else if (start_marker) {
      first_started = true;
    }
    begin = end + 1;
  }
  return second;
}

}  // namespace

YamlInput YamlInput::parse(const std::string& text, const std::string& file_name) {
  auto file = std::make_shared<const std::string>(file_name);
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos)
    throw InputError(position(file_name, text, bad) + ": not UTF-8 text (YAML must be UTF-8)");
  if (const std::size_t second = second_document_at(text); second != std::string_view::npos)
    throw InputError(position(file_name, text, second) +
                     ": a second YAML document ('---'): give one document only");
  YAML::Node document;
  try {
    document = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(file_name + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
  YamlInput root(document, file, "");
  DocumentCheck(text, file).visit(root.node(), "");
  return root;
}

YamlInput YamlInput::load_file(const std::string& path) {
  return parse(read_text_file(path, limits::kYamlFileBytes), path);
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
    const std::string key = entry.first.Scalar();
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
    for (const auto& entry : node_) out.push_back(entry.first.Scalar());
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

double YamlInput::get_double_in(const std::string& key, double fallback, const limits::Range& range) const {
  const auto child = optional(key);
  return child ? child->as_double_in(range) : fallback;
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
