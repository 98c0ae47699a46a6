// The serving engine end to end, each simulation in its own process (one SimGrid Engine each).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "policies/dispatch.hpp"
#include "policies/placement_file.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"
#include "tests/policies/profile_fixture.hpp"
#include "tests/sim/isolated_simulation.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;
using test::simulate_isolated;

Scenario scenario_with(std::vector<std::string> overrides) {
  // NCCL-style dedup dispatch over the topology, what these tests were written against.
  overrides.insert(overrides.begin(), {"workload.requests=40", "policies.dispatch=dedup"});
  return load_scenario(default_scenario_text(), "<default>", "", overrides);
}

TEST(Engine, SingleDeviceHasNoAllToAllAndStepsAreComputeOnly) {
  const Scenario s = scenario_with({"parallelism.ep=1", "workload.requests=5"});
  const Json steps = simulate_isolated(s, [](const RunResult& run) {
    Json out = Json::array();
    for (const StepRecord& step : run.steps)
      out.push_back(
          {step.phases[Phase::kDispatch], step.phases[Phase::kCombine], step.a2a_scale_up_bytes,
           step.a2a_scale_out_bytes, step.local_activations == step.activations, step.phases.total(),
           step.phases[Phase::kAttention] + step.phases[Phase::kExperts] + step.phases[Phase::kOther]});
    return out;
  });
  ASSERT_GT(steps.size(), 100u);
  for (const Json& step : steps) {
    EXPECT_EQ(step[0].get<double>(), 0.0);
    EXPECT_EQ(step[1].get<double>(), 0.0);
    EXPECT_EQ(step[2].get<double>(), 0.0);
    EXPECT_EQ(step[3].get<double>(), 0.0);
    EXPECT_TRUE(step[4].get<bool>());
    EXPECT_DOUBLE_EQ(step[5].get<double>(), step[6].get<double>());
  }
}

TEST(Engine, UniformRoutingOnContiguousPlacementGivesLarOneEighth) {
  const Scenario s = scenario_with({"workload.routing.expert_skew=0", "workload.routing.topic_boost=0",
                                    "workload.routing.token_skew=0", "workload.routing.token_affinity=0",
                                    "workload.requests=60"});
  const Json r = simulate_isolated(s, [](const RunResult& run) {
    const Summary summary = summarize(run);
    return Json{summary.lar, summary.imbalance, summary.requests_completed};
  });
  EXPECT_NEAR(r[0].get<double>(), 1.0 / 8, 0.005);
  EXPECT_LT(r[1].get<double>(), 1.6);
  EXPECT_EQ(r[2].get<int>(), 60);
}

TEST(Engine, LoneRequestLatencyIsTheSumOfItsSteps) {
  const Scenario s =
      scenario_with({"workload.requests=1", "workload.input_len.value=300", "workload.output_len.value=20"});
  const Json r = simulate_isolated(s, [](const RunResult& run) {
    double total = 0;
    for (const StepRecord& step : run.steps) total += step.phases.total();
    const RequestRecord& q = run.requests.at(0);
    return Json{run.steps.size(),
                total,
                run.steps.at(0).phases.total(),
                q.first_token - q.arrival,
                q.finish - q.arrival,
                run.steps.at(0).prefill_tokens,
                run.steps.at(1).decode_tokens};
  });
  EXPECT_EQ(r[0].get<int>(), 20);  // one prefill step (yields token 1) + 19 decode steps
  EXPECT_NEAR(r[4].get<double>(), r[1].get<double>(), 1e-12);
  EXPECT_NEAR(r[3].get<double>(), r[2].get<double>(), 1e-12);
  EXPECT_EQ(r[5].get<int>(), 300);
  EXPECT_EQ(r[6].get<int>(), 1);
}

TEST(Engine, ChunkedPrefillRespectsTheTokenBudget) {
  const Scenario s = scenario_with({"workload.requests=1", "workload.input_len.value=512",
                                    "workload.output_len.value=4", "serving.max_batch_tokens=128"});
  const Json r = simulate_isolated(s, [](const RunResult& run) {
    Json prefill = Json::array(), budget_full = Json::array();
    for (const StepRecord& step : run.steps) {
      prefill.push_back(step.prefill_tokens);
      budget_full.push_back(step.token_budget_full);
    }
    const Summary summary = summarize(run);
    return Json{prefill, budget_full, summary.token_budget_step_share, summary.kv_wait_step_share,
                summary.request_cap_step_share};
  });
  EXPECT_EQ(r[0], Json({128, 128, 128, 128, 0, 0, 0}));
  // The prompt is cut by the budget in the first three steps; the fourth chunk fits exactly.
  EXPECT_EQ(r[1], Json({true, true, true, false, false, false, false}));
  EXPECT_DOUBLE_EQ(r[2].get<double>(), 3.0 / 7);
  EXPECT_EQ(r[3].get<double>(), 0.0);
  EXPECT_EQ(r[4].get<double>(), 0.0);
}

TEST(Engine, RequestsBeyondTheRunningCapWaitAtTheCap) {
  const Scenario s =
      scenario_with({"parallelism.ep=1", "serving.max_running_requests=2", "workload.input_len.value=10",
                     "workload.output_len.value=5", "workload.arrival.rate=1000", "workload.requests=4"});
  const Json r = simulate_isolated(s, [](const RunResult& run) {
    Json cap_full = Json::array();
    for (const StepRecord& step : run.steps) cap_full.push_back(step.request_cap_full);
    const Summary summary = summarize(run);
    return Json{cap_full, summary.request_cap_step_share, summary.kv_wait_step_share};
  });
  // Request 0 steps alone (the others arrive during its prefill), then runs beside request 1 until
  // step 4, its fifth token; requests 2 and 3 wait at the cap until request 1 ends at step 5, so
  // request 3 enters at step 6 and nothing waits from then on.
  EXPECT_EQ(r[0], Json({false, true, true, true, true, true, false, false, false, false, false}));
  EXPECT_DOUBLE_EQ(r[1].get<double>(), 5.0 / 11);
  EXPECT_EQ(r[2].get<double>(), 0.0);
}

TEST(Engine, FullKvCacheMakesRequestsWait) {
  // Capacity of the single rank in tokens, then allow exactly two 1,000-token requests at a time.
  const Scenario probe = scenario_with({"parallelism.ep=1"});
  const double kv_per_token = kv_bytes_per_token(probe.model, probe.precision);
  const double fraction = (build_run(probe).memory.weight_bytes_per_device + 2.5 * 1000 * kv_per_token) /
                          probe.cluster.device.hbm_bytes;
  const Scenario s = scenario_with({"parallelism.ep=1", "serving.memory_fraction=" + std::to_string(fraction),
                                    "workload.input_len.value=500", "workload.output_len.value=500",
                                    "workload.arrival.rate=1000", "workload.requests=6"});
  ASSERT_EQ(build_run(s).memory.kv_capacity_tokens / 1000, 2);
  const double two_requests = 2000.0 / static_cast<double>(build_run(s).memory.kv_capacity_tokens);
  const Json r = simulate_isolated(s, [](const RunResult& run) {
    int most_decoding = 0;
    Json kv_wait = Json::array(), kv_use = Json::array();
    for (const StepRecord& step : run.steps) {
      most_decoding = std::max(most_decoding, step.decode_tokens);
      kv_wait.push_back(step.kv_wait);
      kv_use.push_back(step.kv_use);
    }
    const Summary summary = summarize(run);
    return Json{most_decoding, summary.requests_completed, kv_wait,
                kv_use,        summary.kv_wait_step_share, summary.kv_use_peak};
  });
  EXPECT_EQ(r[0].get<int>(), 2);
  EXPECT_EQ(r[1].get<int>(), 6);
  // A request waits for KV only while two hold theirs (a third's 1,000 tokens do not fit), and the
  // others wait through at least two rounds of about 500 steps; the last requests wait for nothing.
  int waited = 0;
  for (std::size_t i = 0; i < r[2].size(); ++i) {
    if (!r[2][i].get<bool>()) continue;
    ++waited;
    EXPECT_DOUBLE_EQ(r[3][i].get<double>(), two_requests) << "step " << i;
  }
  EXPECT_GT(waited, 900);
  EXPECT_FALSE(r[2].back().get<bool>());
  EXPECT_DOUBLE_EQ(r[4].get<double>(), waited / static_cast<double>(r[2].size()));
  EXPECT_DOUBLE_EQ(r[5].get<double>(), two_requests);
}

// A lone request in each pool: the prefill pool ends it at the token its prompt yields; the decode
// pool takes its prompt as cached and decodes every output token, the first in its first step.
TEST(Engine, PrefillPoolEndsRequestsAtTheirFirstTokenAndDecodePoolDecodesEveryToken) {
  std::vector<Json> runs;
  for (const char* pool : {"serving.pool=prefill", "serving.pool=decode"}) {
    const Scenario s = scenario_with(
        {"workload.requests=1", "workload.input_len.value=300", "workload.output_len.value=20", pool});
    runs.push_back(simulate_isolated(s, [](const RunResult& run) {
      Json prefill = Json::array(), decode = Json::array();
      for (const StepRecord& step : run.steps) {
        prefill.push_back(step.prefill_tokens);
        decode.push_back(step.decode_tokens);
      }
      const RequestRecord& q = run.requests.at(0);
      return Json{prefill,
                  decode,
                  run.output_tokens,
                  q.first_token - run.steps.front().end,
                  q.finish - run.steps.back().end,
                  q.token_gaps.size()};
    }));
  }
  const Json& prefill = runs[0];
  EXPECT_EQ(prefill[0], Json::array({300}));
  EXPECT_EQ(prefill[1], Json::array({0}));
  EXPECT_EQ(prefill[2].get<int>(), 1);
  EXPECT_EQ(prefill[3].get<double>(), 0.0);
  EXPECT_EQ(prefill[4].get<double>(), 0.0);
  const Json& decode = runs[1];
  EXPECT_EQ(decode[0], Json(std::vector<int>(20, 0)));
  EXPECT_EQ(decode[1], Json(std::vector<int>(20, 1)));
  EXPECT_EQ(decode[2].get<int>(), 20);
  EXPECT_EQ(decode[3].get<double>(), 0.0);  // its first token ends its first step
  EXPECT_EQ(decode[4].get<double>(), 0.0);
  EXPECT_EQ(decode[5].get<int>(), 0);
}

// A prefill pool's request holds only its prompt's KV: with room for 2,700 tokens, five 500-token
// prompts fit, where a colocated server fits two requests that also reserve 500 output tokens.
TEST(Engine, PrefillPoolReservesOnlyThePromptsKv) {
  const Scenario probe = scenario_with({"parallelism.ep=1"});
  const double kv_per_token = kv_bytes_per_token(probe.model, probe.precision);
  const double fraction = (build_run(probe).memory.weight_bytes_per_device + 2.7 * 1000 * kv_per_token) /
                          probe.cluster.device.hbm_bytes;
  Json most_running = Json::array();
  for (const char* pool : {"serving.pool=colocated", "serving.pool=prefill"}) {
    const Scenario s = scenario_with(
        {"parallelism.ep=1", "serving.memory_fraction=" + std::to_string(fraction),
         "workload.input_len.value=500", "workload.output_len.value=500", "workload.arrival.rate=1e6",
         "workload.requests=8", "serving.max_batch_tokens=100000", pool});
    most_running.push_back(simulate_isolated(s, [](const RunResult& run) {
      int most = 0;  // requests in one step: 500-token prompts and decode tokens
      for (const StepRecord& step : run.steps)
        most = std::max(most, step.prefill_tokens / 500 + step.decode_tokens);
      return Json(most);
    }));
  }
  EXPECT_EQ(most_running, Json({2, 5}));
}

// DeepEP's low-latency buffers take their memory from the KV cache (V2-Lite: 64 experts of 2,048).
TEST(Engine, LowLatencyBuffersTakeTheirBytesFromTheKvCache) {
  const Scenario dedup = scenario_with({"serving.max_running_requests=128", "policies.dispatch=dedup"});
  const Scenario deepep = scenario_with({"serving.max_running_requests=128", "policies.dispatch=auto"});
  const MemoryPlan without = build_run(dedup).memory, with = build_run(deepep).memory;
  const double buffers = low_latency_buffer_bytes(128, 2048, 64, 8);
  EXPECT_EQ(without.dispatch_buffer_bytes_per_device, 0.0);
  EXPECT_DOUBLE_EQ(with.dispatch_buffer_bytes_per_device, buffers);
  const double kv_per_token = kv_bytes_per_token(dedup.model, dedup.precision);
  EXPECT_NEAR(static_cast<double>(without.kv_capacity_tokens - with.kv_capacity_tokens),
              buffers / kv_per_token, 1.0);
}

// The saturated window spans the steps from the first to the last one a batch limit held back.
TEST(Engine, SaturatedWindowSpansTheStepsABatchLimitHeldBack) {
  const Scenario s =
      scenario_with({"parallelism.ep=1", "serving.max_running_requests=2", "workload.input_len.value=10",
                     "workload.output_len.value=5", "workload.arrival.rate=1000", "workload.requests=4"});
  const Json r = simulate_isolated(s, [](const RunResult& run) {
    const Summary summary = summarize(run);
    long long prefilled = 0, decoded = 0;
    for (int step = 1; step <= 5; ++step) {  // held back by the cap (RequestsBeyondTheRunningCap...)
      prefilled += run.steps.at(step).prefill_tokens;
      decoded += run.steps.at(step).decode_tokens;
    }
    const double seconds = run.steps.at(5).end - run.steps.at(1).start;
    return Json{summary.saturated->steps,
                summary.saturated->seconds,
                seconds,
                summary.saturated->prefill_tok_s,
                prefilled / seconds,
                summary.saturated->decode_tok_s,
                decoded / seconds};
  });
  EXPECT_EQ(r[0].get<int>(), 5);
  EXPECT_DOUBLE_EQ(r[1].get<double>(), r[2].get<double>());
  EXPECT_DOUBLE_EQ(r[3].get<double>(), r[4].get<double>());
  EXPECT_DOUBLE_EQ(r[5].get<double>(), r[6].get<double>());
  EXPECT_GT(r[5].get<double>(), 0.0);
}

// Without overlap every collective runs alone, and a lone collective takes its closed form in both
// fidelities: the runs are the same to the bit. With two-batch overlap transfers overlap; flow
// shares the links max-min where bottleneck queues them, and the runs differ.
TEST(Engine, FlowEqualsBottleneckWhereNothingOverlaps) {
  std::vector<Json> runs;
  for (const char* overlap : {"serving.overlap=none", "serving.overlap=two_batch"})
    for (const char* fidelity : {"network.fidelity=bottleneck", "network.fidelity=flow"}) {
      const Scenario s =
          scenario_with({"cluster=h200-2x8", "parallelism.ep=16", fidelity, overlap, "workload.requests=60"});
      runs.push_back(simulate_isolated(s, [](const RunResult& run) {
        Json starts = Json::array();
        for (const StepRecord& step : run.steps) starts.push_back(step.start);
        return Json{summarize(run).mean_step_seconds, starts, run.end_time};
      }));
    }
  EXPECT_EQ(runs[1], runs[0]);
  EXPECT_NE(runs[3], runs[2]);
}

// A measured profile for the H200 whose only table is DeepSeek-V2-Lite's routed experts, taking
// `seconds` at every grid point.
std::string write_experts_profile(const std::string& name, double seconds) {
  const auto path =
      std::filesystem::temp_directory_path() / fmt::format("semsim-engine-{}-{}.yaml", getpid(), name);
  std::ofstream(path) << fmt::format(
      "kind: profile\nversion: 1\nname: {1}\nsource: measured\ndevice: h200-sxm\nkernels:\n"
      "  - kernel: routed_experts\n    shape: hidden=2048 ffn=1408 experts=64\n    dtype: bf16\n"
      "    axes: [{{name: active_experts, values: [1, 64]}}, {{name: tokens, values: [1, 65536]}}]\n"
      "    seconds: [[{0}, {0}], [{0}, {0}]]\n",
      seconds, name);
  return path.string();
}

TEST(Engine, StepTimeChangesAsTheProfileSaysWhenTwoProfilesDifferInOneKernel) {
  std::vector<Json> runs;
  for (const auto& [name, seconds] : {std::pair{"fast", 100e-6}, std::pair{"slow", 300e-6}}) {
    const std::string profile = write_experts_profile(name, seconds);
    const Scenario s = scenario_with({"workload.requests=1", "workload.input_len.value=300",
                                      "workload.output_len.value=20", "calibration=" + profile});
    std::filesystem::remove(profile);
    ASSERT_EQ(s.calibration->name, name);
    runs.push_back(simulate_isolated(s, [](const RunResult& run) {
      Json steps = Json::array();
      for (const StepRecord& step : run.steps)
        steps.push_back({step.phases[Phase::kAttention], step.phases[Phase::kDispatch],
                         step.phases[Phase::kCombine], step.phases[Phase::kOther],
                         step.phases[Phase::kExperts]});
      return steps;
    }));
  }
  ASSERT_EQ(runs[0].size(), 20u);
  ASSERT_EQ(runs[1].size(), runs[0].size());
  // DeepSeek-V2-Lite has 26 MoE layers; every step runs the routed experts on its slowest device
  // once per layer (its shared experts, priced by the roofline, are the same in both runs).
  for (std::size_t step = 0; step < runs[0].size(); ++step) {
    for (int phase = 0; phase < 4; ++phase) EXPECT_EQ(runs[1][step][phase], runs[0][step][phase]) << step;
    EXPECT_NEAR(runs[1][step][4].get<double>() - runs[0][step][4].get<double>(), 26 * 200e-6, 1e-12) << step;
  }
}

// A routing profile of DeepSeek-V2-Lite's shape (26 MoE layers of 64 experts, top-6), skewed.
std::string write_v2_lite_profile() {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("semsim-engine-{}-profile", getpid());
  std::filesystem::create_directories(dir);
  test::random_profile(26, 64, 6, 400, 3).write(dir.string());
  return dir.string();
}

Json serving_summary(const RunResult& run) {
  const Summary summary = summarize(run);
  return Json{summary.lar, summary.imbalance, summary.requests_completed, summary.mean_step_seconds};
}

TEST(Engine, EplbReplicasCostWeightsAndAPlacementFileRunsLikeThePolicyInline) {
  const std::string profile = write_v2_lite_profile();
  const Scenario contiguous = scenario_with({});
  const Scenario eplb =
      scenario_with({"profile=" + profile, "policies.placement={name: eplb, redundant: 8}"});
  const RunPlan eplb_plan = build_run(eplb), contiguous_plan = build_run(contiguous);
  // 64 + 8 slots per layer over 8 devices: 9 expert slots per device per layer instead of 8.
  EXPECT_EQ(eplb_plan.placement->placement.max_slots_per_device(), 26 * 9);
  EXPECT_EQ(eplb_plan.memory.weight_bytes_per_device,
            weight_bytes_per_device(eplb.model, 26 * 9, eplb.precision));
  EXPECT_EQ(eplb_plan.memory.weight_bytes_per_device - contiguous_plan.memory.weight_bytes_per_device,
            weight_bytes_per_device(eplb.model, 26 * 9, eplb.precision) -
                weight_bytes_per_device(eplb.model, 26 * 8, eplb.precision));
  EXPECT_LT(eplb_plan.memory.kv_capacity_tokens, contiguous_plan.memory.kv_capacity_tokens);

  const auto file =
      std::filesystem::temp_directory_path() / fmt::format("semsim-engine-{}-eplb.txt", getpid());
  write_placement_file(*eplb_plan.placement, file.string());
  const Scenario from_file = scenario_with({"policies.placement={file: " + file.string() + "}"});
  EXPECT_EQ(from_file.placement.name, "eplb");
  const RunPlan file_plan = build_run(from_file);
  EXPECT_EQ(file_plan.placement->placement, eplb_plan.placement->placement);
  EXPECT_EQ(file_plan.memory.weight_bytes_per_device, eplb_plan.memory.weight_bytes_per_device);

  const Json inline_run = simulate_isolated(eplb, serving_summary);
  EXPECT_EQ(inline_run[2].get<int>(), 40);
  EXPECT_EQ(simulate_isolated(from_file, serving_summary), inline_run);
  std::filesystem::remove(file);
  std::filesystem::remove_all(profile);
}

// EP6 does not divide DeepSeek-V2-Lite's 64 experts: 2 redundant ones make 66 slots, 11 per device,
// which the memory plan counts; a placement file of those slots runs at EP6 as it is.
TEST(Engine, RedundantSlotsReachAnEpSizeThatDoesNotDivideTheExperts) {
  const Scenario s =
      scenario_with({"parallelism.ep=6", "policies.placement={name: contiguous, redundant: 2}"});
  const RunPlan plan = build_run(s);
  EXPECT_EQ(plan.memory.physical_slots_per_layer, 66);
  EXPECT_EQ(plan.memory.redundant_experts, 2);
  EXPECT_EQ(plan.memory.most_slots_per_device, 11);
  EXPECT_EQ(plan.memory.weight_bytes_per_device, weight_bytes_per_device(s.model, 26 * 11, s.precision));
  EXPECT_EQ(simulate_isolated(s, serving_summary)[2].get<int>(), 40);

  const auto file =
      std::filesystem::temp_directory_path() / fmt::format("semsim-engine-{}-ep6.txt", getpid());
  write_placement_file(*plan.placement, file.string());
  const Scenario from_file =
      scenario_with({"parallelism.ep=6", "policies.placement={file: " + file.string() + "}"});
  EXPECT_EQ(build_run(from_file).placement->placement, plan.placement->placement);
  std::filesystem::remove(file);
}

// Loading validates the inputs only: the placement policy runs (and its inputs are checked) when
// the run is built, inside the process that simulates; a sweep's parent never places.
TEST(Engine, LoadingValidatesAndBuildingTheRunPlaces) {
  const std::string profile = write_v2_lite_profile();
  const Scenario s = scenario_with({"model=qwen3-30b-a3b", "profile=" + profile, "policies.placement=eplb"});
  try {
    build_run(s);
    FAIL() << "a DeepSeek-V2-Lite profile cannot place Qwen3-30B-A3B";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key_path(), "profile");
    EXPECT_NE(std::string(e.what()).find("the routing profile has 26 MoE layers of 64 experts"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("(value set by --set profile="), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(profile);
}

TEST(Engine, PlacementFileOfAnotherShapeIsRejectedAtItsKey) {
  const Scenario eplb = scenario_with({"parallelism.ep=4"});
  const auto file =
      std::filesystem::temp_directory_path() / fmt::format("semsim-engine-{}-ep4.txt", getpid());
  write_placement_file(*build_run(eplb).placement, file.string());
  try {
    scenario_with({"policies.placement={file: " + file.string() + "}"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has 4 devices (the EP size), the scenario needs 8"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace semsim
