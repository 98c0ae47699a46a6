#pragma once
// What expert_affinity routers read (policies/expert_affinity_router.hpp): per instance, a request's
// local activation rate (LAR) at the rank of that instance where it would be most local.
//   prompt estimate: what the router can know at arrival, the prompt's token ids: the share of the
//     prompt's tokens whose Sem-MoE vote device (the instance's token→device table: where its
//     profile saw that token's experts) is the instance's most voted rank. Tokens its profile never
//     saw count against it: a placement profiled on other traffic is no evidence of locality;
//   hindsight: the request's actual routing, every MoE layer of every prompt token: the share of
//     its activations whose expert the instance's most local rank hosts.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/placement.hpp"
#include "policies/routing_to_instances.hpp"
#include "workloads/request.hpp"
#include "workloads/routing_source.hpp"

namespace semsim {

class InstanceAffinity {
 public:
  // `vote_devices`: per instance, dp_vote_devices of its plan's token→device table (read by the
  // prompt estimate); `placements`: per instance (read in hindsight). `routing` answers both.
  InstanceAffinity(AffinityInput input, std::vector<std::vector<std::int16_t>> vote_devices,
                   std::vector<const Placement*> placements, const RoutingSource& routing);

  // affinity[i] for every instance i (none read: left as they are).
  void of(const Request& request, std::span<InstanceLoad> instances);

 private:
  void prompt_estimate(std::span<InstanceLoad> instances);
  void hindsight(std::span<InstanceLoad> instances);

  AffinityInput input_;
  std::vector<std::vector<std::int16_t>> vote_devices_;
  std::vector<const Placement*> placements_;
  const RoutingSource& routing_;
  std::vector<TokenRef> tokens_;
  std::vector<std::int32_t> prompt_;
  std::vector<int> votes_;
  std::vector<ExpertId> experts_;
  std::vector<std::vector<long long>> local_;  // [instance][device]: activations its experts there serve
};

}  // namespace semsim
