#pragma once
// One error type for every kind of bad input (scenario, preset, trace, profile), so the CLI can map
// it to exit code 2 with a single message that names file, line, column and key path.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace semsim {

// Besides its message, an error about one key carries that key's path ("workload.arrival.rate"),
// and an error about a value given outside the file (--set, a sweep's axis) carries where it was
// given: callers decide from these fields, never from the message text.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message, std::string key_path = "", std::string origin = "")
      : std::runtime_error(message), key_path_(std::move(key_path)), origin_(std::move(origin)) {}

  const std::string& key_path() const { return key_path_; }
  const std::string& origin() const { return origin_; }
  // The same error, saying the value was set by `origin` (its key has no line in the file).
  InputError set_by(const std::string& origin) const {
    return InputError(std::string(what()) + " (value set by " + origin + ")", key_path_, origin);
  }

 private:
  std::string key_path_;
  std::string origin_;
};

// The closest candidate by edit distance, or "" when nothing is close enough to be a likely typo.
std::string nearest_name(std::string_view wanted, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — appended to unknown-name errors.
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates);

// `text` on one line: '\n' and '\r' written as the two characters "\n" and "\r" (error messages
// and points.csv rows are line-oriented, whatever text they quote).
std::string one_line(std::string_view text);

// The whole of `text` as a finite number, or nothing (no partial parses like "12abc").
std::optional<double> parse_number(const std::string& text);

}  // namespace semsim
