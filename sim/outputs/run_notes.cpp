#include "sim/outputs/run_notes.hpp"

#include <fmt/format.h>

namespace semsim {

nlohmann::ordered_json routing_drift_json(const std::optional<RoutingDrift>& drift) {
  nlohmann::ordered_json j;
  auto value = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  j["popularity_mean"] = drift ? value(drift->popularity_mean) : nullptr;
  j["popularity_max"] = drift ? value(drift->popularity_max) : nullptr;
  j["popularity_max_layer"] = drift ? nlohmann::ordered_json(drift->popularity_max_layer) : nullptr;
  j["coactivation_mean"] = drift ? value(drift->coactivation_mean) : nullptr;
  j["coactivation_max"] = drift ? value(drift->coactivation_max) : nullptr;
  j["popularity_noise"] = drift ? value(drift->popularity_noise) : nullptr;
  j["coactivation_noise"] = drift ? value(drift->coactivation_noise) : nullptr;
  j["stale"] = drift ? nlohmann::ordered_json(drift->stale()) : nullptr;
  return j;
}

std::string routing_drift_text(const nlohmann::ordered_json& drift) {
  if (drift["popularity_mean"].is_null()) return "";
  std::string out = fmt::format(
      "Routing drift from the profile: expert popularity JS divergence {:.4f} bits (max {:.4f}, MoE "
      "layer {})",
      drift["popularity_mean"].get<double>(), drift["popularity_max"].get<double>(),
      drift["popularity_max_layer"].get<int>());
  if (!drift["coactivation_mean"].is_null())
    out += fmt::format(", co-activation spectrum distance {:.3f} (max {:.3f})",
                       drift["coactivation_mean"].get<double>(), drift["coactivation_max"].get<double>());
  if (!drift["popularity_noise"].is_null())
    out += fmt::format("; halves of these requests differ by {:.4f} bits{}",
                       drift["popularity_noise"].get<double>(),
                       drift["coactivation_noise"].is_null()
                           ? std::string()
                           : fmt::format(" and {:.3f}", drift["coactivation_noise"].get<double>()));
  out += "\n";
  if (drift["stale"].get<bool>())
    out +=
        "Warning: the requests route unlike the profiled ones, beyond sampling noise: the placement may be "
        "stale\n";
  return out;
}

nlohmann::ordered_json token_table_json(const std::optional<TokenTableMatch>& match) {
  nlohmann::ordered_json j;
  j["vocabulary"] = match ? nlohmann::ordered_json(match->vocabulary) : nullptr;
  j["by_text"] = match ? nlohmann::ordered_json(match->by_text) : nullptr;
  j["by_normalized_text"] = match ? nlohmann::ordered_json(match->by_normalized_text) : nullptr;
  j["unmatched"] = match ? nlohmann::ordered_json(match->unmatched()) : nullptr;
  j["same_vocabulary"] = match ? nlohmann::ordered_json(match->same_vocabulary) : nullptr;
  return j;
}

std::string token_table_text(const nlohmann::ordered_json& table) {
  if (table["same_vocabulary"].is_null() || table["same_vocabulary"].get<bool>()) return "";
  return fmt::format(
      "Token table matched to these tokens: {} of {} by text, {} by normalized text, {} unknown to it\n",
      table["by_text"].get<long long>(), table["vocabulary"].get<long long>(),
      table["by_normalized_text"].get<long long>(), table["unmatched"].get<long long>());
}

nlohmann::ordered_json profile_overlap_json(const std::optional<ProfileOverlap>& overlap) {
  nlohmann::ordered_json j;
  j["profiled_trace"] = overlap ? nlohmann::ordered_json(overlap->source.trace) : nullptr;
  j["same_trace"] = overlap ? nlohmann::ordered_json(overlap->same_trace) : nullptr;
  j["split"] = overlap ? nlohmann::ordered_json(overlap->source.split) : nullptr;
  j["seed"] = overlap ? nlohmann::ordered_json(overlap->source.seed) : nullptr;
  j["evaluated_requests"] = overlap ? nlohmann::ordered_json(overlap->evaluated) : nullptr;
  j["profiled_requests"] = overlap ? nlohmann::ordered_json(overlap->profiled) : nullptr;
  return j;
}

std::string profile_overlap_text(const nlohmann::ordered_json& overlap) {
  if (overlap["same_trace"].is_null()) return "";
  if (!overlap["same_trace"].get<bool>())
    return fmt::format("Profiled on another trace: {}\n", overlap["profiled_trace"].get<std::string>());
  const auto profiled = overlap["profiled_requests"].get<long long>();
  if (profiled == 0)
    return fmt::format("Profiled on other requests of this trace (split {}, seed {}): none of these\n",
                       overlap["split"].get<double>(), overlap["seed"].get<std::uint64_t>());
  return fmt::format(
      "Warning: {} of the {} requests were profiled (split {}, seed {} of this trace): their LAR is "
      "in-sample; replay or evaluate the held-out ones (split {}, seed {}) for unseen requests only\n",
      profiled, overlap["evaluated_requests"].get<long long>(), overlap["split"].get<double>(),
      overlap["seed"].get<std::uint64_t>(), overlap["split"].get<double>(),
      overlap["seed"].get<std::uint64_t>());
}

nlohmann::ordered_json group_limit_json(const std::optional<GroupLimitCheck>& check) {
  nlohmann::ordered_json j;
  auto count = [&](long long value) {
    return check ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };
  j["groups"] = count(check ? check->limit.groups : 0);
  j["topk_groups"] = count(check ? check->limit.per_token : 0);
  j["routings"] = count(check ? check->routings : 0);
  j["violating_routings"] = count(check ? check->violating_routings : 0);
  j["tokens"] = count(check ? check->tokens : 0);
  j["violating_tokens"] = count(check ? check->violating_tokens : 0);
  j["most_groups"] = count(check ? check->most_groups : 0);
  return j;
}

std::string group_limit_text(const nlohmann::ordered_json& j) {
  if (j["groups"].is_null()) return "";
  GroupLimitCheck check;
  check.limit = {0, j["groups"].get<int>(), j["topk_groups"].get<int>()};
  check.routings = j["routings"].get<long long>();
  check.violating_routings = j["violating_routings"].get<long long>();
  check.tokens = j["tokens"].get<long long>();
  check.violating_tokens = j["violating_tokens"].get<long long>();
  check.most_groups = j["most_groups"].get<int>();
  std::string out = "Replayed trace against the group limit: " + group_limit_counts(check) + "\n";
  const std::string warning = group_limit_warning(check, "the replayed trace");
  if (!warning.empty()) out += "Warning: " + warning + "\n";
  return out;
}

}  // namespace semsim
