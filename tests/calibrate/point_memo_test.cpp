// PointMemo: a point computed once while it stays among the recently asked, -0 as 0, a throw
// remembering nothing, and points asked again after a thousand others mostly remembered.
#include "calibrate/fit/point_memo.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace semsim {
namespace {

TEST(PointMemo, RemembersAPointAndTellsPointsApart) {
  PointMemo memo;
  int computed = 0;
  const auto value = [&](double x, double y) {
    return memo.get(x, y, [&] {
      ++computed;
      return 10 * x + y;
    });
  };
  EXPECT_EQ(value(3, 618.5), 648.5);
  EXPECT_EQ(value(618.5, 3), 6188.0);
  EXPECT_EQ(value(3, 618.5), 648.5);
  EXPECT_EQ(value(618.5, 3), 6188.0);
  EXPECT_EQ(computed, 2);
  EXPECT_EQ(value(0.0, 1), 1.0);
  EXPECT_EQ(value(-0.0, 1), 1.0);  // -0 is 0
  EXPECT_EQ(computed, 3);
}

TEST(PointMemo, AThrowRemembersNothing) {
  PointMemo memo;
  EXPECT_THROW(memo.get(1, 2, []() -> double { throw std::runtime_error("far outside the table"); }),
               std::runtime_error);
  EXPECT_EQ(memo.get(1, 2, [] { return 4.0; }), 4.0);
  EXPECT_EQ(memo.get(1, 2, [] { return 5.0; }), 4.0);
}

// Decode attention's points: batch sizes at mean contexts, each asked again after the others. A
// direct-mapped memo of as many slots recomputed about a third of them on every pass (points that
// share a slot evict each other); four ways per set keep all but a few.
TEST(PointMemo, PointsAskedAgainAfterAThousandOthersAreMostlyRemembered) {
  PointMemo memo;
  int computed = 0;
  for (int pass = 0; pass < 3; ++pass)
    for (int sequences = 1; sequences <= 40; ++sequences)
      for (int context = 0; context < 25; ++context)
        memo.get(sequences, 512.0 + context + 1.0 / sequences,
                 [&] { return static_cast<double>(++computed); });
  EXPECT_GE(computed, 1000);
  EXPECT_LE(computed, 1000 + 2 * 50);  // 1,000 first asked, then at most 5 % again a pass
}

}  // namespace
}  // namespace semsim
