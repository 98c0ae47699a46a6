#include "policies/semmoe_dp_scheduler.hpp"

#include <algorithm>

#include "policies/token_device_table.hpp"

namespace semsim {
SemMoeDpScheduler::SemMoeDpScheduler(std::vector<std::int16_t> vote_device, int devices)
    : vote_device_(std::move(vote_device)), votes_(devices), masked_(devices, 0) {}

int SemMoeDpScheduler::choose(const Request&, std::span<const std::int32_t> prompt_tokens,
                              std::span<const RankLoad> ranks) {
  count_prompt_votes(vote_device_, prompt_tokens, votes_);
  int best = -1;
  for (int d = 0; d < static_cast<int>(ranks.size()); ++d)
    if (!masked_[d] && (best < 0 || votes_[d] > votes_[best])) best = d;
  masked_[best] = 1;
  if (++masked_count_ == static_cast<int>(ranks.size())) {
    std::fill(masked_.begin(), masked_.end(), 0);
    masked_count_ = 0;
  }
  return best;
}

SemMoeDpBalancedScheduler::SemMoeDpBalancedScheduler(std::vector<std::int16_t> vote_device, int devices,
                                                     double load_weight)
    : vote_device_(std::move(vote_device)), votes_(devices), load_weight_(load_weight) {}

int SemMoeDpBalancedScheduler::choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
                                      std::span<const RankLoad> ranks) {
  const int voted = count_prompt_votes(vote_device_, prompt_tokens, votes_);
  long long outstanding = 0;
  for (const RankLoad& rank : ranks) outstanding += rank.outstanding_tokens;
  const double mean = static_cast<double>(outstanding) / static_cast<double>(ranks.size());
  const double scale = std::max({mean, static_cast<double>(request.input_tokens), 1.0});
  int best = 0;
  double best_score = 0;
  for (int d = 0; d < static_cast<int>(ranks.size()); ++d) {
    const double affinity = voted > 0 ? static_cast<double>(votes_[d]) / voted : 0.0;
    const double score =
        affinity - load_weight_ * (static_cast<double>(ranks[d].outstanding_tokens) - mean) / scale;
    if (d == 0 || score > best_score) best = d, best_score = score;
  }
  return best;
}

}  // namespace semsim
