// A token table keyed by one trace's ids applied to another trace's (token_table_for,
// plan_for_vocabulary): tokens are matched by text, then by normalized text; text-less tokens by id.
#include <gtest/gtest.h>

#include "models/input_error.hpp"
#include "policies/placement_plan.hpp"

namespace semsim {
namespace {

// Two layers over the vocabulary {the, Ġcat, "", dog}.
TokenDeviceTable sample_table() {
  TokenDeviceTable t;
  t.texts = {"the",
             "\xC4\xA0"
             "cat",
             "", "dog"};
  t.device = {{0, 1, 2, -1}, {3, 1, 0, 2}};
  t.confidence = {{0.5f, 0.25f, 1, 0}, {0.75f, 0.5f, 0.125f, 1}};
  return t;
}

TEST(TokenTableFor, MatchesByTextThenNormalizedTextAndTextlessTokensById) {
  // Another trace's order: dog, the, Cat (normalized: cat), a new word, and a text-less token at
  // id 2 (as the table's) and at id 5 (beyond the table's text-less ones).
  const std::vector<std::string> vocabulary = {"dog", "the", "", "Cat", "zebra", ""};
  TokenTableMatch match;
  const TokenDeviceTable t = token_table_for(sample_table(), vocabulary, match);
  EXPECT_EQ(t.texts, vocabulary);
  EXPECT_EQ(t.device, (std::vector<std::vector<std::int16_t>>{{-1, 0, 2, 1, -1, -1}, {2, 3, 0, 1, -1, -1}}));
  EXPECT_EQ(t.confidence[1], (std::vector<float>{1, 0.75f, 0.125f, 0.5f, 0, 0}));
  EXPECT_EQ(match.vocabulary, 6);
  EXPECT_EQ(match.by_text, 3);  // dog, the, and text-less id 2
  EXPECT_EQ(match.by_normalized_text, 1);
  EXPECT_EQ(match.unmatched(), 2);
  EXPECT_FALSE(match.same_vocabulary);
}

TEST(TokenTableFor, AmongTokensOfOneNormalizedTextTheMostConfidentEntryWinsPerLayer) {
  TokenDeviceTable t;
  t.texts = {"Ran", "ran", "\xE2\x96\x81ran"};
  t.device = {{0, 1, 2}, {0, -1, 2}};
  t.confidence = {{0.5f, 0.9f, 0.9f}, {0.2f, 0, 0.1f}};
  TokenTableMatch match;
  const TokenDeviceTable out = token_table_for(t, {"RAN"}, match);
  EXPECT_EQ(out.device, (std::vector<std::vector<std::int16_t>>{{1}, {0}}));  // ties: the lower table id
  EXPECT_EQ(out.confidence, (std::vector<std::vector<float>>{{0.9f}, {0.2f}}));
  EXPECT_EQ(match.by_normalized_text, 1);
}

TEST(TokenTableFor, TheSameVocabularyKeepsTheTableAndThePlan) {
  auto plan = std::make_shared<PlacementPlan>();
  plan->token_devices = sample_table();
  TokenTableMatch match;
  const std::shared_ptr<const PlacementPlan> keyed =
      plan_for_vocabulary(plan, plan->token_devices.texts, match);
  EXPECT_EQ(keyed, plan);
  EXPECT_TRUE(match.same_vocabulary);
  EXPECT_EQ(match.unmatched(), 0);

  const std::shared_ptr<const PlacementPlan> other = plan_for_vocabulary(plan, {"dog"}, match);
  EXPECT_NE(other, plan);
  EXPECT_EQ(other->token_devices.device, (std::vector<std::vector<std::int16_t>>{{-1}, {2}}));
  EXPECT_EQ(other->placement, plan->placement);
}

TEST(TokenTableFor, AVersionOneTableAppliesIdForIdOnlyWithinItsSize) {
  TokenDeviceTable t = sample_table();
  t.texts.clear();
  TokenTableMatch match;
  EXPECT_EQ(token_table_for(t, {"a", "b", "c", "d"}, match).device, t.device);
  EXPECT_EQ(match.by_text, 4);
  try {
    token_table_for(t, {"a", "b", "c", "d", "e"}, match);
    FAIL() << "a larger vocabulary cannot be matched without texts";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has no token texts to match them by"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace semsim
