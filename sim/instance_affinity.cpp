#include "sim/instance_affinity.hpp"

#include <algorithm>

#include "policies/token_device_table.hpp"

namespace semsim {

InstanceAffinity::InstanceAffinity(AffinityInput input, std::vector<std::vector<std::int16_t>> vote_devices,
                                   std::vector<const Placement*> placements, const RoutingSource& routing)
    : input_(input),
      vote_devices_(std::move(vote_devices)),
      placements_(std::move(placements)),
      routing_(routing) {}

void InstanceAffinity::of(const Request& request, std::span<InstanceLoad> instances) {
  // The router keeps the prefixes it sent itself (sim/instance_router.cpp).
  if (input_ == AffinityInput::kNone || input_ == AffinityInput::kSentPrefixes) return;
  tokens_.clear();
  prompt_.clear();
  for (int position = 0; position < request.input_tokens; ++position) {
    TokenRef token{request.id, request.topic, position};
    token.id = routing_.token_id(token);
    tokens_.push_back(token);
    prompt_.push_back(token.id);
  }
  if (input_ == AffinityInput::kPromptEstimate)
    prompt_estimate(instances);
  else
    hindsight(instances);
}

void InstanceAffinity::prompt_estimate(std::span<InstanceLoad> instances) {
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const std::vector<std::int16_t>& vote_device = vote_devices_[i];
    votes_.assign(placements_[i]->devices, 0);
    count_prompt_votes(vote_device, prompt_, votes_);
    // Over the whole prompt: a token the instance's profile never saw is no evidence of locality there.
    instances[i].affinity =
        prompt_.empty()
            ? 0.0
            : static_cast<double>(*std::max_element(votes_.begin(), votes_.end())) / prompt_.size();
  }
}

void InstanceAffinity::hindsight(std::span<InstanceLoad> instances) {
  const int k = routing_.top_k();
  std::vector<std::vector<long long>>& local = local_;
  local.resize(instances.size());
  for (std::size_t i = 0; i < instances.size(); ++i) local[i].assign(placements_[i]->devices, 0);
  long long activations = 0;
  experts_.resize(tokens_.size() * static_cast<std::size_t>(k));
  for (int layer = 0; layer < routing_.moe_layers(); ++layer) {
    routing_.route(layer, tokens_, experts_);
    activations += static_cast<long long>(experts_.size());
    for (std::size_t i = 0; i < instances.size(); ++i) {
      const Placement& placement = *placements_[i];
      if (!placement.has_replicas()) {
        const int* home = placement.home_devices(layer);
        for (const ExpertId expert : experts_) ++local[i][home[expert]];
        continue;
      }
      for (const ExpertId expert : experts_)
        for (int d = 0; d < placement.devices; ++d)
          if (placement.hosts(layer, expert, d)) ++local[i][d];
    }
  }
  for (std::size_t i = 0; i < instances.size(); ++i)
    instances[i].affinity =
        activations > 0
            ? static_cast<double>(*std::max_element(local[i].begin(), local[i].end())) / activations
            : 0.0;
}

}  // namespace semsim
