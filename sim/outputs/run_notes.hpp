#pragma once
// What a run's plan noted about its inputs (RunNotes, sim/run_result.hpp) as summary.json and
// `place eval --json` write it, every key present and null when not measured; and as the lines the
// console summary and `place eval` print.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/run_result.hpp"

namespace semsim {

// A routing drift (workloads/routing_drift.hpp); the text is "" when not measured.
nlohmann::ordered_json routing_drift_json(const std::optional<RoutingDrift>& drift);
std::string routing_drift_text(const nlohmann::ordered_json& drift);
// How a placement's token table matched the evaluated tokens; the text is "" when it was keyed by
// their vocabulary already (or there is no table).
nlohmann::ordered_json token_table_json(const std::optional<TokenTableMatch>& match);
std::string token_table_text(const nlohmann::ordered_json& table);
// Which evaluated requests the plan's profile saw (when the plan names its profile's trace); the
// text warns when some did.
nlohmann::ordered_json profile_overlap_json(const std::optional<ProfileOverlap>& overlap);
std::string profile_overlap_text(const nlohmann::ordered_json& overlap);
// A replayed trace against a group-limited model (workloads/expert_groups.hpp): the counts, null
// otherwise; the text gives them and warns when some routings span more groups than allowed.
nlohmann::ordered_json group_limit_json(const std::optional<GroupLimitCheck>& check);
std::string group_limit_text(const nlohmann::ordered_json& check);

}  // namespace semsim
