#pragma once
// The console summary `semsim run` prints from summary.json: bench_serving's block (its lines, in
// its order), then the simulation's own.
#include <nlohmann/json.hpp>
#include <string>

namespace semsim {

std::string summary_text(const nlohmann::ordered_json& summary);

}  // namespace semsim
