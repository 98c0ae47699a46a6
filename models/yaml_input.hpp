#pragma once
// Strict YAML reading: every value is read through a YamlInput, which knows the file it came from
// and its key path, so that any error says "file:line:column: key.path: what is wrong".
#include <yaml-cpp/yaml.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/input_error.hpp"
#include "models/input_limits.hpp"

namespace semsim {

class YamlInput {
 public:
  // Parses text; syntax errors become InputError naming `file_name` and the position.
  static YamlInput parse(const std::string& text, const std::string& file_name);
  static YamlInput load_file(const std::string& path);

  YamlInput(YAML::Node node, std::shared_ptr<const std::string> file, std::string key_path);

  const YAML::Node& node() const { return node_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& file() const { return *file_; }
  std::string location() const;  // "file:line:column" ("file" for values given on the command line)

  // Tags a value parsed from a command-line override (and everything under it) so that errors do
  // not cite a line and column it does not have.
  static void mark_as_override(YAML::Node node);
  // The marks removed again (a document written out holds plain values).
  static void unmark_overrides(YAML::Node node);
  static constexpr const char* kOverrideTag = "!semsim-override";

  [[noreturn]] void fail(const std::string& message) const;

  bool is_map() const { return node_.IsMap(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_sequence() const { return node_.IsSequence(); }

  // Map access. `expect_map` fails unless this is a map whose keys are all in `allowed`.
  const YamlInput& expect_map(const std::vector<std::string>& allowed) const;
  bool has(const std::string& key) const;
  YamlInput required(const std::string& key) const;
  std::optional<YamlInput> optional(const std::string& key) const;
  std::vector<std::string> keys() const;

  // Sequence access.
  std::vector<YamlInput> items() const;

  // Scalars, with the type and range named in the error.
  std::string as_string() const;
  double as_double() const;
  double as_double_in(double min, double max) const;
  double as_double_in(const limits::Range& range) const { return as_double_in(range.min, range.max); }
  long long as_int() const;
  long long as_int_in(long long min, long long max) const;
  bool as_bool() const;
  // One of `choices`, with a suggestion for near misses.
  std::string as_choice(const std::vector<std::string>& choices) const;

  // Convenience for optional keys with defaults.
  double get_double(const std::string& key, double fallback) const;
  double get_double_in(const std::string& key, double fallback, const limits::Range& range) const;
  long long get_int_in(const std::string& key, long long fallback, long long min, long long max) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;

 private:
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::string key_path_;
};

}  // namespace semsim
