// Cluster presets at a node count: `cluster: {preset: NAME, nodes: N}` and `--nodes N` on the
// commands that take a scenario, and the DeepSeek-V3 deployments on H800 and H100 nodes a later study
// runs, with redundant expert slots where the EP size does not divide the experts.
// Bad node counts are in the two corpora (tests/data/bad-scenarios/cluster-*.yaml and the set_nodes_*
// and cluster_* cases of tests/data/bad-inputs/cases.tsv).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "rejected_input.hpp"

namespace semsim::cli_test {
namespace {

// DeepSeek-V3 with FP8 weights (BF16 weights do not fit an 80 GB H800 at EP32) on a cluster preset;
// a small synthetic vocabulary, whose routing tables build in milliseconds (4096 token types: a second).
std::string deepseek_v3_fp8_on(const std::string& cluster, int ep) {
  return "schema: 1\nname: deepseek-h800\nmodel: deepseek-v3\ncluster: " + cluster +
         "\nprecision: {weights: fp8, kv_cache: bf16, dispatch: fp8}\nparallelism: {ep: " +
         std::to_string(ep) +
         ", attention: dp}\nworkload:\n  requests: 20\n  seed: 1\n  arrival: {process: poisson, rate: 20}\n"
         "  input_len: {dist: fixed, value: 1024}\n  output_len: {dist: fixed, value: 256}\n"
         "  routing: {source: synthetic, vocabulary: 16, variants: 1}\n"
         "calibration: datasheet\n";
}

// The "  cluster ..." line `semsim check` prints.
std::string checked_cluster(const CliResult& r) {
  for (const auto& line : split_lines(r.out))
    if (line.starts_with("  cluster ")) return line.substr(2);
  return "";
}

TEST(cliClusterPresets, PresetAtANodeCountIsThatManyNodes) {
  TempDir tmp;
  std::ofstream(tmp / "map.yaml") << deepseek_v3_fp8_on("{preset: h800-ib, nodes: 4}", 32);
  std::ofstream(tmp / "name.yaml") << deepseek_v3_fp8_on("h800-ib", 32);
  const std::vector<std::vector<std::string>> ways = {
      {"check", tmp / "map.yaml"},
      {"check", tmp / "name.yaml", "--nodes", "4"},
      {"check", tmp / "name.yaml", "--set", "cluster.nodes=4"},
      // --nodes comes after every --set, whatever their order on the command line.
      {"check", tmp / "map.yaml", "--nodes", "4", "--set", "cluster.nodes=2"},
  };
  for (const auto& args : ways) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    EXPECT_EQ(checked_cluster(r), "cluster h800-ib-4x8 (4 x 8 h800-sxm)") << describe(args, r);
  }
  const std::vector<std::string> racks = {
      "check", tmp / "map.yaml",    "--set",   "cluster.preset=gb200-nvl72",
      "--set", "parallelism.ep=64", "--nodes", "2"};
  const CliResult r = run_semsim(racks);
  ASSERT_EQ(r.exit_code, 0) << describe(racks, r);
  EXPECT_EQ(checked_cluster(r), "cluster gb200-nvl72-2x72 (2 x 72 gb200)");
}

// A run names the sized cluster in summary.json, and its resolved scenario holds the node count.
TEST(cliClusterPresets, RunWithNodesRecordsTheSizedCluster) {
  TempDir tmp;
  const std::vector<std::string> args = {
      "run",   "default",           "--set", "cluster=h200-ib",      "--nodes", "2",
      "--set", "parallelism.ep=16", "--set", "workload.requests=20", "--set",   "calibration=datasheet",
      "--out", tmp / "run"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(read_file(tmp / "run/summary.json").find("\"cluster\": \"h200-ib-2x8\""), std::string::npos);
  const std::string resolved = read_file(tmp / "run/scenario.resolved.yaml");
  EXPECT_NE(resolved.find("preset: h200-ib"), std::string::npos) << resolved;
  const std::vector<std::string> again = {"check", tmp / "run/scenario.resolved.yaml"};
  const CliResult c = run_semsim(again);
  ASSERT_EQ(c.exit_code, 0) << describe(again, c);
  EXPECT_EQ(checked_cluster(c), "cluster h200-ib-2x8 (2 x 8 h200-sxm)");
}

TEST(cliClusterPresets, TraceSynthTakesNodes) {
  TempDir tmp;
  const std::vector<std::string> args = {"trace",           "synth", "default",    "--set", "cluster=h200-ib",
                                         "--nodes",         "2",     "--requests", "2",     "--out",
                                         tmp / "t.semtrace"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
}

// `semsim collective` takes a cluster preset, and --nodes for its size.
TEST(cliClusterPresets, CollectiveTakesNodes) {
  const std::vector<std::string> args = {"collective", "--cluster",     "h800-ib",  "--nodes",
                                         "4",          "--ep",          "32",       "--kernel",
                                         "dedup",      "--calibration", "datasheet"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_TRUE(r.out.starts_with("dedup on deepseek-v3 (h800-ib-4x8), EP 32")) << r.out;
  // Its errors name the option (the command reads no file).
  const std::vector<std::string> no_fabric = {"collective", "--cluster", "h200-1x8", "--nodes", "3",
                                              "--ep",       "8",         "--kernel", "dedup"};
  expect_one_located_error(no_fabric, run_semsim(no_fabric), "--nodes 3",
                           {"preset 'h200-1x8'", "has no fabric, so it is one node"});
  const std::vector<std::string> fraction = {"collective", "--cluster", "h200-ib", "--nodes", "2.5"};
  expect_one_located_error(fraction, run_semsim(fraction), "--nodes 2.5", {"expected an integer, got '2.5'"});
}

// DeepSeek's prefill deployment unit: 4 H800 nodes, EP32.
TEST(cliClusterPresets, DeepSeekV3OnFourH800NodesAtEp32Checks) {
  TempDir tmp;
  std::ofstream(tmp / "prefill.yaml") << deepseek_v3_fp8_on("{preset: h800-ib, nodes: 4}", 32);
  const std::vector<std::string> args = {"check", tmp / "prefill.yaml"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_EQ(checked_cluster(r), "cluster h800-ib-4x8 (4 x 8 h800-sxm)");
  EXPECT_NE(r.out.find("  EP32 attention dp"), std::string::npos) << r.out;
}

// The "  expert slots ..." line `semsim check` prints.
std::string checked_slots(const CliResult& r) {
  for (const auto& line : split_lines(r.out))
    if (line.starts_with("  expert slots: ")) return line.substr(2);
  return "";
}

// DeepSeek's decode deployment unit is 18 H800 nodes at EP144: 288 expert slots, 256 experts and 32
// redundant ones. Without the redundant experts EP144 is refused at parallelism.ep, told the count
// that fits; with them it checks, two slots per GPU.
TEST(cliClusterPresets, DeepSeekV3OnEighteenH800NodesAtEp144ChecksWithRedundantExperts) {
  TempDir tmp;
  std::ofstream(tmp / "decode.yaml") << deepseek_v3_fp8_on("{preset: h800-ib, nodes: 18}", 144);
  const std::vector<std::string> args = {"check", tmp / "decode.yaml"};
  expect_one_located_error(
      args, run_semsim(args), tmp / "decode.yaml:6:19",
      {"parallelism.ep: EP size 144 does not divide the 256 routed experts of 'deepseek-v3': give 32 "
       "redundant experts (288 slots per layer, 2 per device), as policies.placement: {name: contiguous, "
       "redundant: 32}"});
  const std::vector<std::string> redundant = {"check", tmp / "decode.yaml", "--set",
                                              "policies.placement={name: contiguous, redundant: 32}"};
  const CliResult r = run_semsim(redundant);
  ASSERT_EQ(r.exit_code, 0) << describe(redundant, r);
  EXPECT_EQ(checked_cluster(r), "cluster h800-ib-18x8 (18 x 8 h800-sxm)");
  EXPECT_EQ(checked_slots(r), "expert slots: 288 per MoE layer (32 redundant), at most 2 per device");
}

// SGLang's decode on 9 H100 nodes at EP72 (--ep-num-redundant-experts 32: 4 slots per GPU), and
// prefill at EP32 with the same 32 redundant experts (9 per GPU), with a tiny run recording them.
TEST(cliClusterPresets, DeepSeekV3AtEp72AndEp32WithRedundantExpertsRecordsTheSlots) {
  TempDir tmp;
  std::ofstream(tmp / "decode.yaml") << deepseek_v3_fp8_on("{preset: h100-ib, nodes: 9}", 72);
  const std::vector<std::string> decode = {"check", tmp / "decode.yaml", "--set",
                                           "policies.placement={name: round_robin, redundant: 32}"};
  const CliResult c = run_semsim(decode);
  ASSERT_EQ(c.exit_code, 0) << describe(decode, c);
  EXPECT_EQ(checked_slots(c), "expert slots: 288 per MoE layer (32 redundant), at most 4 per device");
  std::ofstream(tmp / "prefill.yaml") << deepseek_v3_fp8_on("{preset: h800-ib, nodes: 4}", 32);
  const std::vector<std::string> prefill = {"run",   tmp / "prefill.yaml",
                                            "--set", "policies.placement={name: contiguous, redundant: 32}",
                                            "--set", "workload.requests=4",
                                            "--set", "workload.output_len.value=4",
                                            "--out", tmp / "run"};
  const CliResult r = run_semsim(prefill);
  ASSERT_EQ(r.exit_code, 0) << describe(prefill, r);
  const std::string summary = read_file(tmp / "run/summary.json");
  EXPECT_NE(summary.find("\"expert_slots\": {\n    \"physical_per_layer\": 288,\n    \"redundant\": 32,\n"
                         "    \"most_per_device\": 9\n  }"),
            std::string::npos)
      << summary;
}

// EPLB from a routing profile of DeepSeek-V3 at both decode sizes: its 8 expert groups divide neither
// 18 nor 9 nodes, so it places the 288 slots globally; the EP72 run dispatches with DeepEP's kernels.
// Sem-MoE with the same redundant experts checks at EP72.
TEST(cliClusterPresets, DeepSeekV3EplbFromAProfileAtEp144AndEp72) {
  TempDir tmp;
  std::ofstream(tmp / "decode144.yaml") << deepseek_v3_fp8_on("{preset: h800-ib, nodes: 18}", 144);
  std::ofstream(tmp / "decode72.yaml") << deepseek_v3_fp8_on("{preset: h100-ib, nodes: 9}", 72);
  const std::vector<std::string> synth = {"trace",
                                          "synth",
                                          tmp / "decode72.yaml",
                                          "--set",
                                          "policies.placement={name: contiguous, redundant: 32}",
                                          "--requests",
                                          "4",
                                          "--out",
                                          tmp / "v3.semtrace"};
  const CliResult t = run_semsim(synth);
  ASSERT_EQ(t.exit_code, 0) << describe(synth, t);
  const std::vector<std::string> profile = {"profile", tmp / "v3.semtrace", "--out", tmp / "prof"};
  const CliResult p = run_semsim(profile);
  ASSERT_EQ(p.exit_code, 0) << describe(profile, p);
  const std::string eplb = "policies.placement={name: eplb, redundant: 32}";
  const std::vector<std::string> check = {
      "check", tmp / "decode144.yaml", "--set", "profile=" + (tmp / "prof"), "--set", eplb};
  const CliResult c = run_semsim(check);
  ASSERT_EQ(c.exit_code, 0) << describe(check, c);
  EXPECT_EQ(checked_slots(c), "expert slots: 288 per MoE layer (32 redundant), at most 2 per device");
  // Sem-MoE co-clusters the 256 experts into 72 devices and fills their 32 spare slots with replicas.
  const std::vector<std::string> semmoe = {"check", tmp / "decode72.yaml",
                                           "--set", "profile=" + (tmp / "prof"),
                                           "--set", "policies.placement={name: semmoe, redundant: 32}"};
  const CliResult s = run_semsim(semmoe);
  ASSERT_EQ(s.exit_code, 0) << describe(semmoe, s);
  EXPECT_EQ(checked_slots(s), "expert slots: 288 per MoE layer (32 redundant), at most 4 per device");
  const std::vector<std::string> run = {"run",   tmp / "decode72.yaml",
                                        "--set", "profile=" + (tmp / "prof"),
                                        "--set", eplb,
                                        "--set", "policies.dispatch=auto",
                                        "--set", "serving.max_running_requests=128",
                                        "--set", "workload.requests=4",
                                        "--set", "workload.output_len.value=4",
                                        "--out", tmp / "run"};
  const CliResult r = run_semsim(run);
  ASSERT_EQ(r.exit_code, 0) << describe(run, r);
  const std::string summary = read_file(tmp / "run/summary.json");
  EXPECT_NE(
      summary.find("\"physical_per_layer\": 288,\n    \"redundant\": 32,\n    \"most_per_device\": 4\n"),
      std::string::npos)
      << summary;
}

// `--nodes 2` on an EP8 scenario leaves a node idle: check and run say so on stderr, and per-node
// throughput counts the one node in use (the total, here), as the warning says.
TEST(cliClusterPresets, NodesTheServingGroupLeavesIdleAreWarnedAbout) {
  TempDir tmp;
  const std::string warning =
      "warning: cluster 'h200-ib-2x8' has 2 nodes of 8 devices; the serving group (parallelism.ep 8) "
      "uses 1 of them, leaving 8 devices idle; per-node throughput counts the 1 node in use\n";
  const std::vector<std::string> scenario{"default", "--set", "cluster=h200-ib", "--set",
                                          "workload.requests=20"};
  auto with = [&](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), scenario.begin(), scenario.end());
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  for (const auto& args : {with({"check"}, {"--nodes", "2"}),
                           with({"run"}, {"--nodes", "2", "--out", tmp / "two", "--progress", "never"})}) {
    const CliResult r = run_semsim(args);
    ASSERT_EQ(r.exit_code, 0) << describe(args, r);
    EXPECT_EQ(r.err, warning) << describe(args, r);
  }
  const auto summary = nlohmann::json::parse(read_file(fs::path(tmp / "two") / "summary.json"));
  EXPECT_EQ(summary["ep_nodes"], 1.0);
  EXPECT_EQ(summary["throughput_tok_s_per_node"]["total"], summary["throughput_tok_s"]["total"]);
  // One node, every device serving: nothing to warn about.
  const auto one = with({"check"}, {"--nodes", "1"});
  const CliResult r = run_semsim(one);
  ASSERT_EQ(r.exit_code, 0) << describe(one, r);
  EXPECT_EQ(r.err, "") << describe(one, r);
}

}  // namespace
}  // namespace semsim::cli_test
