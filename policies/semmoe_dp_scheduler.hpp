#pragma once
#include <vector>

#include "policies/request_scheduling.hpp"

namespace semsim {

// Sem-MoE's Attention-DP request scheduling (design.md, online inter-request scheduling): each
// prompt token votes for one device (dp_vote_devices); the request goes to the most voted device
// among those not yet masked (ties: lowest id). A device is masked once it receives a request and
// the mask resets when all are, so every D consecutive requests cover all ranks. O(prompt) look-ups.
class SemMoeDpScheduler final : public RequestScheduler {
 public:
  SemMoeDpScheduler(std::vector<std::int16_t> vote_device, int devices);
  bool reads_prompt() const override { return true; }
  int choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
             std::span<const RankLoad> ranks) override;

 private:
  std::vector<std::int16_t> vote_device_;
  std::vector<int> votes_;
  std::vector<char> masked_;
  int masked_count_ = 0;
};

// Ours: no hard mask; the request goes to the device maximising its vote share minus
// load_weight × the device's outstanding tokens above the mean, relative to
// max(mean outstanding, prompt length) (ties: lowest id). load_weight 0 is pure affinity; large
// weights approach shortest-queue.
class SemMoeDpBalancedScheduler final : public RequestScheduler {
 public:
  SemMoeDpBalancedScheduler(std::vector<std::int16_t> vote_device, int devices, double load_weight);
  bool reads_prompt() const override { return true; }
  int choose(const Request& request, std::span<const std::int32_t> prompt_tokens,
             std::span<const RankLoad> ranks) override;

 private:
  std::vector<std::int16_t> vote_device_;
  std::vector<int> votes_;
  double load_weight_;
};

}  // namespace semsim
