#include "workloads/expert_groups.hpp"

#include <fmt/format.h>

#include "workloads/routing_trace.hpp"

namespace semsim {

int groups_spanned(const ExpertGroupLimit& limit, std::span<const ExpertId> experts) {
  int spanned = 0;
  for (std::size_t j = 0; j < experts.size(); ++j) {
    const int group = limit.group_of(experts[j]);
    bool seen = false;
    for (std::size_t i = 0; i < j && !seen; ++i) seen = limit.group_of(experts[i]) == group;
    spanned += seen ? 0 : 1;
  }
  return spanned;
}

GroupLimitCheck check_group_limit(const RoutingTrace& trace, const ExpertGroupLimit& limit) {
  GroupLimitCheck check;
  check.limit = limit;
  const TraceHeader& h = trace.header();
  check.tokens = static_cast<long long>(trace.tokens());
  check.routings = check.tokens * h.moe_layers;
  for (std::size_t token = 0; token < trace.tokens(); ++token) {
    bool violates = false;
    for (int layer = 0; layer < h.moe_layers; ++layer) {
      const int spanned = groups_spanned(
          limit, std::span(trace.experts_of(static_cast<std::int64_t>(token), layer), h.top_k));
      check.most_groups = std::max(check.most_groups, spanned);
      if (spanned > limit.per_token) {
        ++check.violating_routings;
        violates = true;
      }
    }
    check.violating_tokens += violates ? 1 : 0;
  }
  return check;
}

std::string group_limit_counts(const GroupLimitCheck& check) {
  return fmt::format("{} of {} routings ({} of {} tokens) span more than {} of the {} expert groups",
                     check.violating_routings, check.routings, check.violating_tokens, check.tokens,
                     check.limit.per_token, check.limit.groups);
}

std::string group_limit_warning(const GroupLimitCheck& check, const std::string& trace_name) {
  if (check.violating_routings == 0) return "";
  return fmt::format(
      "{} of the {} routings ({} of {} tokens) in {} span more than {} of the {} expert groups "
      "(up to {}): the trace was not recorded with group-limited routing",
      check.violating_routings, check.routings, check.violating_tokens, check.tokens, trace_name,
      check.limit.per_token, check.limit.groups, check.most_groups);
}

GroupLimitedDraw::GroupLimitedDraw(const ExpertGroupLimit& limit, int k)
    : limit_(limit),
      k_(k),
      entries_per_group_(k + 2),
      stamp_(limit.experts, 0),
      left_(limit.groups),
      untaken_(limit.groups),
      count_(limit.groups),
      cursor_(limit.groups),
      arrival_(static_cast<std::size_t>(limit.groups) * entries_per_group_),
      expert_(static_cast<std::size_t>(limit.groups) * entries_per_group_),
      group_score_(limit.groups),
      chosen_(limit.groups),
      best_(limit.groups) {
  if (limit.groups < 1 || limit.experts % limit.groups != 0 || limit.per_token < 1 ||
      limit.per_token > limit.groups || k < 1 || k > limit.per_token * limit.group_size())
    throw std::invalid_argument(
        fmt::format("group-limited draw: top-{} from {} of {} groups of {} experts is not a valid shape", k,
                    limit.per_token, limit.groups, limit.experts));
}

}  // namespace semsim
