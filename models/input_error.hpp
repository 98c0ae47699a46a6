#pragma once
// One error type for every kind of bad input (scenario, preset, trace, profile), so the CLI can map
// it to exit code 2 with a single message that names file, line, column and key path.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace semsim {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The closest candidate by edit distance, or "" when nothing is close enough to be a likely typo.
std::string nearest_name(std::string_view wanted, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — appended to unknown-name errors.
std::string did_you_mean(std::string_view wanted, const std::vector<std::string>& candidates);

// The whole of `text` as a finite number, or nothing (no partial parses like "12abc").
std::optional<double> parse_number(const std::string& text);

}  // namespace semsim
