// IntegerMemo: each point computed once, rows forgotten one at a time, columns outside the table
// computed at every question.
#include "sim/integer_memo.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace semsim {
namespace {

TEST(IntegerMemo, ComputesEachPointOnceAndRemembersIt) {
  IntegerMemo memo;
  int computed = 0;
  const auto value = [&](std::size_t row, long long column) {
    return memo.get(row, column, [&] {
      ++computed;
      return 1000.0 * static_cast<double>(row) + static_cast<double>(column);
    });
  };
  EXPECT_EQ(value(3, 40), 3040.0);
  EXPECT_EQ(value(0, 5), 5.0);
  EXPECT_EQ(value(3, 41), 3041.0);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(value(3, 40), 3040.0);
  EXPECT_EQ(value(0, 5), 5.0);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(value(3, 1000), 4000.0);  // a row grows past the columns it held
  EXPECT_EQ(value(3, 40), 3040.0);
  EXPECT_EQ(computed, 4);
  memo.clear(3);
  EXPECT_EQ(value(3, 40), 3040.0);
  EXPECT_EQ(value(0, 5), 5.0);  // another row keeps its values
  EXPECT_EQ(computed, 5);
}

TEST(IntegerMemo, ColumnsOutsideTheTableAreComputedEachTime) {
  IntegerMemo memo;
  int computed = 0;
  for (const long long column : {IntegerMemo::kColumns, IntegerMemo::kColumns, -1LL, -1LL})
    memo.get(0, column, [&] { return static_cast<double>(++computed); });
  EXPECT_EQ(computed, 4);
}

TEST(IntegerMemo, AThrowRemembersNothing) {
  IntegerMemo memo;
  EXPECT_THROW(memo.get(1, 7, []() -> double { throw std::runtime_error("far outside the table"); }),
               std::runtime_error);
  EXPECT_EQ(memo.get(1, 7, [] { return 2.5; }), 2.5);
}

}  // namespace
}  // namespace semsim
