// Which replica a token uses (Placement::serving_device) and how dispatch spreads tokens over them.
#include <gtest/gtest.h>

#include "policies/dispatch.hpp"
#include "policies/placement.hpp"

namespace semsim {
namespace {

// Four devices in two nodes {0, 1} and {2, 3}. Expert 0 on devices 0, 2, 3; expert 1 on device 1
// only; expert 2 on devices 0 and 1 (both in node 0).
Placement two_node_placement() {
  Placement p;
  p.moe_layers = 1;
  p.experts = 3;
  p.devices = 4;
  p.devices_per_node = 2;
  p.slots = {{{0, 2}, {1, 2}, {0}, {0}}};
  p.seal();
  return p;
}

TEST(ReplicaChoice, OwnDeviceThenOwnNodeThenSpreadOverAll) {
  const Placement p = two_node_placement();
  EXPECT_EQ(p.replica_count(0, 0), 3);
  for (std::uint64_t spread = 0; spread < 4; ++spread) {
    EXPECT_EQ(p.serving_device(0, 0, 0, spread), 0);  // its own device
    EXPECT_EQ(p.serving_device(0, 0, 3, spread), 3);
    EXPECT_EQ(p.serving_device(0, 0, 1, spread), 0);  // the one replica in its node
    EXPECT_EQ(p.serving_device(0, 1, 2, spread), 1);  // the only replica
  }
  // Node 1 hosts no replica of expert 2: the spread picks among devices 0 and 1.
  EXPECT_EQ(p.serving_device(0, 2, 2, 0), 0);
  EXPECT_EQ(p.serving_device(0, 2, 2, 1), 1);
  EXPECT_EQ(p.serving_device(0, 2, 3, 7), 1);
}

TEST(ReplicaChoice, SeveralReplicasInTheNodeAreSpread) {
  Placement p;
  p.moe_layers = 1;
  p.experts = 2;
  p.devices = 4;
  p.devices_per_node = 0;  // one node
  p.slots = {{{0}, {1}, {1}, {0}}};
  p.seal();
  EXPECT_EQ(p.devices_per_node, 4);
  EXPECT_EQ(p.serving_device(0, 1, 0, 0), 1);
  EXPECT_EQ(p.serving_device(0, 1, 0, 1), 2);
  EXPECT_EQ(p.serving_device(0, 1, 3, 2), 1);
}

TEST(ReplicaChoice, SealRejectsAnExpertTwiceOnOneDeviceAndUnevenNodes) {
  Placement p = two_node_placement();
  p.slots[0][1] = {1, 2, 2};
  EXPECT_THROW(p.seal(), std::logic_error);
  p = two_node_placement();
  p.devices_per_node = 3;
  EXPECT_THROW(p.seal(), std::logic_error);
}

TEST(ReplicaChoice, RoundRobinRotatesAcrossDispatches) {
  const Placement p = two_node_placement();
  // Four tokens on device 2, each routed to expert 2 (top-1): replicas 0, 1, 0, 1.
  LayerDispatch out(4, 3);
  const std::vector<int> on_device_2(4, 2);
  const std::vector<ExpertId> expert_2(4, 2);
  account_dispatch(p, 0, DispatchMode::kDedup, on_device_2, expert_2, 1, out);
  EXPECT_EQ(out.expert_tokens[0 * 3 + 2], 2);
  EXPECT_EQ(out.expert_tokens[1 * 3 + 2], 2);
  EXPECT_EQ(out.copies[2 * 4 + 0], 2);
  EXPECT_EQ(out.copies[2 * 4 + 1], 2);
  EXPECT_EQ(out.local_activations, 0);
  // One token per step: the rotation continues where the last step stopped.
  const std::vector<int> one_token{3};
  const std::vector<ExpertId> one_expert{2};
  std::vector<long long> served;
  for (int step = 0; step < 4; ++step) {
    out.clear();
    account_dispatch(p, 0, DispatchMode::kDedup, one_token, one_expert, 1, out);
    served.push_back(out.expert_tokens[1 * 3 + 2]);
  }
  EXPECT_EQ(served, (std::vector<long long>{0, 1, 0, 1}));
  // A token whose device hosts a replica uses it and does not advance the rotation.
  out.clear();
  const std::vector<int> own{1};
  account_dispatch(p, 0, DispatchMode::kDedup, own, one_expert, 1, out);
  EXPECT_EQ(out.local_activations, 1);
  out.clear();
  account_dispatch(p, 0, DispatchMode::kDedup, one_token, one_expert, 1, out);
  EXPECT_EQ(out.expert_tokens[0 * 3 + 2], 1);
}

TEST(ReplicaChoice, UniformIsDeterministicAndSpreadsEvenly) {
  const Placement p = two_node_placement();
  const std::vector<int> devices(4000, 3);
  const std::vector<ExpertId> experts(4000, 2);
  LayerDispatch a(4, 3), b(4, 3);
  account_dispatch(p, 0, DispatchMode::kPerExpert, devices, experts, 1, a, ReplicaChoice::kUniform);
  account_dispatch(p, 0, DispatchMode::kPerExpert, devices, experts, 1, b, ReplicaChoice::kUniform);
  EXPECT_EQ(a.expert_tokens, b.expert_tokens);
  EXPECT_NEAR(a.expert_tokens[0 * 3 + 2], 2000, 150);
  EXPECT_EQ(a.expert_tokens[0 * 3 + 2] + a.expert_tokens[1 * 3 + 2], 4000);
  EXPECT_EQ(a.device_tokens[2] + a.device_tokens[3], 0);
}

}  // namespace
}  // namespace semsim
