// Several instances behind a router (scenario `deployment:`): per-instance outputs that add up to the
// totals, a one-instance deployment identical to the plain run, byte-identical reruns, the
// expert-affinity routers on profiled placements, and the inputs refused at their keys.
#include <gtest/gtest.h>

#include <map>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "rejected_input.hpp"

namespace semsim::cli_test {
namespace {

// DeepSeek-V2-Lite, EP8 per instance, on `nodes` nodes of 8; `deployment` is the key's value.
std::string scenario(int nodes, const std::string& deployment, const std::string& workload_extra = "") {
  return "schema: 1\nmodel: deepseek-v2-lite\ncluster: {preset: h100-ib, nodes: " + std::to_string(nodes) +
         "}\nparallelism: {ep: 8, attention: dp}\nworkload:\n  requests: 120\n  seed: 3\n" +
         (workload_extra.empty() ? "  arrival: {process: poisson, rate: 400}\n" : workload_extra) +
         "  input_len: {dist: uniform, min: 64, max: 512}\n  output_len: {dist: uniform, min: 4, max: 32}\n"
         "  routing: {source: synthetic}\ncalibration: datasheet\n" +
         (deployment.empty() ? "" : "deployment: " + deployment + "\n");
}

CliResult run_deployment(const TempDir& dir, const std::string& name, const std::string& text,
                         std::vector<std::string> extra = {}) {
  std::ofstream(dir / (name + ".yaml")) << text;
  std::vector<std::string> args{"run", dir / (name + ".yaml"), "--out", dir / name};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_semsim(args);
}

nlohmann::json summary(const TempDir& dir, const std::string& name) {
  return nlohmann::json::parse(read_file(fs::path(dir / name) / "summary.json"));
}

// The CSV without its column `column`.
std::string without_column(const std::string& csv, const std::string& column) {
  std::string out;
  std::size_t index = std::string::npos;
  for (const std::string& line : split_lines(csv)) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
    if (line.back() == ',') fields.emplace_back();
    if (index == std::string::npos)
      index = static_cast<std::size_t>(std::find(fields.begin(), fields.end(), column) - fields.begin());
    fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(index));
    for (std::size_t f = 0; f < fields.size(); ++f) out += (f ? "," : "") + fields[f];
    out += "\n";
  }
  return out;
}

TEST(cliDeployment, PerInstanceOutputsAddUpToTheTotals) {
  TempDir dir;
  for (const std::string router : {"round_robin", "least_load"}) {
    const CliResult r = run_deployment(dir, router, scenario(4, "{instances: 4, router: " + router + "}"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = summary(dir, router);
    const nlohmann::json& d = j["deployment"];
    EXPECT_EQ(d["instances"], 4);
    EXPECT_EQ(d["router"], router);
    EXPECT_EQ(d["nodes_per_instance"], 1);
    EXPECT_EQ(j["ep_nodes"], 4.0);
    EXPECT_EQ(j["requests_completed"], 120);
    int requests = 0, completed = 0;
    double output_tok_s = 0;
    for (int i = 0; i < 4; ++i) {
      const nlohmann::json& instance = d["instance"][std::to_string(i)];
      requests += instance["requests"].get<int>();
      completed += instance["requests_completed"].get<int>();
      output_tok_s +=
          instance["throughput_tok_s"]["output"].get<double>() * instance["simulated_seconds"].get<double>();
      EXPECT_GT(instance["requests"].get<int>(), 0) << router << " " << i;
      if (router == "round_robin") {
        EXPECT_EQ(instance["requests"], 30);
      }
    }
    EXPECT_EQ(requests, 120) << router;
    EXPECT_EQ(completed, 120) << router;
    // Output tokens: the instances' add up to the run's.
    EXPECT_NEAR(output_tok_s, j["completed_tokens"]["output"].get<double>(), 1e-6 * output_tok_s) << router;
    const std::string csv = read_file(fs::path(dir / router) / "requests.csv");
    EXPECT_TRUE(csv.starts_with("id,arrival_s,rank,instance,input_tokens")) << csv.substr(0, 80);
    const std::vector<double> instance = column_of(csv, "instance");
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(std::count(instance.begin(), instance.end(), i), d["instance"][std::to_string(i)]["requests"])
          << router;
    if (router == "round_robin") {
      for (std::size_t row = 0; row < instance.size(); ++row) EXPECT_EQ(instance[row], row % 4);
    }
    EXPECT_TRUE(read_file(fs::path(dir / router) / "steps.csv").starts_with("step,instance,start_s"));
  }
}

TEST(cliDeployment, OneInstanceIsThePlainRunAndRerunsAreByteIdentical) {
  TempDir dir;
  for (const std::string loop : {"", "  concurrency: 8\n"}) {
    SCOPED_TRACE(loop.empty() ? "open loop" : "closed loop");
    ASSERT_EQ(run_deployment(dir, "plain", scenario(1, "", loop)).exit_code, 0);
    ASSERT_EQ(run_deployment(dir, "one", scenario(1, "{instances: 1, router: least_load}", loop)).exit_code,
              0);
    EXPECT_EQ(without_column(read_file(fs::path(dir / "one") / "requests.csv"), "instance"),
              read_file(fs::path(dir / "plain") / "requests.csv"));
    EXPECT_EQ(without_column(read_file(fs::path(dir / "one") / "steps.csv"), "instance"),
              read_file(fs::path(dir / "plain") / "steps.csv"));
    ASSERT_EQ(run_deployment(dir, "four", scenario(4, "{instances: 4, router: least_load}", loop)).exit_code,
              0);
    ASSERT_EQ(run_deployment(dir, "again", scenario(4, "{instances: 4, router: least_load}", loop)).exit_code,
              0);
    for (const char* file : {"requests.csv", "steps.csv"})
      EXPECT_EQ(read_file(fs::path(dir / "four") / file), read_file(fs::path(dir / "again") / file)) << file;
    nlohmann::json a = summary(dir, "four"), b = summary(dir, "again");
    for (const char* differs : {"wall_seconds", "scenario"}) {  // the time taken; the file's name
      a.erase(differs);
      b.erase(differs);
    }
    EXPECT_EQ(a, b);
  }
}

TEST(cliDeployment, WorksWithTwoBatchOverlapTheFlowFidelityAndSpeculativeDecoding) {
  TempDir dir;
  const std::string text = scenario(2, "{instances: 2, router: least_load}");
  for (const std::vector<std::string>& set : {std::vector<std::string>{"--set", "serving.overlap=two_batch"},
                                              {"--set", "network.fidelity=flow"},
                                              {"--set", "serving.speculative={method: mtp, tokens: 1}"}}) {
    const CliResult r = run_deployment(dir, "run", text, set);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = summary(dir, "run");
    EXPECT_EQ(j["requests_completed"], 120) << set[1];
    if (j.contains("speculative")) {  // both instances' verifications
      EXPECT_GT(j["speculative"]["verifications"].get<long long>(), 0);
    }
    fs::remove_all(dir / "run");
  }
}

// Every instance's prefix caches count in the totals: the instances' hits and prompt tokens add up.
TEST(cliDeployment, PrefixCachesOfEveryInstanceAddUpToTheTotals) {
  TempDir dir;
  const std::string text = scenario(2, "{instances: 2, router: round_robin}");
  const CliResult r = run_deployment(
      dir, "run", text,
      {"--set", "workload.prefix={groups: 4, length: 64, share: 0.5}", "--set", "serving.prefix_cache=true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = summary(dir, "run");
  const nlohmann::json& cache = j["prefix_cache"];
  ASSERT_FALSE(cache["hit_rate"].is_null());
  EXPECT_EQ(cache["requests"], 120);
  EXPECT_GT(cache["hit_requests"].get<long long>(), 0);
  const double prompt = cache["prompt_tokens"].get<double>(), cached = cache["cached_tokens"].get<double>();
  EXPECT_DOUBLE_EQ(cache["hit_rate"].get<double>(), cached / prompt);
  // Each instance reports its own caches' hit rate.
  for (const auto& [index, instance] : j["deployment"]["instance"].items()) {
    ASSERT_TRUE(instance["prefix_cache_hit_rate"].is_number()) << index;
    EXPECT_GE(instance["prefix_cache_hit_rate"].get<double>(), 0) << index;
    EXPECT_LE(instance["prefix_cache_hit_rate"].get<double>(), 1) << index;
  }
}

// The cache-aware router sends a request where the router sent its prefix before: more of the
// prompts are found cached than under round robin, which spreads each group over every instance.
TEST(cliDeployment, PrefixAwareRouterFindsMoreCachedThanRoundRobin) {
  TempDir dir;
  std::map<std::string, double> hit_rate;
  for (const std::string router : {"round_robin", "prefix_aware"}) {
    const CliResult r =
        run_deployment(dir, router, scenario(4, "{instances: 4, router: " + router + "}"),
                       {"--set", "workload.prefix={groups: 4, length: 64, share: 1}", "--set",
                        "serving.prefix_cache=true", "--set", "policies.request_scheduling=prefix_aware"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    hit_rate[router] = summary(dir, router)["prefix_cache"]["hit_rate"].get<double>();
  }
  EXPECT_GT(hit_rate["prefix_aware"], hit_rate["round_robin"]);
  // Without a cache there is nothing to be aware of.
  const CliResult refused =
      run_deployment(dir, "refused", scenario(4, "{instances: 4, router: prefix_aware}"));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("needs serving.prefix_cache: true"), std::string::npos) << refused.err;
}

// Two instances with placements profiled on different halves of a topic-routed trace: the routers
// read each instance's tables; the hindsight bound is at least round robin's LAR.
TEST(cliDeployment, ExpertAffinityRoutesByEachInstancesPlacement) {
  TempDir dir;
  ASSERT_EQ(synthesize_prefill_trace(dir, 160, 64, dir / "trace.semtrace").exit_code, 0);
  for (const std::string seed : {"1", "2"}) {
    const std::vector<std::vector<std::string>> steps{
        {"profile", dir / "trace.semtrace", "--split", "0.5", "--seed", seed, "--out",
         dir / ("profile-" + seed)},
        {"place", "--policy", "semmoe", "--profile", dir / ("profile-" + seed), "--ep", "8", "--model",
         "deepseek-v2-lite", "--out", dir / ("plan-" + seed + ".semplace")}};
    for (const auto& args : steps) {
      const CliResult r = run_semsim(args);
      ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    }
  }
  const std::string workload =
      "  arrival: {process: poisson, rate: 400}\n"
      "  routing: {source: trace, file: trace.semtrace}\n";
  std::map<std::string, double> lar;
  for (const std::string router : {"round_robin", "expert_affinity", "expert_affinity_hindsight"}) {
    const std::string text =
        "schema: 1\nmodel: deepseek-v2-lite\ncluster: {preset: h100-ib, nodes: 2}\n"
        "parallelism: {ep: 8, attention: dp}\nworkload:\n  requests: 80\n" +
        workload +
        "calibration: datasheet\npolicies: {request_scheduling: semmoe_dp}\n"
        "deployment:\n  instances: 2\n  router: " +
        router +
        "\n  set:\n    - {policies.placement: {file: plan-1.semplace}}\n"
        "    - {policies.placement: {file: plan-2.semplace}}\n";
    const CliResult r = run_deployment(dir, router, text);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = summary(dir, router);
    EXPECT_EQ(j["requests_completed"], 80) << router;
    lar[router] = j["lar"].get<double>();
  }
  EXPECT_GE(lar["expert_affinity_hindsight"], lar["round_robin"]);
}

// A sweep of 40 requests over the router of two instances described by `base`: each point's instance
// columns add up, round robin splits them evenly.
void expect_router_sweep_columns(const TempDir& dir, const std::string& base) {
  std::ofstream(dir / "base.yaml") << base;
  std::ofstream(dir / "sweep.yaml") << "sweep: 1\nbase: base.yaml\nset: {workload.requests: 40}\n"
                                       "axes:\n  - deployment.router: [round_robin, least_load]\n";
  const CliResult r = run_semsim({"sweep", dir / "sweep.yaml", "--out", dir / "sweep"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string points = read_file(fs::path(dir / "sweep") / "points.csv");
  const std::vector<double> first = column_of(points, "deployment.instance.0.requests");
  const std::vector<double> second = column_of(points, "deployment.instance.1.requests");
  ASSERT_EQ(first.size(), 2u);
  for (std::size_t p = 0; p < 2; ++p) EXPECT_EQ(first[p] + second[p], 40);
  EXPECT_EQ(first[0], 20);  // round robin
}

TEST(cliDeployment, SweepsOverTheRouterWithEachInstancesColumns) {
  TempDir dir;
  expect_router_sweep_columns(dir, scenario(2, "{instances: 2, router: round_robin}"));
}

// Disaggregated instances: each a prefill pool and a decode pool on nodes of its own, the router
// feeding the prefill pools and hearing of finishes from the decode pools. The instances' requests and
// tokens add up to the totals; one instance is the plain disaggregated run (its requests and decode
// steps byte for byte); closed loops, the flow fidelity and sweeps run too.
TEST(cliDeployment, DisaggregatedInstancesAddUpAndOneIsThePlainDisaggregatedRun) {
  TempDir dir;
  const std::string pools =
      "disaggregation: {kv_transfer: layerwise, prefill: {nodes: 1}, decode: {nodes: 1}}\n";
  const CliResult four =
      run_deployment(dir, "four", scenario(8, "{instances: 4, router: least_load}") + pools);
  ASSERT_EQ(four.exit_code, 0) << four.err;
  const nlohmann::json j = summary(dir, "four");
  EXPECT_EQ(j["pool"], "disaggregated");
  EXPECT_EQ(j["ep_nodes"], 8.0);
  EXPECT_EQ(j["deployment"]["nodes_per_instance"], 2);
  EXPECT_EQ(j["requests_completed"], 120);
  int requests = 0;
  double output_tokens = 0;
  for (int i = 0; i < 4; ++i) {
    const nlohmann::json& instance = j["deployment"]["instance"][std::to_string(i)];
    EXPECT_GT(instance["requests"].get<int>(), 0) << i;
    EXPECT_EQ(instance["requests_completed"], instance["requests"]) << i;
    requests += instance["requests"].get<int>();
    output_tokens +=
        instance["throughput_tok_s"]["output"].get<double>() * instance["simulated_seconds"].get<double>();
  }
  EXPECT_EQ(requests, 120);
  EXPECT_NEAR(output_tokens, j["completed_tokens"]["output"].get<double>(), 1e-6 * output_tokens);
  for (const char* file : {"prefill_steps.csv", "kv_transfers.csv"})
    EXPECT_FALSE(fs::exists(fs::path(dir / "four") / file)) << file;

  ASSERT_EQ(run_deployment(dir, "plain", scenario(2, "") + pools).exit_code, 0);
  ASSERT_EQ(run_deployment(dir, "one", scenario(2, "{instances: 1, router: round_robin}") + pools).exit_code,
            0);
  EXPECT_EQ(without_column(read_file(fs::path(dir / "one") / "requests.csv"), "instance"),
            read_file(fs::path(dir / "plain") / "requests.csv"));
  EXPECT_EQ(without_column(read_file(fs::path(dir / "one") / "steps.csv"), "instance"),
            read_file(fs::path(dir / "plain") / "steps.csv"));

  for (const std::string& variant : {std::string("closed"), std::string("flow")}) {
    const std::string text =
        variant == "closed" ? scenario(4, "{instances: 2, router: least_load}", "  concurrency: 8\n") + pools
                            : scenario(4, "{instances: 2, router: least_load}") + pools;
    const CliResult r =
        run_deployment(dir, variant, text,
                       variant == "flow" ? std::vector<std::string>{"--set", "network.fidelity=flow"}
                                         : std::vector<std::string>{});
    ASSERT_EQ(r.exit_code, 0) << variant << r.err;
    EXPECT_EQ(summary(dir, variant)["requests_completed"], 120) << variant;
  }

  // A sweep over the router: each point's instance columns.
  expect_router_sweep_columns(dir, scenario(4, "{instances: 2, router: round_robin}") + pools);
}

TEST(cliDeployment, RefusesWhatTheClusterOrTheKeysCannotHold) {
  TempDir dir;
  struct Case {
    std::string deployment, location;
    std::vector<std::string> expects;
  };
  const std::string file = dir / "bad.yaml";
  for (const Case& c : std::vector<Case>{
           {"{instances: 3, router: least_load}",
            file + ":13:25",
            {"deployment.instances", "3 instances of 1 node each", "take 3 nodes, more than the 2"}},
           {"{instances: 2, router: fastest}", file + ":13:36", {"unknown value 'fastest'", "least_load"}},
           {"{instances: 2, router: {name: expert_affinity, load_slack: -1}}",
            file + ":13:72",
            {"load_slack must be >= 0"}},
           {"{instances: 2, set: [{profile: x}]}", file + ":13:33", {"1 maps of keys for 2 instances"}},
           {"{instances: 2, set: [{serving.max_batch_tokens: 4}, {}]}",
            file + ":13:61",
            {"an instance sets only policies and profile keys", "serving.max_batch_tokens"}},
           {"{instances: 2, router: expert_affinity}",
            file,
            {"deployment.router", "instance 0's placement has none"}},
       }) {
    std::ofstream(dir / "bad.yaml") << scenario(2, c.deployment);
    const std::vector<std::string> args{"run", dir / "bad.yaml", "--out", dir / "out"};
    expect_one_located_error(args, run_semsim(args), c.location, c.expects);
    EXPECT_FALSE(fs::exists(dir / "out")) << c.deployment;
  }
}

}  // namespace
}  // namespace semsim::cli_test
