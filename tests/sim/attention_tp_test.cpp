// Attention-TP end to end: one TP group of all EP devices, positional and Sem-MoE token scheduling,
// each simulation in its own process (one SimGrid Engine each).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "sim/cost_model.hpp"
#include "sim/outputs/run_csvs.hpp"
#include "sim/run_plan.hpp"
#include "sim/scenario.hpp"
#include "sim/serving_metrics.hpp"
#include "sim/simulation.hpp"
#include "tests/sim/isolated_simulation.hpp"
#include "workloads/routing_profile.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using test::simulate_isolated;

constexpr int kMoeLayers = 26;  // DeepSeek-V2-Lite: 27 layers, the first dense; 64 experts, top-6
constexpr int kExperts = 64;
constexpr int kTopK = 6;
constexpr int kRanks = 8;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / fmt::format("semsim-tp-{}-{}", getpid(), name);
}

// A DeepSeek-V2-Lite trace of prefill-routed requests: request r holds the words `prompts[r]`, and
// word w at MoE layer l activates `experts(w, l)`.
RoutingTrace planted_trace(const std::vector<std::vector<int>>& prompts,
                           const std::function<std::vector<ExpertId>(int word, int layer)>& experts) {
  TraceBuilder b({"deepseek-v2-lite", "planted", kMoeLayers, kExperts, kTopK, false});
  for (const auto& words : prompts) {
    std::vector<std::int32_t> ids;
    std::vector<ExpertId> routed;
    for (const int w : words) {
      ids.push_back(b.token_id(fmt::format("w{}", w)));
      for (int layer = 0; layer < kMoeLayers; ++layer) {
        const std::vector<ExpertId> chosen = experts(w, layer);
        routed.insert(routed.end(), chosen.begin(), chosen.end());
      }
    }
    b.add({{static_cast<int>(words.size()), 1, true, 0}, ids, routed, {}}, "planted");
  }
  return std::move(b).build();
}

// An Attention-TP scenario replaying `trace_file`; `overrides` as for `semsim run --set`.
Scenario tp_scenario(const fs::path& trace_file, std::vector<std::string> overrides) {
  const std::string text = fmt::format(
      "schema: 1\nmodel: deepseek-v2-lite\ncluster: h200-1x8\n"
      "parallelism: {{ep: 8, attention: tp}}\n"
      "workload:\n  requests: 1\n  seed: 1\n  arrival: {{process: fixed, rate: 1}}\n"
      "  output_len: {{dist: fixed, value: 1}}\n"
      "  routing: {{source: trace, file: {}}}\n",
      trace_file.string());
  return load_scenario(text, "<tp-test>", "", overrides);
}

// The traffic of an Attention-TP reduce-scatter (or all-gather) of equal slices of `slice` tokens.
TrafficMatrix slice_traffic(int slice, int hidden) {
  TrafficMatrix traffic(kRanks);
  for (int src = 0; src < kRanks; ++src)
    for (int dst = 0; dst < kRanks; ++dst)
      if (src != dst) traffic.at(src, dst) = slice * hidden * 2.0;
  return traffic;
}

// One 64-token prompt; token i's experts are the first six of device i / 8 under the contiguous
// placement, which is exactly the positional slice that token i lands in: nothing to dispatch.
fs::path write_local_trace(const std::string& name) {
  std::vector<int> words(64);
  for (int i = 0; i < 64; ++i) words[i] = i;
  const fs::path trace_file = temp_path(name);
  write_trace(planted_trace({words},
                            [](int word, int) {
                              std::vector<ExpertId> e;
                              for (int j = 0; j < kTopK; ++j)
                                e.push_back(static_cast<ExpertId>(word / 8 * 8 + j));
                              return e;
                            }),
              trace_file.string());
  return trace_file;
}

// A one-request trace cannot hold requests out (its one request is the profile's): an error at the
// key, not a run of nothing that crashed.
TEST(AttentionTp, HoldingOutRequestsOfAOneRequestTraceIsAnErrorAtTheKey) {
  const fs::path trace_file = write_local_trace("one.semtrace");
  try {
    tp_scenario(trace_file, {"workload.routing.held_out.split=0.5"});
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.routing.held_out: trace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 1 request(s)"), std::string::npos) << e.what();
  }
  fs::remove(trace_file);
}

TEST(AttentionTp, StepWithAllExpertsLocalIsShardedAttentionPlusCollectivesPlusCompute) {
  const fs::path trace_file = write_local_trace("local.semtrace");
  // The roofline arithmetic below is the datasheet profile's (the measured one prices from tables).
  const Scenario s = tp_scenario(trace_file, {"calibration=datasheet"});
  const Json steps = simulate_isolated(s, [](const RunResult& run) {
    Json out = Json::array();
    for (const StepRecord& step : run.steps)
      out.push_back({step.phases.total(), step.local_activations, step.activations, step.a2a_scale_up_bytes,
                     step.tp_collective_bytes, step.phases[Phase::kReduceScatter],
                     step.phases[Phase::kAllGather], step.phases[Phase::kPermute]});
    return out;
  });
  fs::remove(trace_file);
  ASSERT_EQ(steps.size(), 1u);  // the prefill yields the only output token
  const Json& step = steps[0];
  EXPECT_EQ(step[1].get<long long>(), 64LL * kTopK * kMoeLayers);
  EXPECT_EQ(step[2].get<long long>(), 64LL * kTopK * kMoeLayers);
  EXPECT_EQ(step[3].get<double>(), 0.0);
  EXPECT_EQ(step[7].get<double>(), 0.0);

  // By hand: each rank runs its head shard of attention over all 64 tokens and its shard of the
  // dense FFN and LM head; gate, shared experts and six local experts of 8 tokens on its slice.
  const MoeModel shard = attention_tp_shard(s.model, kRanks);
  ASSERT_EQ(shard.attention.heads, 2);
  const RooflineCostModel full(s.model, s.cluster.device, *s.calibration, s.precision);
  const RooflineCostModel rank(shard, s.cluster.device, *s.calibration, s.precision);
  const std::vector<SequenceChunk> batch{{64, 0}};
  const std::vector<int> local_experts{8, 8, 8, 8, 8, 8, 0, 0};
  const double overhead = full.collective_overhead();
  const TrafficMatrix slices = slice_traffic(8, s.model.hidden);
  const double collective = overhead + bottleneck_seconds(slices, effective_topology(s));
  const double dense_layer =
      attention_with_elementwise(rank, 0, batch) + dense_ffn_with_elementwise(rank, 64) + 4 * collective;
  const double moe_layer = attention_with_elementwise(rank, 1, batch) + full.gate(8) + collective + overhead +
                           shared_experts_with_elementwise(full, 8) + full.routed_experts(local_experts) +
                           overhead + collective;
  const double expected = lm_head_with_elementwise(rank, 1) + dense_layer + kMoeLayers * moe_layer;
  EXPECT_NEAR(step[0].get<double>(), expected, 1e-9 * expected);
  EXPECT_NEAR(step[5].get<double>(), kMoeLayers * collective, 1e-12);
  EXPECT_NEAR(step[6].get<double>(), kMoeLayers * collective, 1e-12);
  double slice_bytes = 0;
  for (const double bytes : slices.bytes) slice_bytes += bytes;
  EXPECT_DOUBLE_EQ(step[4].get<double>(), (2 * kMoeLayers + 4) * slice_bytes);
}

// NCCL's measured fits of 8 ranks time the collectives whole: alpha + bus bytes / bus bandwidth (the
// fits below have no small-message factor), the all-reduce fit each dense all-reduce. The bytes
// counted are the shards', as without the fits.
TEST(AttentionTp, MeasuredNcclFitsTimeTheCollectivesWhole) {
  const fs::path trace_file = write_local_trace("nccl.semtrace");
  auto fit = [](const char* collective, double alpha, double bus_bandwidth) {
    CollectiveFit f;
    f.collective = collective;
    f.level = "scaleup";
    f.ranks = kRanks;
    f.alpha = alpha;
    f.bus_bandwidth = bus_bandwidth;
    return f;
  };
  const Scenario plain = tp_scenario(trace_file, {"calibration=datasheet"});
  Scenario s = plain;
  CalibrationProfile with_fits = *plain.calibration;
  with_fits.collectives = {fit("reduce_scatter", 7e-6, 200e9), fit("all_gather", 9e-6, 250e9),
                           fit("all_reduce", 13e-6, 300e9)};
  s.calibration = std::make_shared<const CalibrationProfile>(std::move(with_fits));
  auto extract = [](const RunResult& run) {
    const StepRecord& step = run.steps.at(0);
    return Json{step.phases.total(), step.tp_collective_bytes, step.phases[Phase::kReduceScatter],
                step.phases[Phase::kAllGather], run.notes.tp_collectives};
  };
  const Json measured = simulate_isolated(s, extract), topology = simulate_isolated(plain, extract);
  fs::remove(trace_file);

  const double shard = 8.0 * s.model.hidden * 2;  // 8 tokens of each rank's positional slice, BF16
  const double reduce_scatter = 7e-6 + 7 * shard / 200e9, all_gather = 9e-6 + 7 * shard / 250e9;
  const double all_reduce = 13e-6 + 2 * 7 * shard / 300e9;  // nccl-tests: 2 (n - 1) / n of the buffer
  EXPECT_NEAR(measured[2].get<double>(), kMoeLayers * reduce_scatter, 1e-12);
  EXPECT_NEAR(measured[3].get<double>(), kMoeLayers * all_gather, 1e-12);
  EXPECT_EQ(measured[1].get<double>(), topology[1].get<double>());
  // Everything else is as without the fits: the step differs by the collectives alone.
  const double topology_collective = topology[2].get<double>() / kMoeLayers;
  const double difference = kMoeLayers * (reduce_scatter + all_gather - 2 * topology_collective) +
                            2 * (all_reduce - 2 * topology_collective);
  EXPECT_NEAR(measured[0].get<double>() - topology[0].get<double>(), difference, 1e-9);
  EXPECT_EQ(measured[4], "nccl measured (8 ranks: reduce_scatter, all_gather, all_reduce)");
  EXPECT_EQ(topology[4],
            "topology (the calibration profile has no NCCL reduce-scatter and all-gather of 8 ranks)");
}

// 32 words; word w's six experts at layer l are {c, c + 8, ..., c + 40} for a cluster c of (w, l):
// spread over six devices by the contiguous placement, and co-locatable by Sem-MoE's.
std::vector<ExpertId> clustered_experts(int word, int layer) {
  const int cluster = (word * 5 + layer * 3) % 8;
  std::vector<ExpertId> e;
  for (int j = 0; j < kTopK; ++j) e.push_back(static_cast<ExpertId>(cluster + 8 * j));
  return e;
}

struct PlantedFiles {
  fs::path trace, profile, placement;
};

PlantedFiles write_planted_sem_moe_files() {
  std::mt19937_64 rng(7);
  std::vector<std::vector<int>> prompts(24);
  for (auto& words : prompts)
    for (int i = 0; i < 96; ++i) words.push_back(static_cast<int>(rng() % 32));
  const RoutingTrace trace = planted_trace(prompts, clustered_experts);
  PlantedFiles files{temp_path("planted.semtrace"), temp_path("profile"), temp_path("semmoe.semplace")};
  write_trace(trace, files.trace.string());
  fs::create_directories(files.profile);
  RoutingProfile::build(trace, {}).write(files.profile.string());
  return files;
}

Json lar_and_a2a(const RunResult& run) {
  const Summary summary = summarize(run);
  return {summary.lar,
          summary.a2a_scale_up_bytes + summary.a2a_scale_out_bytes,
          summary.tp_collective_bytes,
          summary.phase_totals[Phase::kPermute],
          summary.phase_totals.total(),
          summary.requests_completed};
}

TEST(AttentionTp, SemMoeReshuffleRaisesLarAndCutsAllToAllOnAPlantedTrace) {
  const PlantedFiles files = write_planted_sem_moe_files();
  const std::vector<std::string> common{"workload.requests=24", "workload.arrival.rate=50",
                                        "workload.output_len.value=4", "profile=" + files.profile.string(),
                                        "policies.placement=semmoe"};
  auto with = [&](const std::string& scheduling) {
    std::vector<std::string> overrides = common;
    overrides.push_back("policies.token_scheduling=" + scheduling);
    return tp_scenario(files.trace, overrides);
  };
  const Json positional = simulate_isolated(with("positional"), lar_and_a2a);
  const Json semmoe = simulate_isolated(with("semmoe_tp"), lar_and_a2a);
  fs::remove(files.trace);
  fs::remove_all(files.profile);
  EXPECT_EQ(positional[5].get<int>(), 24);
  EXPECT_EQ(semmoe[5].get<int>(), 24);
  EXPECT_LT(positional[0].get<double>(), 0.3);
  EXPECT_GT(semmoe[0].get<double>(), 0.7);
  EXPECT_LT(semmoe[1].get<double>(), 0.5 * positional[1].get<double>());
  // Same slices sizes, so the same reduce-scatter and all-gather bytes; only Sem-MoE permutes.
  EXPECT_EQ(semmoe[2].get<double>(), positional[2].get<double>());
  EXPECT_EQ(positional[3].get<double>(), 0.0);
  EXPECT_GT(semmoe[3].get<double>(), 0.0);
  // Two gather kernels per MoE layer: a few per cent of these small steps, mostly their launches.
  EXPECT_LT(semmoe[3].get<double>(), 0.1 * semmoe[4].get<double>());
}

// Sem-MoE's two gathers per MoE layer are kernels: every step's permute phase is at least their
// launch floor (the profile's kernel overhead), whatever the step's tokens.
TEST(AttentionTp, PermutePhaseIsAtLeastItsKernelsLaunchFloor) {
  const PlantedFiles files = write_planted_sem_moe_files();
  const Scenario s =
      tp_scenario(files.trace, {"workload.requests=24", "workload.arrival.rate=50",
                                "workload.output_len.value=4", "profile=" + files.profile.string(),
                                "policies.placement=semmoe", "policies.token_scheduling=semmoe_tp"});
  const Json permute = simulate_isolated(s, [](const RunResult& run) {
    Json seconds = Json::array();
    for (const StepRecord& step : run.steps) seconds.push_back(step.phases[Phase::kPermute]);
    return seconds;
  });
  fs::remove(files.trace);
  fs::remove_all(files.profile);
  const double floor = 2.0 * s.model.moe_layers() * s.calibration->kernel_overhead;
  ASSERT_GT(floor, 0.0);
  ASSERT_FALSE(permute.empty());
  for (const Json& step : permute) EXPECT_GE(step.get<double>(), floor);
}

TEST(AttentionTp, SameScenarioAndSeedGiveByteIdenticalCsvs) {
  const PlantedFiles files = write_planted_sem_moe_files();
  const Scenario s =
      tp_scenario(files.trace, {"workload.requests=24", "workload.arrival.rate=50",
                                "workload.output_len.value=4", "profile=" + files.profile.string(),
                                "policies.placement=semmoe", "policies.token_scheduling=semmoe_tp"});
  auto csvs = [&](const std::string& name) {
    const fs::path dir = temp_path(name);
    fs::create_directories(dir);
    const Json written = simulate_isolated(s, [&](const RunResult& run) {
      write_requests_csv((dir / "requests.csv").string(), run);
      write_steps_csv((dir / "steps.csv").string(), run);
      write_layers_csv((dir / "layers.csv").string(), run);
      return Json(run.steps.size());
    });
    std::string all;
    for (const char* file : {"requests.csv", "steps.csv", "layers.csv"}) {
      std::ifstream in(dir / file, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      all += text.str();
    }
    fs::remove_all(dir);
    EXPECT_GT(written.get<std::size_t>(), 0u);
    return all;
  };
  const std::string first = csvs("a");
  EXPECT_EQ(csvs("b"), first);
  EXPECT_NE(first.find(",reduce_scatter_s,all_gather_s,permute_s"), std::string::npos);
  fs::remove(files.trace);
  fs::remove_all(files.profile);
}

TEST(AttentionTp, WeightsAndKvCacheAreThoseOfOneRanksShard) {
  const fs::path trace_file = temp_path("memory.semtrace");
  write_trace(planted_trace({{0, 1, 2}}, clustered_experts), trace_file.string());
  const Scenario tp = tp_scenario(trace_file, {});
  fs::remove(trace_file);
  const MoeModel shard = attention_tp_shard(tp.model, kRanks);
  const RunPlan plan = build_run(tp);
  const long long slots = plan.placement->placement.max_slots_per_device();
  EXPECT_EQ(plan.memory.weight_bytes_per_device, weight_bytes_per_device(shard, slots, tp.precision));
  EXPECT_LT(plan.memory.weight_bytes_per_device, weight_bytes_per_device(tp.model, slots, tp.precision));
  // MLA keeps its latent KV whole on every rank.
  EXPECT_EQ(kv_bytes_per_token(shard, tp.precision), kv_bytes_per_token(tp.model, tp.precision));
  EXPECT_EQ(plan.memory.kv_capacity_tokens,
            static_cast<long long>((tp.cluster.device.hbm_bytes * tp.serving.memory_fraction -
                                    plan.memory.weight_bytes_per_device) /
                                   kv_bytes_per_token(shard, tp.precision)));
}

}  // namespace
}  // namespace semsim
