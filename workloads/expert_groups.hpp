#pragma once
// Group-limited routing (DeepSeek's n_group / topk_group): the routed experts split into `groups`
// groups of consecutive ids, and the gate keeps each token's top-k experts to `per_token` of them.
// The gate (DeepSeek-V3, topk_method noaux_tc) scores every expert, ranks a group by the sum of its
// two best expert scores, keeps the best per_token groups and takes the top-k experts inside them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/moe_model.hpp"
#include "workloads/counter_rng.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

class RoutingTrace;

struct ExpertGroupLimit {
  int experts = 0;    // routed experts
  int groups = 1;     // n_group
  int per_token = 1;  // topk_group
  bool limits() const { return per_token < groups; }
  int group_size() const { return experts / groups; }
  int group_of(int expert) const { return expert / group_size(); }
  static ExpertGroupLimit of(const MoeModel& model) {
    return {model.routed_experts, model.expert_groups, model.topk_expert_groups};
  }
};

// Distinct groups among `experts`.
int groups_spanned(const ExpertGroupLimit& limit, std::span<const ExpertId> experts);

// How a trace's routing keeps to a group limit. A routing is one token's experts at one MoE layer.
struct GroupLimitCheck {
  ExpertGroupLimit limit;
  long long routings = 0;
  long long violating_routings = 0;  // spanning more than limit.per_token groups
  long long tokens = 0;
  long long violating_tokens = 0;  // with a violating routing at some layer
  int most_groups = 0;             // the most groups one routing spans
};

GroupLimitCheck check_group_limit(const RoutingTrace& trace, const ExpertGroupLimit& limit);

// "N of M routings (n of T tokens) span more than P of the G expert groups".
std::string group_limit_counts(const GroupLimitCheck& check);
// "" without violations; else what a warning says (one line, no trailing newline), naming `trace_name`.
std::string group_limit_warning(const GroupLimitCheck& check, const std::string& trace_name);

// Top-k sets drawn as a group-limited gate picks them, from a distribution `weights` over the experts
// (the synthetic generator's). Expert e is scored log(weights[e]) + a Gumbel variate: the k best
// scores are then k draws without replacement in proportion to the weights (the Gumbel-top-k trick),
// the very draw of the generator without a group limit. On these scores the gate's rule: a group's
// score is the sum of its two best expert scores (its one score for groups of one), the best
// per_token groups are kept, and the set is the best scores in them. Experts already in the set
// (`kept`) are taken first and their groups count toward the limit first.
// Scores are drawn lazily, best first, per group, as the arrival times t of an exponential race
// (score = -log t): a group's first arrival is Exp(W)-distributed, W the weight of its experts not
// yet drawn, and is an expert drawn in proportion to weight; by memorylessness the next arrives an
// Exp(W') later, W' the weight then left. A group's score ranks groups as the product of its two
// first arrival times does, smallest first. A set so costs two arrivals per group plus one per
// further expert (one logarithm each), not a score per expert.
class GroupLimitedDraw {
 public:
  GroupLimitedDraw(const ExpertGroupLimit& limit, int k);

  // Completes set[kept, k) given set[0, kept) (distinct, within per_token groups). `weights` has one
  // entry per expert, positive for every expert not kept; `group_weights` is empty or the sum of
  // `weights` over each group. `propose(group, bits)` returns an expert of `group` drawn in proportion
  // to its weight from `bits` (or -1 to have the group's weights scanned instead): proposals of
  // experts already drawn are rejected, and after a few the weights are scanned.
  template <typename Rng, typename Propose>
  void fill(std::span<const double> weights, std::span<const double> group_weights, ExpertId* set, int kept,
            Rng& rng, Propose propose);
  template <typename Rng>
  void fill(std::span<const double> weights, ExpertId* set, int kept, Rng& rng) {
    fill(weights, {}, set, kept, rng, [](int, std::uint64_t) { return -1; });
  }

 private:
  static constexpr double kNever = std::numeric_limits<double>::infinity();  // no expert left
  static constexpr int kProposals = 4;  // rejected proposals before a scan

  static double exponential(std::uint64_t bits) {  // Exp(1) from a uniform in (0, 1], never 0
    return -std::log((static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53);
  }
  bool taken(int expert) const { return stamp_[expert] == generation_; }
  template <typename Rng, typename Propose>
  void resolve(int group, int entry, std::span<const double> weights, Rng& rng, Propose& propose);
  template <typename Rng, typename Propose>
  void extend(int group, std::span<const double> weights, Rng& rng, Propose& propose);

  ExpertGroupLimit limit_;
  int k_;
  int entries_per_group_;
  std::uint32_t generation_ = 0;
  std::vector<std::uint32_t> stamp_;  // [expert] == generation_: drawn in this fill
  std::vector<double> left_;          // [group] weight of the experts not yet drawn
  std::vector<int> untaken_;          // [group] experts not yet drawn
  std::vector<int> count_, cursor_;   // [group] scores drawn, scores placed in the set
  std::vector<double> arrival_;       // [group][entry] increasing
  std::vector<int> expert_;           // [group][entry], -1 until drawn
  std::vector<double> group_score_;   // [group] product of its two first arrivals: lower is better
  std::vector<char> chosen_;
  std::vector<int> chosen_groups_;
  std::vector<int> best_;  // the best groups to fill the limit with, best first
};

template <typename Rng, typename Propose>
void GroupLimitedDraw::resolve(int group, int entry, std::span<const double> weights, Rng& rng,
                               Propose& propose) {
  const int size = limit_.group_size(), first = group * size;
  int expert = -1;
  for (int attempt = 0; attempt < kProposals && expert < 0; ++attempt) {
    const int candidate = propose(group, rng());
    if (candidate < 0) break;
    if (!taken(candidate)) expert = candidate;
  }
  if (expert < 0) {  // exact: the proposals rejected so far leave the distribution unchanged
    double x = unit_interval(rng()) * left_[group];
    for (int e = first; e < first + size; ++e) {
      if (taken(e)) continue;
      expert = e;
      if ((x -= weights[e]) < 0) break;
    }
  }
  stamp_[expert] = generation_;
  left_[group] -= weights[expert];
  if (--untaken_[group] > 0 && !(left_[group] > 0)) {  // rounding ate the rest: sum it afresh
    left_[group] = 0;
    for (int e = first; e < first + size; ++e)
      if (!taken(e)) left_[group] += weights[e];
  }
  expert_[group * entries_per_group_ + entry] = expert;
}

template <typename Rng, typename Propose>
void GroupLimitedDraw::extend(int group, std::span<const double> weights, Rng& rng, Propose& propose) {
  const int n = count_[group];
  const std::size_t row = static_cast<std::size_t>(group) * entries_per_group_;
  if (n > 0 && expert_[row + n - 1] < 0) resolve(group, n - 1, weights, rng, propose);
  const double previous = n > 0 ? arrival_[row + n - 1] : 0.0;
  arrival_[row + n] = untaken_[group] > 0 ? previous + exponential(rng()) / left_[group] : kNever;
  expert_[row + n] = -1;
  count_[group] = n + 1;
}

template <typename Rng, typename Propose>
void GroupLimitedDraw::fill(std::span<const double> weights, std::span<const double> group_weights,
                            ExpertId* set, int kept, Rng& rng, Propose propose) {
  const int groups = limit_.groups, size = limit_.group_size();
  if (++generation_ == 0) {  // wrapped: stale stamps could read as drawn
    std::fill(stamp_.begin(), stamp_.end(), 0);
    generation_ = 1;
  }
  for (int g = 0; g < groups; ++g) {
    if (group_weights.empty()) {
      left_[g] = 0;
      for (int e = g * size; e < (g + 1) * size; ++e) left_[g] += weights[e];
    } else {
      left_[g] = group_weights[g];
    }
    untaken_[g] = size;
    count_[g] = cursor_[g] = 0;
    chosen_[g] = 0;
  }
  chosen_groups_.clear();
  for (int j = 0; j < kept; ++j) {
    const int g = limit_.group_of(set[j]);
    stamp_[set[j]] = generation_;
    left_[g] -= weights[set[j]];
    --untaken_[g];
    if (!chosen_[g]) {
      chosen_[g] = 1;
      chosen_groups_.push_back(g);
    }
  }
  for (int g : chosen_groups_)
    if (untaken_[g] > 0 && !(left_[g] > 0)) {
      left_[g] = 0;
      for (int e = g * size; e < (g + 1) * size; ++e)
        if (!taken(e)) left_[g] += weights[e];
    }
  if (static_cast<int>(chosen_groups_.size()) > limit_.per_token)
    throw std::logic_error("group-limited draw: the kept experts span more groups than the limit");
  // Every other group is ranked by its two first arrivals.
  for (int g = 0; g < groups; ++g) {
    if (chosen_[g]) continue;
    extend(g, weights, rng, propose);
    group_score_[g] = arrival_[static_cast<std::size_t>(g) * entries_per_group_];
    if (size >= 2) {
      extend(g, weights, rng, propose);
      group_score_[g] *= arrival_[static_cast<std::size_t>(g) * entries_per_group_ + 1];
    }
  }
  // The best of them fill the groups left (ties to the lower group): kept in order in `best_`, each
  // group shifting in ahead of the worse ones.
  const int open = limit_.per_token - static_cast<int>(chosen_groups_.size());
  int held = 0;
  for (int g = 0; g < groups && open > 0; ++g) {
    if (chosen_[g]) continue;
    const double score = group_score_[g];
    if (held == open && !(score < group_score_[best_[held - 1]])) continue;
    int at = held < open ? held++ : held - 1;
    for (; at > 0 && score < group_score_[best_[at - 1]]; --at) best_[at] = best_[at - 1];
    best_[at] = g;
  }
  chosen_groups_.insert(chosen_groups_.end(), best_.begin(), best_.begin() + held);
  for (int g : chosen_groups_) chosen_[g] = 1;
  // The first arrivals in the kept groups, merged.
  for (int j = kept; j < k_; ++j) {
    int best = -1;
    double first = kNever;
    for (int g : chosen_groups_) {
      if (cursor_[g] == count_[g]) extend(g, weights, rng, propose);
      const double arrival = arrival_[static_cast<std::size_t>(g) * entries_per_group_ + cursor_[g]];
      if (arrival < first) {
        best = g;
        first = arrival;
      }
    }
    if (best < 0) throw std::logic_error("group-limited draw: the kept groups hold fewer than k experts");
    const int entry = cursor_[best]++;
    if (expert_[static_cast<std::size_t>(best) * entries_per_group_ + entry] < 0)
      resolve(best, entry, weights, rng, propose);
    set[j] = static_cast<ExpertId>(expert_[static_cast<std::size_t>(best) * entries_per_group_ + entry]);
  }
}

}  // namespace semsim
