// Speculative decoding end to end (serving.speculative): accepted tokens per step, the realised
// acceptance, and what a verification and its draft cost against a plain decode step. Each
// simulation runs in its own process.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "tests/sim/isolated_simulation.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;
using test::simulate_isolated;

// One request of a 300-token prompt and 20 output tokens on one device (no all-to-all), alone.
Scenario lone_request(const std::string& speculative) {
  std::vector<std::string> overrides{"workload.requests=1", "policies.dispatch=dedup", "parallelism.ep=1",
                                     "workload.input_len.value=300", "workload.output_len.value=20"};
  if (!speculative.empty()) overrides.push_back("serving.speculative=" + speculative);
  return load_scenario(default_scenario_text(), "<default>", "", overrides);
}

// Per step: its decode tokens and its seconds; then the request's TPOT and the run's acceptance.
Json steps_of(const Scenario& s) {
  return simulate_isolated(s, [](const RunResult& run) {
    Json steps = Json::array();
    for (const StepRecord& step : run.steps) steps.push_back({step.decode_tokens, step.end - step.start});
    const AcceptanceCounts& a = run.acceptance;
    return Json{{"steps", steps},
                {"tpot", time_per_output_token(run.requests.at(0))},
                {"output_tokens", run.output_tokens},
                {"verifications", a.verifications},
                {"accepted", a.accepted},
                {"tokens", a.tokens},
                {"reached", a.reached},
                {"accepted_at", a.accepted_at}};
  });
}

std::string mtp(int drafts, double rate) {
  return "{method: mtp, tokens: " + std::to_string(drafts) +
         ", acceptance: {dist: fixed, rate: " + std::to_string(rate) + "}}";
}

// Acceptance 0: one token per step, as plain decoding, each step dearer by the verified drafts and
// the draft's passes. Acceptance 1: K + 1 tokens per verification (the last one only what is left).
TEST(Speculative, AcceptanceZeroAndOneByHand) {
  const Json plain = steps_of(lone_request(""));
  ASSERT_EQ(plain["steps"].size(), 20u);  // one prefill step (token 1), 19 decode steps
  for (int drafts : {1, 2}) {
    SCOPED_TRACE(drafts);
    const Json none = steps_of(lone_request(mtp(drafts, 0)));
    ASSERT_EQ(none["steps"].size(), 20u);
    EXPECT_EQ(none["verifications"], 19);
    EXPECT_EQ(none["accepted"], 0);
    EXPECT_EQ(none["tokens"], 19);
    EXPECT_EQ(none["output_tokens"], 20);
    EXPECT_EQ(none["reached"][0], 19);
    EXPECT_EQ(none["accepted_at"][0], 0);
    for (std::size_t i = 1; i < 20; ++i) {
      EXPECT_EQ(none["steps"][i][0], 1) << i;
      EXPECT_GT(none["steps"][i][1].get<double>(), plain["steps"][i][1].get<double>()) << i;
    }
    // The prefill step pays the draft's pass over the prompt too.
    EXPECT_GT(none["steps"][0][1].get<double>(), plain["steps"][0][1].get<double>());

    const Json all = steps_of(lone_request(mtp(drafts, 1)));
    const int per_step = drafts + 1;
    const int verifications = (19 + per_step - 1) / per_step;
    ASSERT_EQ(all["steps"].size(), static_cast<std::size_t>(1 + verifications));
    EXPECT_EQ(all["verifications"], verifications);
    EXPECT_EQ(all["accepted"], verifications * drafts);  // drawn: all; kept: what the request needed
    EXPECT_EQ(all["tokens"], 19);
    EXPECT_EQ(all["output_tokens"], 20);
    for (int i = 1; i <= verifications; ++i)
      EXPECT_EQ(all["steps"][i][0], i < verifications ? per_step : 19 - (verifications - 1) * per_step) << i;
    // TPOT: the decode steps' time over the 19 tokens after the first.
    double decode_seconds = 0;
    for (int i = 1; i <= verifications; ++i) decode_seconds += all["steps"][i][1].get<double>();
    EXPECT_NEAR(all["tpot"].get<double>(), decode_seconds / 19, 1e-12);
    EXPECT_LT(all["tpot"].get<double>(), plain["tpot"].get<double>());
  }
}

// The same scenario and seed give the same acceptances; a run without speculation draws none.
TEST(Speculative, RealisedAcceptanceIsSeededAndReported) {
  Scenario s = lone_request(mtp(2, 0.7));
  s.workload.output_len.value = 400;
  const Json a = steps_of(s), b = steps_of(s);
  EXPECT_EQ(a, b);
  const double first = a["accepted_at"][0].get<double>() / a["reached"][0].get<double>();
  EXPECT_NEAR(first, 0.7, 0.12);
  EXPECT_EQ(steps_of(lone_request(""))["verifications"], 0);
}

}  // namespace
}  // namespace semsim
