#pragma once
// JSON input: a parse failure or a value of the wrong type is an InputError naming where it is (file,
// record, key). One implementation for every JSON the project reads (trace dumps, SGLang's expert
// locations).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace semsim {

nlohmann::json parse_json(std::string_view text, const std::string& where);
// `value` as an integer; `what` names it in the error ("an expert id").
long long json_integer(const nlohmann::json& value, const std::string& where, const char* what);

}  // namespace semsim
