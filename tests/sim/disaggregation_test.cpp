// Disaggregated serving end to end: a prefill pool and a decode pool on their own nodes, each
// request's KV cache moving between them; each simulation in its own process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/operator_costs.hpp"
#include "sim/run_plan.hpp"
#include "sim/runs/isolated_process.hpp"
#include "sim/scenario.hpp"
#include "sim/simulation.hpp"

namespace semsim {
namespace {

using Json = nlohmann::json;

// One H200 node per pool, EP `ep` in each; by default one request of 1,000 prompt and 10 output tokens.
Scenario pools_scenario(int ep, const std::string& kv_transfer, const std::string& fidelity,
                        const std::string& workload =
                            "{requests: 1, arrival: {process: poisson, rate: 10}, "
                            "input_len: {dist: fixed, value: 1000}, "
                            "output_len: {dist: fixed, value: 10}}") {
  const std::string text = fmt::format(
      "schema: 1\nmodel: deepseek-v2-lite\ncluster: {{preset: h200-ib, nodes: 2}}\n"
      "parallelism: {{ep: {0}, attention: dp}}\nnetwork: {{fidelity: {1}}}\nworkload: {2}\n"
      "disaggregation: {{kv_transfer: {3}, prefill: {{nodes: 1}}, decode: {{nodes: 1}}}}\n",
      ep, fidelity, workload, kv_transfer);
  return load_scenario(text, "pools.yaml", "");
}

Json simulate_pools(const Scenario& s) {
  return Json::parse(run_isolated([&] {
    const DisaggregatedResult run = simulate_disaggregated(s, build_disaggregated_run(s));
    Json transfers = Json::array();
    for (const KvTransferRecord& t : run.transfers)
      transfers.push_back(
          {{"start", t.start}, {"end", t.end}, {"bytes", t.bytes}, {"decode_rank", t.decode_rank}});
    Json requests = Json::array();
    for (const RequestRecord& r : run.decode.requests)
      requests.push_back({{"arrival", r.arrival}, {"first_token", r.first_token}, {"finish", r.finish}});
    return Json{{"transfers", transfers},
                {"requests", requests},
                {"prefill_steps", run.prefill.steps.size()},
                {"prefill_step_start", run.prefill.steps.at(0).start},
                {"prefill_step_end", run.prefill.steps.at(0).end},
                {"decode_steps", run.decode.steps.size()},
                {"decode_first_step_start", run.decode.steps.at(0).start},
                {"decode_last_step_end", run.decode.steps.back().end},
                {"decode_tokens", run.decode.output_tokens}}
        .dump();
  }));
}

// The closed form of one transfer from the prefill node's first GPU to the decode node's first.
double lone_transfer_seconds(const Scenario& s, double bytes) {
  Cluster both = s.cluster;
  both.nodes = 2;
  const Topology topology = effective_topology(both, both.devices(), *s.calibration);
  double narrowest = INFINITY;
  for (const RouteHop& hop : topology.route(0, both.gpus_per_node))
    narrowest = std::min(narrowest, topology.links[hop.link].bandwidth);
  return topology.route_latency(0, both.gpus_per_node) + bytes / narrowest;
}

TEST(Disaggregation, ALoneRequestsFirstTokenIsItsPrefillStepAndItsWholeKvTransfer) {
  const Scenario s = pools_scenario(8, "whole", "bottleneck");
  const Json r = simulate_pools(s);
  const double bytes = kv_bytes_per_token(s.model, s.precision) * 1000;
  ASSERT_EQ(r["transfers"].size(), 1u);
  const Json& t = r["transfers"][0];
  EXPECT_DOUBLE_EQ(t["bytes"].get<double>(), bytes);
  EXPECT_EQ(r["prefill_steps"].get<int>(), 1);
  EXPECT_DOUBLE_EQ(t["start"].get<double>(), r["prefill_step_end"].get<double>());  // whole: once computed
  EXPECT_NEAR(t["end"].get<double>() - t["start"].get<double>(), lone_transfer_seconds(s, bytes), 1e-12);
  const Json& q = r["requests"][0];
  EXPECT_DOUBLE_EQ(q["first_token"].get<double>(), t["end"].get<double>());  // TTFT includes the transfer
  // The decode pool admits it when its KV has landed and decodes its 9 other tokens.
  EXPECT_DOUBLE_EQ(r["decode_first_step_start"].get<double>(), t["end"].get<double>());
  EXPECT_EQ(r["decode_steps"].get<int>(), 9);
  EXPECT_EQ(r["decode_tokens"].get<int>(), 9);
  EXPECT_DOUBLE_EQ(q["finish"].get<double>(), r["decode_last_step_end"].get<double>());
}

// Layer by layer, the transfer starts with the prompt's last chunk and lands no earlier than the
// step's end plus one layer's share.
TEST(Disaggregation, LayerwiseTransferStartsWithTheStepAndLandsAfterItsLastLayer) {
  const Scenario s = pools_scenario(8, "layerwise", "bottleneck");
  const Json r = simulate_pools(s);
  const Json& t = r["transfers"][0];
  const double lone = lone_transfer_seconds(s, t["bytes"].get<double>());
  EXPECT_DOUBLE_EQ(t["start"].get<double>(), r["prefill_step_start"].get<double>());
  EXPECT_NEAR(
      t["end"].get<double>(),
      std::max(t["start"].get<double>() + lone, r["prefill_step_end"].get<double>() + lone / s.model.layers),
      1e-12);
}

// Attention-TP pools: a request's KV cache split over the group's devices moves as parallel device
// pairs (GQA: 8 KV heads over TP 8, eight pairs of an eighth each); MLA's replicated latent as one.
TEST(Disaggregation, TensorParallelPoolsMoveTheKvCacheAsParallelDevicePairs) {
  for (const auto& [model, pairs] : {std::pair<std::string, int>{"qwen3-32b", 8}, {"deepseek-v2-lite", 1}}) {
    const std::string text = fmt::format(
        "schema: 1\nmodel: {}\ncluster: {{preset: h200-ib, nodes: 2}}\n"
        "parallelism: {{attention: {{tp: 8}}}}\n"
        "workload: {{requests: 1, arrival: {{process: poisson, rate: 10}}, "
        "input_len: {{dist: fixed, value: 1000}}, output_len: {{dist: fixed, value: 10}}}}\n"
        "disaggregation: {{kv_transfer: whole, prefill: {{nodes: 1}}, decode: {{nodes: 1}}}}\n",
        model);
    const Scenario s = load_scenario(text, "pools.yaml", "");
    const Json r = simulate_pools(s);
    const Json& t = r["transfers"][0];
    const double bytes = kv_bytes_per_token(s.model, s.precision) * 1000;
    EXPECT_DOUBLE_EQ(t["bytes"].get<double>(), bytes) << model;
    EXPECT_NEAR(t["end"].get<double>() - t["start"].get<double>(), lone_transfer_seconds(s, bytes / pairs),
                1e-12)
        << model;
    EXPECT_EQ(r["decode_tokens"].get<int>(), 9) << model;
  }
}

// Alone on the network, a transfer takes its closed form in both fidelities.
TEST(Disaggregation, ALoneTransferTakesItsClosedFormInFlow) {
  const Json bottleneck = simulate_pools(pools_scenario(8, "whole", "bottleneck"));
  const Json flow = simulate_pools(pools_scenario(8, "whole", "flow"));
  const auto seconds = [](const Json& r) {
    return r["transfers"][0]["end"].get<double>() - r["transfers"][0]["start"].get<double>();
  };
  EXPECT_NEAR(seconds(flow), seconds(bottleneck), 1e-9 * seconds(bottleneck));
}

// Two prompts sent at once from one prefill GPU to one decode GPU share every link of their
// route in flow (each takes about twice its lone time); bottleneck prices each alone.
TEST(Disaggregation, TransfersSharingARouteContendInFlow) {
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() / fmt::format("semsim-pd-{}.csv", ::getpid());
  std::ofstream(log) << "timestamp,input_tokens,output_tokens\n0,1000,10\n0,1000,10\n";
  std::vector<double> seconds;
  for (const char* fidelity : {"bottleneck", "flow"}) {
    const Scenario s = pools_scenario(
        1, "whole", fidelity, fmt::format("{{requests_from: {{file: {}, format: csv}}}}", log.string()));
    const Json r = simulate_pools(s);
    ASSERT_EQ(r["transfers"].size(), 2u);
    for (const Json& t : r["transfers"]) {
      EXPECT_EQ(t["start"].get<double>(),
                r["transfers"][0]["start"].get<double>());  // one step, both last chunks
      seconds.push_back(t["end"].get<double>() - t["start"].get<double>());
    }
  }
  std::filesystem::remove(log);
  EXPECT_DOUBLE_EQ(seconds[0], seconds[1]);
  EXPECT_GT(seconds[2], 1.8 * seconds[0]);
  EXPECT_GT(seconds[3], 1.8 * seconds[0]);
}

// A layer-by-layer transfer leaves the prefill GPU's NIC while the step computing its prompt
// dispatches across the pool's two nodes over the same NIC: in flow both share it (max-min), so the
// step's dispatch and the transfer's landing come later than alone; bottleneck prices each alone.
TEST(Disaggregation, AKvTransferSharingANicWithTheDispatchSlowsBothInFlow) {
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() / fmt::format("semsim-pd-nic-{}.csv", ::getpid());
  std::ofstream(log) << "timestamp,input_tokens,output_tokens\n0,8000,4\n";
  std::vector<Json> runs;
  for (const char* fidelity : {"bottleneck", "flow"}) {
    const std::string text = fmt::format(
        "schema: 1\nmodel: deepseek-v2-lite\ncluster: {{preset: h200-ib, nodes: 3}}\n"
        "parallelism: {{ep: 16, attention: dp}}\nserving: {{max_batch_tokens: 8192}}\n"
        "network: {{fidelity: {}}}\ncalibration: datasheet\n"
        "workload: {{requests_from: {{file: {}, format: csv}}}}\n"
        "disaggregation: {{kv_transfer: layerwise, prefill: {{nodes: 2}}, "
        "decode: {{nodes: 1, set: {{parallelism.ep: 8}}}}}}\n",
        fidelity, log.string());
    const Scenario s = load_scenario(text, "pools.yaml", "");
    runs.push_back(Json::parse(run_isolated([&] {
      const DisaggregatedResult run = simulate_disaggregated(s, build_disaggregated_run(s));
      const StepRecord& step = run.prefill.steps.at(0);
      return Json{{"dispatch", step.phases[Phase::kDispatch]},
                  {"step_end", step.end},
                  {"transfer_end", run.transfers.at(0).end},
                  {"scale_out_bytes", step.a2a_scale_out_bytes}}
          .dump();
    })));
  }
  std::filesystem::remove(log);
  const Json &alone = runs[0], &shared = runs[1];
  ASSERT_GT(alone["scale_out_bytes"].get<double>(), 0) << "the dispatch crosses the pool's nodes";
  EXPECT_GT(shared["dispatch"].get<double>(), alone["dispatch"].get<double>() * (1 + 1e-6));
  EXPECT_GT(shared["step_end"].get<double>(), alone["step_end"].get<double>());
  EXPECT_GT(shared["transfer_end"].get<double>(), alone["transfer_end"].get<double>());
}

}  // namespace
}  // namespace semsim

namespace semsim {
namespace {

// Speculative decoding in the decode pool: the handed-over request has its first token (the prefill
// pool's) and needs 9 more; with every draft accepted, K = 2 verifies 3 a step: 3 decode steps, not 9.
TEST(Disaggregation, TheDecodePoolVerifiesSpeculativeDrafts) {
  const Scenario plain = pools_scenario(8, "whole", "bottleneck");
  const std::string text =
      "schema: 1\nmodel: deepseek-v2-lite\ncluster: {preset: h200-ib, nodes: 2}\n"
      "parallelism: {ep: 8, attention: dp}\nnetwork: {fidelity: bottleneck}\n"
      "serving: {speculative: {method: mtp, tokens: 2, acceptance: {dist: fixed, rate: 1}}}\n"
      "workload: {requests: 1, arrival: {process: poisson, rate: 10}, input_len: {dist: fixed, value: 1000}, "
      "output_len: {dist: fixed, value: 10}}\n"
      "disaggregation: {kv_transfer: whole, prefill: {nodes: 1}, decode: {nodes: 1}}\n";
  const Json without = simulate_pools(plain);
  const Json with = simulate_pools(load_scenario(text, "pools.yaml", ""));
  EXPECT_EQ(without["decode_steps"].get<int>(), 9);
  EXPECT_EQ(with["decode_steps"].get<int>(), 3);
  EXPECT_EQ(with["decode_tokens"], without["decode_tokens"]);
  EXPECT_LT(with["requests"][0]["finish"].get<double>(), without["requests"][0]["finish"].get<double>());
}

}  // namespace
}  // namespace semsim

namespace semsim {
namespace {

// Two prompts sent at once to a decode rank whose KV holds one request: pre-allocated, the second
// prompt's prefill waits until the first request has finished decoding and freed its KV (SGLang's
// bootstrap queue); on landing, both prefill at once and the second waits in the decode pool.
TEST(Disaggregation, PreallocatedDecodeKvHoldsThePrefillBack) {
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() / fmt::format("semsim-pd-prealloc-{}.csv", ::getpid());
  std::ofstream(log) << "timestamp,input_tokens,output_tokens\n0,1000,10\n0,1000,10\n";
  const auto scenario = [&](const std::string& decode_kv, double memory_fraction) {
    return load_scenario(
        fmt::format("schema: 1\nmodel: deepseek-v2-lite\ncluster: {{preset: h200-ib, nodes: 2}}\n"
                    "parallelism: {{ep: 1, attention: dp}}\nnetwork: {{fidelity: bottleneck}}\n"
                    "workload: {{requests_from: {{file: {}, format: csv}}}}\n"
                    "disaggregation: {{kv_transfer: whole, decode_kv: {}, prefill: {{nodes: 1}}, "
                    "decode: {{nodes: 1, set: {{serving.memory_fraction: {}}}}}}}\n",
                    log.string(), decode_kv, memory_fraction),
        "pools.yaml", "");
  };
  // The decode rank's capacity is linear in the memory fraction: the fraction that holds 1.5 requests.
  const auto capacity = [&](double fraction) {
    return static_cast<double>(
        build_disaggregated_run(scenario("on_landing", fraction)).decode.memory.kv_capacity_tokens);
  };
  const double c1 = capacity(0.5), c2 = capacity(0.9);
  const double fraction = 0.5 + (1.5 * 1010 - c1) * (0.9 - 0.5) / (c2 - c1);
  ASSERT_GT(fraction, 0);
  std::vector<Json> runs;
  for (const char* mode : {"on_landing", "preallocated"}) {
    const Scenario s = scenario(mode, fraction);
    ASSERT_GE(build_disaggregated_run(s).decode.memory.kv_capacity_tokens, 1010);
    ASSERT_LT(build_disaggregated_run(s).decode.memory.kv_capacity_tokens, 2020);
    runs.push_back(Json::parse(run_isolated([&] {
      const DisaggregatedResult run = simulate_disaggregated(s, build_disaggregated_run(s));
      Json prefill_starts = Json::array();
      for (const StepRecord& step : run.prefill.steps) prefill_starts.push_back(step.start);
      Json finishes = Json::array(), first_tokens = Json::array();
      for (const RequestRecord& r : run.decode.requests) {
        finishes.push_back(r.finish);
        first_tokens.push_back(r.first_token);
      }
      return Json{{"prefill_starts", prefill_starts}, {"finish", finishes}, {"first_token", first_tokens}}
          .dump();
    })));
  }
  std::filesystem::remove(log);
  const Json &landing = runs[0], &prealloc = runs[1];
  // On landing: one prefill step for both prompts, the second request's decode waits for the first's.
  ASSERT_EQ(landing["prefill_starts"].size(), 1u);
  EXPECT_LT(landing["first_token"][1].get<double>(), landing["finish"][0].get<double>());
  // Pre-allocated: the second prompt's prefill starts once the first request has finished.
  ASSERT_EQ(prealloc["prefill_starts"].size(), 2u);
  EXPECT_DOUBLE_EQ(prealloc["prefill_starts"][1].get<double>(), prealloc["finish"][0].get<double>());
  EXPECT_GT(prealloc["first_token"][1].get<double>(), prealloc["finish"][0].get<double>());
  // Its first prefill step carries one prompt, not two: the first request is served sooner.
  EXPECT_LT(prealloc["first_token"][0].get<double>(), landing["first_token"][0].get<double>());
  EXPECT_LT(prealloc["finish"][0].get<double>(), landing["finish"][0].get<double>());
}

}  // namespace
}  // namespace semsim
