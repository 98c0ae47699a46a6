#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "policies/contiguous_placement.hpp"
#include "policies/dispatch.hpp"
#include "policies/policy_registry.hpp"
#include "policies/routing_metrics.hpp"
#include "policies/token_scheduling.hpp"

namespace semsim {
namespace {

TEST(ContiguousPlacement, ExpertOnFloorOfEDOverN) {
  const Placement p = contiguous_placement(3, 64, 8);
  for (int layer = 0; layer < 3; ++layer)
    for (int e = 0; e < 64; ++e) {
      EXPECT_EQ(p.serving_device(layer, e, 0), e / 8) << e;
      EXPECT_TRUE(p.hosts(layer, e, e / 8));
    }
  for (int d = 0; d < 8; ++d) EXPECT_EQ(p.slots_on_device(d), 3 * 8);
  const Placement uneven = contiguous_placement(1, 10, 4);  // floor(e*4/10): 3,2,3,2 experts
  EXPECT_EQ(uneven.slots[0][0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(uneven.slots[0][1], (std::vector<int>{3, 4}));
}

TEST(Placement, SealRejectsUnhostedExperts) {
  Placement p;
  p.moe_layers = 1;
  p.experts = 4;
  p.devices = 2;
  p.slots = {{{0, 1}, {2}}};
  EXPECT_THROW(p.seal(), std::logic_error);
}

TEST(Placement, ReplicaOnTheTokensDeviceIsPreferred) {
  Placement p;
  p.moe_layers = 1;
  p.experts = 2;
  p.devices = 2;
  p.slots = {{{0, 1}, {1}}};
  p.seal();
  EXPECT_EQ(p.serving_device(0, 1, 1), 1);
  EXPECT_EQ(p.serving_device(0, 1, 0), 0);
  EXPECT_EQ(p.serving_device(0, 0, 1), 0);
}

// Two devices, four experts (0,1 on device 0; 2,3 on device 1), top-2.
struct DispatchCase {
  Placement placement = contiguous_placement(1, 4, 2);
  std::vector<int> token_device{0, 0, 1};
  std::vector<ExpertId> experts{0, 1,   // token 0 on device 0: both local
                                2, 3,   // token 1 on device 0: both on device 1
                                0, 3};  // token 2 on device 1: one remote, one local
};

// DeepSeek-V3 at EP32 with SGLang's 128 tokens per rank: two sets of 128 tokens from each of 256
// experts, 7,168 BF16 values and 56 min/max pairs per combined token (14,560 B; a dispatched FP8
// token with its scales and header is 14,352 B), send and receive alike, plus 2,176 B of signals.
TEST(Dispatch, LowLatencyBuffersAreDeepEpsLayout) {
  EXPECT_DOUBLE_EQ(low_latency_buffer_bytes(128, 7168, 256, 32), 2.0 * (2 * 256 * 128 * 14560.0 + 2176));
  // Twice the tokens, twice the buffers (but the signals).
  EXPECT_DOUBLE_EQ(low_latency_buffer_bytes(256, 7168, 256, 32), 2.0 * (4 * 256 * 128 * 14560.0 + 2176));
}

TEST(Dispatch, DedupSendsOneCopyPerRemoteDevice) {
  DispatchCase c;
  LayerDispatch out(2, 4);
  account_dispatch(c.placement, 0, DispatchMode::kDedup, c.token_device, c.experts, 2, out);
  EXPECT_EQ(out.copies, (std::vector<long long>{0, 1, 1, 0}));
  EXPECT_EQ(out.activations, 6);
  EXPECT_EQ(out.local_activations, 3);
  EXPECT_EQ(out.device_tokens, (std::vector<long long>{3, 3}));
  EXPECT_EQ(out.expert_tokens[0 * 4 + 0], 2);
  EXPECT_EQ(out.expert_tokens[1 * 4 + 3], 2);
  EXPECT_DOUBLE_EQ(local_activation_rate(out.local_activations, out.activations), 0.5);
}

TEST(Dispatch, PerExpertSendsOneCopyPerRemoteExpert) {
  DispatchCase c;
  LayerDispatch out(2, 4);
  account_dispatch(c.placement, 0, DispatchMode::kPerExpert, c.token_device, c.experts, 2, out);
  EXPECT_EQ(out.copies, (std::vector<long long>{0, 2, 1, 0}));
}

TEST(Dispatch, AllGatherIgnoresRouting) {
  DispatchCase c;
  LayerDispatch out(2, 4);
  account_dispatch(c.placement, 0, DispatchMode::kAllGather, c.token_device, c.experts, 2, out);
  EXPECT_EQ(out.copies, (std::vector<long long>{0, 2, 1, 0}));
  out.clear();
  EXPECT_EQ(out.activations, 0);
  EXPECT_EQ(out.copies, (std::vector<long long>{0, 0, 0, 0}));
}

TEST(Dispatch, AllLocalMeansNoTraffic) {
  const Placement p = contiguous_placement(1, 64, 8);
  std::vector<int> devices;
  std::vector<ExpertId> experts;
  for (int d = 0; d < 8; ++d)
    for (int t = 0; t < 10; ++t) {
      devices.push_back(d);
      for (int j = 0; j < 6; ++j) experts.push_back(static_cast<ExpertId>(d * 8 + j));
    }
  LayerDispatch out(8, 64);
  account_dispatch(p, 0, DispatchMode::kDedup, devices, experts, 6, out);
  for (long long c : out.copies) EXPECT_EQ(c, 0);
  EXPECT_EQ(out.local_activations, out.activations);
  EXPECT_DOUBLE_EQ(load_imbalance(out.device_tokens), 1.0);
}

TEST(Dispatch, UniformRoutingOnContiguousPlacementGivesLarOneOverD) {
  const Placement p = contiguous_placement(1, 64, 8);
  std::mt19937_64 rng(11);
  std::vector<int> devices;
  std::vector<ExpertId> experts;
  for (int t = 0; t < 40000; ++t) {
    devices.push_back(t % 8);
    std::vector<ExpertId> chosen;
    while (chosen.size() < 6) {
      const auto e = static_cast<ExpertId>(rng() % 64);
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
    }
    experts.insert(experts.end(), chosen.begin(), chosen.end());
  }
  LayerDispatch out(8, 64);
  account_dispatch(p, 0, DispatchMode::kDedup, devices, experts, 6, out);
  EXPECT_NEAR(local_activation_rate(out.local_activations, out.activations), 1.0 / 8, 0.003);
  EXPECT_LT(load_imbalance(out.device_tokens), 1.03);
}

// Copies are counted in per-device lanes (8-bit counters, flushed before they could overflow) in
// groups of up to 16 devices and per remote device or expert otherwise: both must give each
// (source, destination) the tokens from the source with an expert served on the destination
// (dedup), those experts (per_expert) or every token (all_gather), summed over two calls of 500
// tokens (the counts accumulate; every lane word is flushed several times).
TEST(Dispatch, CopiesCountEachTokensRemoteDevicesOrExperts) {
  for (const DispatchMode mode : {DispatchMode::kDedup, DispatchMode::kPerExpert, DispatchMode::kAllGather})
    for (const int top_k : {8, 16, 40})
      for (const int devices : {2, 8, 16, 32, 128}) {
        SCOPED_TRACE(fmt::format("mode {} top-{} {} devices", static_cast<int>(mode), top_k, devices));
        const int expert_count = 256;
        const Placement p = contiguous_placement(1, expert_count, devices);
        std::mt19937_64 rng(static_cast<std::uint64_t>(devices));
        std::vector<long long> expected(static_cast<std::size_t>(devices) * devices, 0);
        LayerDispatch out(devices, expert_count);
        for (int call = 0; call < 2; ++call) {
          std::vector<int> token_device;
          std::vector<ExpertId> experts;
          for (int t = 0; t < 500; ++t) {
            const int src = static_cast<int>(rng() % devices);
            token_device.push_back(src);
            std::vector<int> served(devices, 0);  // the token's experts served on each device
            std::vector<ExpertId> chosen;
            while (static_cast<int>(chosen.size()) < top_k) {
              const auto e = static_cast<ExpertId>(rng() % expert_count);
              if (std::find(chosen.begin(), chosen.end(), e) != chosen.end()) continue;
              chosen.push_back(e);
              ++served[p.serving_device(0, e, src)];
            }
            experts.insert(experts.end(), chosen.begin(), chosen.end());
            for (int dst = 0; dst < devices; ++dst)
              if (dst != src)
                expected[static_cast<std::size_t>(src) * devices + dst] +=
                    mode == DispatchMode::kDedup       ? (served[dst] > 0 ? 1 : 0)
                    : mode == DispatchMode::kPerExpert ? served[dst]
                                                       : 1;
          }
          account_dispatch(p, 0, mode, token_device, experts, top_k, out);
        }
        EXPECT_EQ(out.copies, expected);
      }
}

// Two nodes of two GPUs (0, 1 | 2, 3), experts 2d and 2d + 1 on device d, top-2.
TEST(Dispatch, HierarchicalSendsOneRdmaCopyPerNodeAndForwardsInside) {
  const Placement p = contiguous_placement(1, 8, 4);
  const std::vector<int> token_device{0, 1, 3, 2, 0};
  const std::vector<ExpertId> experts{
      4, 6,   // on 0 to GPUs 2 and 3: RDMA to 2 (local index 0), 2 forwards to 3
      0, 5,   // on 1 to 0 (its node) and 2: RDMA to 3 (local index 1), 3 forwards to 2
      6, 7,   // on 3, both local
      1, 3,   // on 2 to 0 and 1: RDMA to 0, 0 forwards to 1
      4, 5};  // on 0, both on GPU 2, its RDMA peer: nothing forwarded
  LayerDispatch out(4, 8, 2);
  account_dispatch(p, 0, DispatchMode::kHierarchical, token_device, experts, 2, out);
  EXPECT_EQ(out.copies, (std::vector<long long>{0, 1, 2, 0,  //
                                                1, 0, 0, 1,  //
                                                1, 0, 0, 1,  //
                                                0, 0, 1, 0}));
  EXPECT_EQ(out.forwarded, 3);
  EXPECT_EQ(out.local_activations, 2);
  EXPECT_EQ(out.device_tokens, (std::vector<long long>{2, 1, 4, 3}));
  // One node: the same copies as dedup.
  LayerDispatch one_node(4, 8), dedup(4, 8);
  account_dispatch(p, 0, DispatchMode::kHierarchical, token_device, experts, 2, one_node);
  account_dispatch(p, 0, DispatchMode::kDedup, token_device, experts, 2, dedup);
  EXPECT_EQ(one_node.copies, dedup.copies);
  EXPECT_EQ(one_node.forwarded, 0);
  // Low latency moves the per-expert copies.
  LayerDispatch low_latency(4, 8, 2), per_expert(4, 8, 2);
  account_dispatch(p, 0, DispatchMode::kLowLatency, token_device, experts, 2, low_latency);
  account_dispatch(p, 0, DispatchMode::kPerExpert, token_device, experts, 2, per_expert);
  EXPECT_EQ(low_latency.copies, per_expert.copies);
  EXPECT_THROW(LayerDispatch(6, 8, 4), std::logic_error);
}

// Random routing over nodes of 8 (and of 2): each token sends one copy to each GPU of its node with
// one of its experts, one RDMA copy to each other node with one, to the GPU of its local index,
// which forwards one copy to each other GPU there with one of its experts; summed over two calls.
TEST(Dispatch, HierarchicalCopiesMatchTheirDefinition) {
  for (const auto& [nodes, per_node] : {std::pair{2, 8}, std::pair{4, 8}, std::pair{8, 2}})
    for (const int top_k : {4, 8}) {
      SCOPED_TRACE(fmt::format("{} x {} top-{}", nodes, per_node, top_k));
      const int devices = nodes * per_node, expert_count = 64;
      const Placement p = contiguous_placement(1, expert_count, devices);
      std::mt19937_64 rng(static_cast<std::uint64_t>(devices * top_k));
      std::vector<long long> expected(static_cast<std::size_t>(devices) * devices, 0);
      long long forwarded = 0;
      LayerDispatch out(devices, expert_count, per_node);
      for (int call = 0; call < 2; ++call) {
        std::vector<int> token_device;
        std::vector<ExpertId> experts;
        for (int t = 0; t < 400; ++t) {
          const int src = static_cast<int>(rng() % devices);
          token_device.push_back(src);
          std::vector<bool> served(devices, false);
          std::vector<ExpertId> chosen;
          while (static_cast<int>(chosen.size()) < top_k) {
            const auto e = static_cast<ExpertId>(rng() % expert_count);
            if (std::find(chosen.begin(), chosen.end(), e) != chosen.end()) continue;
            chosen.push_back(e);
            served[p.serving_device(0, e, src)] = true;
          }
          experts.insert(experts.end(), chosen.begin(), chosen.end());
          auto at = [&](int from, int to) -> long long& {
            return expected[static_cast<std::size_t>(from) * devices + to];
          };
          for (int node = 0; node < nodes; ++node) {
            const int forwarder = node * per_node + src % per_node;
            bool reached = false;
            for (int dst = node * per_node; dst < (node + 1) * per_node; ++dst) {
              if (!served[dst] || dst == src) continue;
              if (node == src / per_node) {
                ++at(src, dst);
                continue;
              }
              reached = true;
              if (dst != forwarder) {
                ++at(forwarder, dst);
                ++forwarded;
              }
            }
            if (reached) ++at(src, forwarder);
          }
        }
        account_dispatch(p, 0, DispatchMode::kHierarchical, token_device, experts, top_k, out);
      }
      EXPECT_EQ(out.copies, expected);
      EXPECT_EQ(out.forwarded, forwarded);
    }
}

TEST(Metrics, ImbalanceIsMaxOverMean) {
  const std::vector<long long> loads{1, 2, 3, 6};
  EXPECT_DOUBLE_EQ(load_imbalance(loads), 2.0);
  const std::vector<long long> idle{0, 0};
  EXPECT_DOUBLE_EQ(load_imbalance(idle), 1.0);
  EXPECT_DOUBLE_EQ(local_activation_rate(0, 0), 0.0);
}

TEST(RequestScheduling, RoundRobinCyclesShortestQueuePicksLeastLoaded) {
  PolicyChoice rr{"round_robin", {}};
  const PlacementPlan no_tables;
  auto scheduler = make_request_scheduler(rr, no_tables);
  std::vector<RankLoad> loads(3);
  Request r;
  EXPECT_FALSE(scheduler->reads_prompt());
  EXPECT_EQ(scheduler->choose(r, {}, loads), 0);
  EXPECT_EQ(scheduler->choose(r, {}, loads), 1);
  EXPECT_EQ(scheduler->choose(r, {}, loads), 2);
  EXPECT_EQ(scheduler->choose(r, {}, loads), 0);
  auto shortest = make_request_scheduler({"shortest_queue", {}}, no_tables);
  loads[0].outstanding_tokens = 50;
  loads[1].outstanding_tokens = 10;
  loads[2].outstanding_tokens = 10;
  EXPECT_EQ(shortest->choose(r, {}, loads), 1);
}

TEST(TokenScheduling, PositionalSlicesAreContiguousAndEqual) {
  std::vector<int> eight(8), five(5);
  positional_token_ranks(4, eight);
  positional_token_ranks(2, five);
  EXPECT_EQ(eight, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(five, (std::vector<int>{0, 0, 0, 1, 1}));
  PositionalTokenScheduler scheduler(2);
  std::vector<int> rank;
  scheduler.assign(3, std::vector<std::int32_t>(5, -1), {}, rank);
  EXPECT_EQ(rank, five);
  EXPECT_FALSE(scheduler.reshuffles());
}

TEST(PolicyChoice, NamesAndParametersAreChecked) {
  auto parse = [&](const std::string& text) {
    return read_policy_choice(YamlInput::parse(text, "p.yaml"), PolicyKind::kPlacement);
  };
  EXPECT_EQ(parse("contiguous").name, "contiguous");
  EXPECT_DOUBLE_EQ(parse("{name: eplb, redundant: 8}").param("redundant"), 8);
  EXPECT_DOUBLE_EQ(parse("{name: eplb}").param("redundant"), -1);
  EXPECT_DOUBLE_EQ(parse("{name: eplb}").param("groups"), 0);
  try {
    parse("contiguos");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'contiguous'"), std::string::npos) << e.what();
  }
  try {
    parse("{name: eplb, redundnt: 8}");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.yaml:1:14"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean 'redundant'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace semsim
