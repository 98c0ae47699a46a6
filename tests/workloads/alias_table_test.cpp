#include "workloads/alias_table.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "workloads/counter_rng.hpp"

namespace semsim {
namespace {

// The draw's column by multiplication is the division's remainder, for every size's extremes and
// random 32-bit columns: draws are the same as with `(bits >> 32) % size`.
TEST(AliasTable, DrawsTheColumnsADivisionWould) {
  SplitMix64 bits(7);
  for (const int size : {1, 2, 3, 5, 7, 64, 100, 511, 512, 4096, 65537, (1 << 20) + 7}) {
    SCOPED_TRACE(size);
    std::vector<double> uniform(static_cast<std::size_t>(size),
                                1.0);  // every column kept: draw is the column
    const AliasTable table(uniform);
    const auto expected = [&](std::uint64_t b) {
      return static_cast<int>((b >> 32) % static_cast<std::uint64_t>(size));
    };
    for (const std::uint64_t edge :
         {std::uint64_t{0}, std::uint64_t{0xFFFFFFFF} << 32, static_cast<std::uint64_t>(size) << 32,
          static_cast<std::uint64_t>(size - 1) << 32})
      EXPECT_EQ(table.draw(edge), expected(edge));
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t b = bits();
      ASSERT_EQ(table.draw(b), expected(b)) << b;
    }
  }
}

TEST(AliasTable, DrawsInProportionToTheWeights) {
  const std::vector<double> weights{1, 2, 3, 4};
  const AliasTable table(weights);
  std::vector<int> counts(weights.size(), 0);
  SplitMix64 bits(3);
  constexpr int kDraws = 400000;
  for (int i = 0; i < kDraws; ++i) ++counts[static_cast<std::size_t>(table.draw(bits()))];
  for (std::size_t i = 0; i < weights.size(); ++i)
    EXPECT_NEAR(counts[i] / static_cast<double>(kDraws), weights[i] / 10.0, 0.005) << i;
}

}  // namespace
}  // namespace semsim
