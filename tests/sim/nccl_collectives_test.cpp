// NcclTimes: which groups NCCL's measured fits time, and at what message sizes.
#include "sim/nccl_collectives.hpp"

#include <gtest/gtest.h>

namespace semsim {
namespace {

CollectiveFit fit(const char* collective, int ranks, std::vector<double> factor_bytes = {},
                  std::vector<double> factor = {}, const char* level = "scaleup") {
  CollectiveFit f;
  f.collective = collective;
  f.level = level;
  f.ranks = ranks;
  f.alpha = 10e-6;
  f.bus_bandwidth = 100e9;
  f.factor_bytes = std::move(factor_bytes);
  f.factor = std::move(factor);
  return f;
}

TEST(NcclTimes, OnlyAGroupWithinOneNodeOfAMeasuredRankCount) {
  CalibrationProfile profile;
  profile.collectives = {fit("reduce_scatter", 4), fit("all_gather", 4)};
  std::string why;
  EXPECT_FALSE(NcclTimes::make(profile, 16, 8, why));
  EXPECT_EQ(why,
            "topology (this group of 16 spans nodes of 8, and the calibration profile has no NCCL "
            "reduce-scatter and all-gather of 16 ranks across nodes)");
  EXPECT_FALSE(NcclTimes::make(profile, 8, 8, why));
  EXPECT_EQ(why, "topology (the calibration profile has no NCCL reduce-scatter and all-gather of 8 ranks)");
  const auto times = NcclTimes::make(profile, 4, 8, why);
  ASSERT_TRUE(times);
  EXPECT_FALSE(times->has_all_reduce());
  EXPECT_EQ(times->description(), "nccl measured (4 ranks: reduce_scatter, all_gather)");
}

TEST(NcclTimes, AGroupAcrossNodesTakesTheScaleOutFitsOfItsRankCount) {
  CalibrationProfile profile;
  profile.collectives = {
      fit("reduce_scatter", 16), fit("all_gather", 16),  // scale-up of 16: not across nodes
      fit("reduce_scatter", 16, {}, {}, "scaleout"), fit("all_gather", 16, {}, {}, "scaleout")};
  profile.collectives[2].bus_bandwidth = 40e9;
  std::string why;
  const auto times = NcclTimes::make(profile, 16, 8, why);
  ASSERT_TRUE(times) << why;
  EXPECT_EQ(times->description(), "nccl measured (16 ranks across nodes: reduce_scatter, all_gather)");
  EXPECT_NEAR(times->seconds(ShardCollective::kReduceScatter, 1 << 20), 10e-6 + 15.0 * (1 << 20) / 40e9,
              1e-15);
  // Within a node the scale-out fits of the same rank count are not used.
  profile.collectives.resize(2);
  EXPECT_FALSE(NcclTimes::make(profile, 16, 8, why));
}

TEST(NcclTimes, SmallShardsPayTheMeasuredBandwidthFactor) {
  // Half the bandwidth at 1 KiB shards, all of it from 1 MiB on.
  CalibrationProfile profile;
  profile.collectives = {fit("reduce_scatter", 8, {1024, 1 << 20}, {0.5, 1.0}), fit("all_gather", 8),
                         fit("all_reduce", 8)};
  std::string why;
  const auto times = NcclTimes::make(profile, 8, 8, why);
  ASSERT_TRUE(times);
  EXPECT_NEAR(times->seconds(ShardCollective::kReduceScatter, 1024), 10e-6 + 7 * 1024 / (100e9 * 0.5), 1e-15);
  EXPECT_NEAR(times->seconds(ShardCollective::kReduceScatter, 1 << 20), 10e-6 + 7.0 * (1 << 20) / 100e9,
              1e-15);
  EXPECT_NEAR(times->seconds(ShardCollective::kAllReduce, 1 << 20), 10e-6 + 14.0 * (1 << 20) / 100e9, 1e-15);
}

}  // namespace
}  // namespace semsim
