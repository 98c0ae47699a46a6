// Speculative decoding's acceptance model: drafts accepted per verification, drawn as a pure function
// of (seed, request, verification), and the counts a run reports.
#include "workloads/speculative_acceptance.hpp"

#include <gtest/gtest.h>

namespace semsim {
namespace {

AcceptanceModel fixed(double rate, int drafts) {
  AcceptanceModel model;
  model.rates.assign(static_cast<std::size_t>(drafts), rate);
  return model;
}

TEST(SpeculativeAcceptance, RatesZeroAndOneAcceptNoneAndAll) {
  for (int drafts : {1, 2, 5})
    for (long long v = 0; v < 50; ++v) {
      EXPECT_EQ(accepted_drafts(fixed(0, drafts), drafts, 7, 3, v), 0);
      EXPECT_EQ(accepted_drafts(fixed(1, drafts), drafts, 7, 3, v), drafts);
    }
}

TEST(SpeculativeAcceptance, PerPositionStopsAtTheFirstRejection) {
  AcceptanceModel model;
  model.kind = AcceptanceKind::kPerPosition;
  model.rates = {1, 0, 1};
  for (long long v = 0; v < 50; ++v) EXPECT_EQ(accepted_drafts(model, 3, 1, 2, v), 1);
}

TEST(SpeculativeAcceptance, FixedRateIsTheConditionalRateOfEveryPosition) {
  const AcceptanceModel model = fixed(0.85, 2);
  AcceptanceCounts counts;
  for (int request = 0; request < 200; ++request)
    for (long long v = 0; v < 100; ++v) {
      const int accepted = accepted_drafts(model, 2, 42, request, v);
      counts.add(2, accepted, accepted + 1);
    }
  ASSERT_EQ(counts.verifications, 20000);
  EXPECT_EQ(counts.reached[0], 20000);
  EXPECT_NEAR(static_cast<double>(counts.accepted_at[0]) / counts.reached[0], 0.85, 0.01);
  EXPECT_NEAR(static_cast<double>(counts.accepted_at[1]) / counts.reached[1], 0.85, 0.01);
  // The mean accepted is 0.85 + 0.85^2.
  EXPECT_NEAR(static_cast<double>(counts.accepted) / counts.verifications, 0.85 + 0.85 * 0.85, 0.02);
}

TEST(SpeculativeAcceptance, DrawsDependOnTheKeysOnly) {
  const AcceptanceModel model = fixed(0.5, 3);
  int differ = 0;
  for (long long v = 0; v < 64; ++v) {
    EXPECT_EQ(accepted_drafts(model, 3, 9, 4, v), accepted_drafts(model, 3, 9, 4, v));
    differ += accepted_drafts(model, 3, 9, 4, v) != accepted_drafts(model, 3, 10, 4, v);
  }
  EXPECT_GT(differ, 0);  // another seed, other draws
}

TEST(SpeculativeAcceptance, TraceDrawsLoggedCountsCappedAtTheDrafts) {
  AcceptanceModel model;
  model.kind = AcceptanceKind::kTrace;
  model.trace = {3};
  EXPECT_EQ(accepted_drafts(model, 2, 1, 1, 0), 2);
  model.trace = {0, 1};
  bool seen[2] = {false, false};
  for (long long v = 0; v < 64; ++v) seen[accepted_drafts(model, 2, 1, 1, v)] = true;
  EXPECT_TRUE(seen[0] && seen[1]);
}

TEST(SpeculativeAcceptance, CountsByHand) {
  AcceptanceCounts counts;
  counts.add(2, 0, 1);  // position 0 reached, rejected
  counts.add(2, 1, 2);  // position 0 accepted, position 1 reached and rejected
  counts.add(2, 2, 2);  // both accepted; the request needed only 2 tokens
  EXPECT_EQ(counts.verifications, 3);
  EXPECT_EQ(counts.accepted, 3);
  EXPECT_EQ(counts.tokens, 5);
  EXPECT_EQ(counts.reached, (std::vector<long long>{3, 2}));
  EXPECT_EQ(counts.accepted_at, (std::vector<long long>{2, 1}));
}

}  // namespace
}  // namespace semsim
