// ProgressCounter: a stage's units finished on several threads reach the callback one call at a
// time, 0 first and every count once in increasing order.
#include "models/progress.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace semsim {
namespace {

TEST(progressCounter, ReportsEveryCountOnceInOrderFromManyThreads) {
  struct Call {
    std::string what;
    long long done, total;
  };
  std::vector<Call> calls;  // unguarded: the counter makes the calls one at a time
  const ProgressCallback record = [&](std::string_view what, long long done, long long total) {
    calls.push_back({std::string(what), done, total});
  };
  constexpr int kThreads = 4, kUnitsPerThread = 250;
  ProgressCounter counter(record, "layer", kThreads * kUnitsPerThread);
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < kThreads; ++t)
      workers.emplace_back([&] {
        for (int i = 0; i < kUnitsPerThread; ++i) counter.finished_one();
      });
  }
  ASSERT_EQ(calls.size(), kThreads * kUnitsPerThread + 1u);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].what, "layer");
    EXPECT_EQ(calls[i].done, static_cast<long long>(i));
    EXPECT_EQ(calls[i].total, kThreads * kUnitsPerThread);
  }
}

}  // namespace
}  // namespace semsim
