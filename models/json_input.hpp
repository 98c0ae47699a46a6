#pragma once
// JSON input: a parse failure or a value of the wrong type is an InputError naming where it is (file,
// record, key). One implementation for every JSON the project reads (trace dumps, SGLang's expert
// locations).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace semsim {

nlohmann::json parse_json(std::string_view text, const std::string& where);
// The JSON document a whole file holds; invalid JSON is an InputError naming `path`, the line and the
// column where parsing failed.
nlohmann::json parse_json_file(std::string_view text, const std::string& path);

// Every JSON value in `text`, one after another (one for a JSON file, one per line for JSON lines),
// with the line each starts on; invalid JSON is an InputError naming `path` and the line.
struct JsonValueAt {
  nlohmann::json value;
  int line = 0;
};
std::vector<JsonValueAt> parse_json_values(std::string_view text, const std::string& path);
// `value` as an integer; `what` names it in the error ("an expert id").
long long json_integer(const nlohmann::json& value, const std::string& where, const char* what);

}  // namespace semsim
