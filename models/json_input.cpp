#include "models/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "models/input_error.hpp"

namespace semsim {

nlohmann::json parse_json(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
}

namespace {

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix,
// since the error names the position itself.
std::string parse_error_reason(const nlohmann::json::parse_error& e) {
  const std::string message = e.what();
  const auto colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

int line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

}  // namespace

std::vector<JsonValueAt> parse_json_values(std::string_view text, const std::string& path) {
  std::istringstream in{std::string(text)};
  std::vector<JsonValueAt> values;
  while ((in >> std::ws).peek() != std::char_traits<char>::eof()) {
    const auto start = static_cast<std::size_t>(in.tellg());
    JsonValueAt at{nlohmann::json(), line_at(text, start)};
    try {
      in >> at.value;
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}:{}: not valid JSON ({})", path,
                                   line_at(text, start + (e.byte > 0 ? e.byte - 1 : 0)), e.what()));
    }
    values.push_back(std::move(at));
  }
  return values;
}

nlohmann::json parse_json_file(std::string_view text, const std::string& path) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the byte parsing stopped at.
    const std::size_t offset = std::min(text.size(), e.byte > 0 ? e.byte - 1 : 0);
    const auto line_start = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
    const std::size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    throw InputError(fmt::format("{}:{}:{}: not valid JSON ({})", path, line_at(text, offset), column,
                                 parse_error_reason(e)));
  }
}

long long json_integer(const nlohmann::json& value, const std::string& where, const char* what) {
  if (!value.is_number_integer()) throw InputError(where + ": " + what + " must be an integer");
  return value.get<long long>();
}

}  // namespace semsim
