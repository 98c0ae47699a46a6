#include "models/json_input.hpp"

#include "models/input_error.hpp"

namespace semsim {

nlohmann::json parse_json(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(where + ": not valid JSON (" + e.what() + ")");
  }
}

long long json_integer(const nlohmann::json& value, const std::string& where, const char* what) {
  if (!value.is_number_integer()) throw InputError(where + ": " + what + " must be an integer");
  return value.get<long long>();
}

}  // namespace semsim
