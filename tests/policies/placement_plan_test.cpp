#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "models/input_error.hpp"
#include "policies/contiguous_placement.hpp"
#include "policies/inter_layer_table.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "policies/semmoe_token_scheduling.hpp"
#include "policies/token_device_prediction.hpp"

namespace semsim {
namespace {

// 4 experts on 2 devices: {0,1} on device 0, {2,3} on device 1.
const Placement& two_by_two(int layers = 1) {
  static const Placement one = contiguous_placement(1, 4, 2);
  static const Placement three = contiguous_placement(3, 4, 2);
  return layers == 1 ? one : three;
}

TEST(MajorityDevice, MostExpertsThenFirstToReachTheTally) {
  const std::vector<ExpertId> most{2, 0, 1}, tie{2, 0}, late{0, 2, 3, 1};
  EXPECT_EQ(majority_device(two_by_two(), 0, most.data(), 3), 0);
  EXPECT_EQ(majority_device(two_by_two(), 0, tie.data(), 2), 1);   // expert 2's device reached 1 first
  EXPECT_EQ(majority_device(two_by_two(), 0, late.data(), 4), 1);  // device 1 reached 2 first
}

// 3 MoE layers, 4 experts, top-2; token "a" (id 0) and "b" (id 1). Majority devices per token:
//   a: d0 d0 d1   (x2)      b: d1 d1 d1      a': d0 d0 d0
RoutingTrace three_layer_trace() {
  TraceBuilder b({"tiny", "hand-made", 3, 4, 2, false});
  const std::int32_t a = b.token_id("a"), bb = b.token_id("b");
  b.add({{4, 1, true, 0},
         std::vector<std::int32_t>{a, a, bb, a},
         std::vector<ExpertId>{0, 1, /**/ 1, 0, /**/ 2, 3,   // a: d0 d0 d1
                               0, 1, /**/ 0, 1, /**/ 3, 2,   // a: d0 d0 d1
                               2, 3, /**/ 3, 2, /**/ 2, 3,   // b: d1 d1 d1
                               1, 0, /**/ 0, 1, /**/ 0, 1},  // a: d0 d0 d0
         {}},
        "fixture");
  return std::move(b).build();
}

TEST(InterLayerTable, CountsNextDeviceAfterThePreviousDevices) {
  const RoutingTrace trace = three_layer_trace();
  const InterLayerTable table = build_inter_layer_table(two_by_two(3), trace, 2);
  const std::vector<int> after_00{0, 0}, after_11{1, 1}, after_0{0}, after_10{1, 0};
  // Layer 1, lookback min(2, 1) = 1: after d0 -> d0 three times; after d1 -> d1 once.
  EXPECT_EQ(table.predict(1, after_0).device, 0);
  EXPECT_DOUBLE_EQ(table.predict(1, after_0).confidence, 1.0);
  // Layer 2 after (d0, d0): d1 twice, d0 once.
  const DevicePrediction p = table.predict(2, after_00);
  EXPECT_EQ(p.device, 1);
  EXPECT_NEAR(p.confidence, 2.0 / 3.0, 1e-6);
  EXPECT_EQ(table.predict(2, after_11).device, 1);
  EXPECT_EQ(table.predict(2, after_10).device, -1);  // never profiled
  EXPECT_EQ(table.predict(0, after_0).device, -1);   // the first layer has no history
  const InterLayerTable one_back = build_inter_layer_table(two_by_two(3), trace, 1);
  EXPECT_EQ(one_back.predict(2, after_00).device, 1);  // only the d0 at layer 1 is used
}

TEST(InterLayerTable, KeyIndexesAreDenseAndInvertible) {
  InterLayerTable table;
  table.reset(2, 3, 2);
  ASSERT_EQ(table.next[0].size(), 3u + 9u);
  std::vector<bool> seen(12, false);
  for (int a = 0; a < 3; ++a) {
    const std::vector<int> one{a};
    EXPECT_EQ(table.key_devices(table.key_index(one)), one);
    seen[table.key_index(one)] = true;
    for (int b = 0; b < 3; ++b) {
      const std::vector<int> two{a, b};
      EXPECT_EQ(table.key_devices(table.key_index(two)), two);
      seen[table.key_index(two)] = true;
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 12);
  EXPECT_THROW(table.reset(2, 256, 4), InputError);
}

// One layer, 4 experts on 2 devices; profile of every request.
RoutingProfile profile_of(std::vector<std::pair<std::string, std::vector<ExpertId>>> tokens) {
  TraceBuilder b({"tiny", "hand-made", 1, 4, 2, false});
  std::vector<std::int32_t> ids;
  std::vector<ExpertId> experts;
  for (const auto& [text, routed] : tokens) {
    ids.push_back(b.token_id(text));
    experts.insert(experts.end(), routed.begin(), routed.end());
  }
  b.add({{static_cast<int>(ids.size()), 1, true, 0}, ids, experts, {}}, "fixture");
  return RoutingProfile::build(std::move(b).build(), {});
}

TEST(TokenDeviceTable, CompletionPrefersHostingDeviceWithinTheBalanceCap) {
  // x and y both prefer device 0; with balance 1.0 (2 occurrences per device) y must go to device 1.
  const RoutingProfile profile = profile_of({{"x", {0, 1}}, {"x", {0, 2}}, {"y", {1, 0}}, {"y", {1, 3}}});
  TokenDeviceTable tight;
  complete_token_devices(tight, two_by_two(), profile, 1.0);
  EXPECT_EQ(tight.device[0][0], 0);
  EXPECT_FLOAT_EQ(tight.confidence[0][0], 0.75F);
  EXPECT_EQ(tight.device[0][1], 1);
  EXPECT_FLOAT_EQ(tight.confidence[0][1], 0.25F);
  TokenDeviceTable loose;
  complete_token_devices(loose, two_by_two(), profile, 2.0);
  EXPECT_EQ(loose.device[0][1], 0);
  // A policy's own entries are kept and count toward the load.
  TokenDeviceTable given = loose;
  given.device[0][0] = 1;
  given.device[0][1] = -1;
  complete_token_devices(given, two_by_two(), profile, 1.0);
  EXPECT_EQ(given.device[0][0], 1);
  EXPECT_EQ(given.device[0][1], 0);
}

TEST(TokenDeviceTable, UnprofiledTokensTakeTheirSameTextTokensDevice) {
  TraceBuilder b({"tiny", "hand-made", 1, 4, 2, false});
  const std::int32_t the = b.token_id("the"), The = b.token_id("ĠThe"), dog = b.token_id("dog");
  b.add({{2, 1, true, 0}, std::vector<std::int32_t>{the, the}, std::vector<ExpertId>{2, 3, 3, 1}, {}},
        "fixture");
  b.add({{2, 1, true, 0}, std::vector<std::int32_t>{The, dog}, std::vector<ExpertId>{0, 1, 0, 1}, {}},
        "fixture");
  const RoutingProfile profile = RoutingProfile::build(std::move(b).build(), {false, true});
  TokenDeviceTable table;
  complete_token_devices(table, two_by_two(), profile, 2.0);
  EXPECT_EQ(table.device[0][The], -1);
  fill_unprofiled_by_text(table, profile);
  EXPECT_EQ(table.device[0][The], 1);
  EXPECT_FLOAT_EQ(table.confidence[0][The], 0.75F);
  EXPECT_EQ(table.device[0][dog], -1);  // no profiled token shares its text
}

TEST(TokenDevicePrediction, TokenTableWhenMoreConfidentElseInterLayer) {
  PlacementPlan plan;
  plan.placement = two_by_two(3);
  plan.token_devices.device.assign(3, {0, -1});
  plan.token_devices.confidence.assign(3, {0.6F, 0.0F});
  plan.inter_layer.reset(3, 2, 2);
  const std::vector<int> previous{1, 1};
  plan.inter_layer.next[2][plan.inter_layer.key_index(previous)] = {1, 0.7F};
  EXPECT_EQ(predict_token_device(plan, 2, 0, previous).device, 1);  // 0.7 > 0.6
  EXPECT_EQ(predict_token_device(plan, 2, 0, previous).basis, DeviceBasis::kInterLayer);
  plan.token_devices.confidence[2][0] = 0.8F;
  EXPECT_EQ(predict_token_device(plan, 2, 0, previous).device, 0);
  EXPECT_EQ(predict_token_device(plan, 1, 0, previous).device, 0);  // no A entry at layer 1
  EXPECT_EQ(predict_token_device(plan, 2, 1, previous).device, 1);  // token 1 has no T entry
  EXPECT_EQ(predict_token_device(plan, 1, 1, previous).basis, DeviceBasis::kNone);
  EXPECT_EQ(predict_token_device(plan, 1, -1, previous).device, -1);  // identity unknown
}

TEST(AlignToEqualSlices, KeepsTheMostConfidentAndFillsInTokenOrder) {
  const std::vector<int> predicted{0, 0, 0, 1, -1, 0};
  const std::vector<float> confidence{0.9F, 0.1F, 0.5F, 0.3F, 0.0F, 0.7F};
  std::vector<int> rank(6), scratch;
  std::vector<std::uint32_t> keys;
  align_to_equal_slices(predicted, confidence, 2, rank, scratch, keys);
  EXPECT_EQ(rank, (std::vector<int>{0, 1, 0, 1, 1, 0}));
  // 7 tokens on 3 ranks: slices of at most 3.
  const std::vector<int> all_on_two(7, 2);
  const std::vector<float> flat(7, 0.5F);
  rank.resize(7);
  align_to_equal_slices(all_on_two, flat, 3, rank, scratch, keys);
  EXPECT_EQ(rank, (std::vector<int>{2, 2, 2, 0, 0, 0, 1}));
  // A lone token keeps its predicted rank.
  const std::vector<int> lone{5};
  const std::vector<float> sure{1.0F};
  rank.resize(1);
  align_to_equal_slices(lone, sure, 8, rank, scratch, keys);
  EXPECT_EQ(rank, std::vector<int>{5});
}

TEST(AlignToEqualSlices, PaddedSlicesAndPredictionsKeptWhenTheyFit) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int ranks = 1 + static_cast<int>(rng() % 8), tokens = static_cast<int>(rng() % 100);
    std::vector<int> predicted(tokens);
    std::vector<float> confidence(tokens);
    for (int t = 0; t < tokens; ++t) {
      predicted[t] = static_cast<int>(rng() % (ranks + 1)) - 1;
      confidence[t] = static_cast<float>(rng() % 1000) / 1000.0F;
    }
    std::vector<int> rank(tokens), scratch;
    std::vector<std::uint32_t> keys;
    align_to_equal_slices(predicted, confidence, ranks, rank, scratch, keys);
    std::vector<int> size(ranks, 0), wanted(ranks, 0), kept(ranks, 0);
    for (int t = 0; t < tokens; ++t) {
      ++size[rank[t]];
      if (predicted[t] >= 0) ++wanted[predicted[t]], kept[predicted[t]] += rank[t] == predicted[t] ? 1 : 0;
    }
    for (int r = 0; r < ranks; ++r) {
      const int slice = (tokens + ranks - 1) / ranks;
      EXPECT_LE(size[r], slice);
      EXPECT_EQ(kept[r], std::min(wanted[r], slice));
    }
  }
}

// The stated overflow rule, written plainly: each rank keeps its predicted tokens by decreasing
// confidence (ties: earlier token) up to the slice, then the rest fill ranks in token order.
std::vector<int> aligned_by_sorting(const std::vector<int>& predicted, const std::vector<float>& confidence,
                                    int ranks) {
  const auto tokens = static_cast<int>(predicted.size());
  const int slice = (tokens + ranks - 1) / ranks;
  std::vector<int> rank(tokens, -1), room(ranks, slice);
  for (int r = 0; r < ranks; ++r) {
    std::vector<int> mine;
    for (int t = 0; t < tokens; ++t)
      if (predicted[t] == r) mine.push_back(t);
    std::stable_sort(mine.begin(), mine.end(), [&](int a, int b) { return confidence[a] > confidence[b]; });
    for (std::size_t i = 0; i < mine.size() && room[r] > 0; ++i) rank[mine[i]] = r, --room[r];
  }
  for (int t = 0, open = 0; t < tokens; ++t) {
    if (rank[t] >= 0) continue;
    while (room[open] == 0) ++open;
    rank[t] = open, --room[open];
  }
  return rank;
}

TEST(AlignToEqualSlices, SameRanksAsTheStatedRuleWithManyTies) {
  std::mt19937 rng(13);
  std::vector<int> rank, scratch;
  std::vector<std::uint32_t> keys;
  for (int trial = 0; trial < 300; ++trial) {
    const int ranks = 1 + static_cast<int>(rng() % 8), tokens = static_cast<int>(rng() % 600);
    // Few distinct confidences, some zero, and a skewed prediction so that ranks overflow.
    const int levels = 1 + static_cast<int>(rng() % 6);
    std::vector<int> predicted(tokens);
    std::vector<float> confidence(tokens);
    for (int t = 0; t < tokens; ++t) {
      predicted[t] =
          rng() % 4 == 0 ? static_cast<int>(rng() % (ranks + 1)) - 1 : static_cast<int>(rng() % 2) % ranks;
      confidence[t] = static_cast<float>(rng() % levels) / static_cast<float>(levels);
    }
    rank.assign(tokens, 0);
    align_to_equal_slices(predicted, confidence, ranks, rank, scratch, keys);
    ASSERT_EQ(rank, aligned_by_sorting(predicted, confidence, ranks)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace semsim
