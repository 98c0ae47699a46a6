// The serving engine's host work (scenario `engine:`) end to end on a hand-made profile: the step
// times it adds with and without overlap scheduling, CUDA graphs against eager steps, the request
// path's delay of the first token, and the SGLang defaults a scenario takes.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sim/scenario.hpp"
#include "tests/sim/isolated_simulation.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;
using test::simulate_isolated;

// One DP rank (EP1) on the datasheet profile, its engine costs replaced by `costs`.
Scenario one_rank(std::vector<std::string> overrides, const EngineCosts& costs = {}) {
  overrides.insert(overrides.begin(), {"parallelism.ep=1", "calibration=datasheet"});
  Scenario s = load_scenario(default_scenario_text(), "<default>", "", overrides);
  auto profile = std::make_shared<CalibrationProfile>(*s.calibration);
  profile->engine = costs;
  s.calibration = profile;
  return s;
}

const std::vector<std::string> kLoneRequest{"workload.requests=1", "workload.input_len.value=300",
                                            "workload.output_len.value=20"};

std::vector<std::string> with(std::vector<std::string> overrides, const std::vector<std::string>& more) {
  overrides.insert(overrides.end(), more.begin(), more.end());
  return overrides;
}

// Per step: duration, engine phase, host seconds, eager, graph batch, overlapped, requests, prefill.
Json steps_of(const Scenario& s) {
  return simulate_isolated(s, [](const RunResult& run) {
    Json out = Json::array();
    for (const StepRecord& step : run.steps)
      out.push_back({step.phases.total(), step.phases[Phase::kEngine], step.host_seconds, step.eager,
                     step.graph_batch, step.overlapped, step.batch_requests, step.prefill_tokens});
    return out;
  });
}

const EngineCosts kHandMade{100e-6, 10e-6, 20e-6, 50e-6, 0};

TEST(EngineHostWork, WithoutOverlapAStepTakesItsKernelsPlusItsHostWork) {
  const Json kernels = steps_of(one_rank(kLoneRequest));
  const Scenario s =
      one_rank(with(kLoneRequest, {"engine.name=sglang", "engine.overlap_schedule=false"}), kHandMade);
  const Json engine = steps_of(s);
  ASSERT_EQ(engine.size(), kernels.size());
  ASSERT_EQ(engine.size(), 20u);
  for (std::size_t i = 0; i < engine.size(); ++i) {
    SCOPED_TRACE(i);
    const bool prefill = i == 0;
    const double host = prefill ? 100e-6 + 10e-6 + 20e-6 * s.model.layers : 100e-6 + 10e-6 + 50e-6;
    EXPECT_EQ(engine[i][3].get<bool>(), prefill);
    EXPECT_EQ(engine[i][4].get<int>(), prefill ? 0 : 1);
    EXPECT_FALSE(engine[i][5].get<bool>());
    EXPECT_EQ(engine[i][6].get<int>(), 1);
    EXPECT_NEAR(engine[i][2].get<double>(), host, 1e-15);
    EXPECT_NEAR(engine[i][1].get<double>(), host, 1e-15);
    EXPECT_NEAR(engine[i][0].get<double>(), kernels[i][0].get<double>() + host, 1e-12);
    EXPECT_EQ(kernels[i][1].get<double>(), 0.0);
  }
}

TEST(EngineHostWork, WithOverlapAStepTakesTheLongerOfItsKernelsAndItsHostWork) {
  const Json kernels = steps_of(one_rank(kLoneRequest));
  // A scheduler slower than some decode steps' kernels and faster than others'.
  double median = 0;
  {
    std::vector<double> decode;
    for (std::size_t i = 1; i < kernels.size(); ++i) decode.push_back(kernels[i][0].get<double>());
    std::sort(decode.begin(), decode.end());
    median = decode[decode.size() / 2];
  }
  const EngineCosts costs{median - 60e-6, 10e-6, 20e-6, 50e-6, 0};
  const Scenario s = one_rank(with(kLoneRequest, {"engine.name=sglang"}), costs);
  const Json engine = steps_of(s);
  ASSERT_EQ(engine.size(), kernels.size());
  // The prefill step follows an idle wait: nothing computed while it was scheduled.
  EXPECT_FALSE(engine[0][5].get<bool>());
  EXPECT_NEAR(engine[0][0].get<double>(),
              kernels[0][0].get<double>() + costs.step_seconds + 10e-6 + 20e-6 * s.model.layers, 1e-12);
  for (std::size_t i = 1; i < engine.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_TRUE(engine[i][5].get<bool>());
    const double host = costs.step_seconds + 10e-6 + 50e-6;
    EXPECT_NEAR(engine[i][0].get<double>(), std::max(kernels[i][0].get<double>(), host), 1e-12);
  }
}

TEST(EngineHostWork, DecodeBatchesAboveTheGraphSizesRunEagerly) {
  const std::vector<std::string> four{"workload.requests=4",         "workload.arrival.rate=100000",
                                      "workload.input_len.value=64", "workload.output_len.value=12",
                                      "engine.name=sglang",          "engine.overlap_schedule=false"};
  for (const int max_bs : {2, 4}) {
    SCOPED_TRACE(max_bs);
    const Scenario s =
        one_rank(with(four, {"engine.cuda_graph_max_bs=" + std::to_string(max_bs)}), kHandMade);
    const Json steps = steps_of(s);
    int eager_decodes = 0, graph_fours = 0;
    for (const Json& step : steps) {
      const int requests = step[6].get<int>();
      const bool prefill = step[7].get<int>() > 0;
      const bool eager = prefill || requests > max_bs;
      EXPECT_EQ(step[3].get<bool>(), eager);
      EXPECT_EQ(step[4].get<int>(), eager ? 0 : cuda_graph_padded_batch(requests, max_bs));
      EXPECT_NEAR(step[2].get<double>(), 100e-6 + 10e-6 * requests + (eager ? 20e-6 * s.model.layers : 50e-6),
                  1e-15);
      eager_decodes += !prefill && eager ? 1 : 0;
      graph_fours += !eager && requests == 4 ? 1 : 0;
    }
    // The decode steps of all four requests: eager above two, graph replays at four.
    EXPECT_GT(max_bs == 2 ? eager_decodes : graph_fours, 5);
  }
}

TEST(EngineHostWork, TheRequestPathDelaysTheFirstTokenByItsSeconds) {
  auto ttft = [](const Scenario& s) {
    return simulate_isolated(s, [](const RunResult& run) {
      const RequestRecord& r = run.requests.at(0);
      return Json{r.first_token - r.arrival, r.finish - r.first_token};
    });
  };
  const Json kernels = ttft(one_rank(kLoneRequest));
  const Json engine = ttft(one_rank(with(kLoneRequest, {"engine.name=sglang"}), {0, 0, 0, 0, 0.25}));
  EXPECT_NEAR(engine[0].get<double>() - kernels[0].get<double>(), 0.25, 1e-9);
  EXPECT_NEAR(engine[1].get<double>(), kernels[1].get<double>(), 1e-12);
}

// The default scenario without its serving.max_batch_tokens.
std::string default_without_batch_tokens() {
  std::string text = default_scenario_text();
  const std::size_t at = text.find("  max_batch_tokens:");
  text.erase(at, text.find('\n', at) + 1 - at);
  return text;
}

TEST(EngineHostWork, SglangDefaultsFillWhatTheScenarioLeavesOut) {
  struct Case {
    std::vector<std::string> overrides;
    int graph_bs, batch_tokens;
  };
  const Case cases[] = {
      {{}, 512, 8192 / 8},                                                           // TP8 with DP attention
      {{"parallelism.attention=tp"}, 512, 8192},                                     // one TP8 group
      {{"parallelism.ep=1"}, 256, 8192},                                             // below TP4
      {{"cluster=b200-1x8", "calibration=datasheet"}, 512, 16384 / 8},               // 180 GB
      {{"engine.cuda_graph_max_bs=64", "serving.max_batch_tokens=2048"}, 64, 2048},  // the scenario's own
  };
  for (const Case& c : cases) {
    std::vector<std::string> overrides{"engine.name=sglang"};
    overrides.insert(overrides.end(), c.overrides.begin(), c.overrides.end());
    SCOPED_TRACE(testing::PrintToString(overrides));
    const Scenario s = load_scenario(default_without_batch_tokens(), "<default>", "", overrides);
    EXPECT_EQ(s.engine.cuda_graph_max_bs, c.graph_bs);
    EXPECT_EQ(s.serving.max_batch_tokens, c.batch_tokens);
    EXPECT_TRUE(s.engine.overlap_schedule);
    EXPECT_EQ(s.engine.max_running_requests_from, SettingOrigin::kScenario);  // the default scenario's 256
  }
  const Scenario none =
      load_scenario(default_without_batch_tokens(), "<default>", "", std::vector<std::string>{});
  EXPECT_FALSE(none.engine.on());
  EXPECT_EQ(none.serving.max_batch_tokens, 8192);  // semsim's default, as before
}

}  // namespace
}  // namespace semsim
