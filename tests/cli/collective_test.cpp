// `semsim collective`: one dispatch + combine timed alone. DeepEP normal across two nodes sends one
// RDMA copy per token and node (fewer NIC bytes than NCCL-style dedup's one per GPU) and forwards the
// rest over NVLink; on one node it moves dedup's bytes; both fidelities agree; bad options exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

nlohmann::json collective_json(const std::vector<std::string>& options,
                               const std::string& model = "deepseek-v2-lite") {
  std::vector<std::string> args{"collective", "--model", model, "--json", "--repeat", "2"};
  args.insert(args.end(), options.begin(), options.end());
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  return nlohmann::json::parse(r.out);
}

TEST(cliCollective, NormalAcrossNodesSendsOneRdmaCopyPerNodeAndForwardsInside) {
  const std::vector<std::string> two_nodes{"--cluster", "h200-2x8", "--ep", "16", "--tokens", "512"};
  auto with = [&](const std::string& kernel) {
    std::vector<std::string> options = two_nodes;
    options.insert(options.end(), {"--kernel", kernel});
    return collective_json(options);
  };
  const auto normal = with("normal"), dedup = with("dedup");
  const auto& nb = normal["bytes_per_rank"];
  const auto& db = dedup["bytes_per_rank"];
  EXPECT_LT(nb["rdma"].get<double>(), 0.6 * db["rdma"].get<double>());
  EXPECT_GT(nb["forwarded"].get<double>(), 0);
  EXPECT_EQ(db["forwarded"], 0.0);
  // The same routing: the copies inside the source's node are dedup's, forwarded ones come on top.
  EXPECT_DOUBLE_EQ(nb["nvlink"].get<double>() - nb["forwarded"].get<double>(), db["nvlink"].get<double>());
  EXPECT_EQ(normal["bottleneck_link"], "rdma");
  // DeepEP's internode kernels report RDMA bandwidth: the headline is the NIC bytes', NVLink's beside it.
  EXPECT_EQ(normal["reported_link"], "rdma");
  const auto& links = normal["gbps_by_link"];
  EXPECT_DOUBLE_EQ(normal["dispatch_gbps"].get<double>(), links["rdma"]["dispatch"].get<double>());
  EXPECT_DOUBLE_EQ(links["rdma"]["dispatch"].get<double>() / links["nvlink"]["dispatch"].get<double>(),
                   nb["rdma"].get<double>() / nb["nvlink"].get<double>());
  EXPECT_DOUBLE_EQ(normal["busbw_gbps"].get<double>(), normal["algbw_gbps"].get<double>() * 15 / 16);
  EXPECT_GT(normal["dispatch_us"].get<double>(), 0);
  EXPECT_GT(normal["combine_us"].get<double>(), normal["dispatch_us"].get<double>())
      << "the combine returns BF16, the dispatch sends FP8";
  // A lone collective takes its closed form in both fidelities; the same seed, the same result.
  std::vector<std::string> flow = two_nodes;
  flow.insert(flow.end(), {"--kernel", "normal", "--fidelity", "flow"});
  auto flowed = collective_json(flow);
  flowed["fidelity"] = normal["fidelity"];
  EXPECT_EQ(flowed, normal);
}

TEST(cliCollective, OneNodeNormalMovesDedupsBytesAndTheTablesTimeIt) {
  const auto normal = collective_json({"--kernel", "normal"});
  const auto dedup = collective_json({"--kernel", "dedup"});
  EXPECT_EQ(normal["bytes_per_rank"], dedup["bytes_per_rank"]);
  EXPECT_EQ(normal["bottleneck_link"], "nvlink");
  EXPECT_EQ(normal["reported_link"], "nvlink");
  EXPECT_EQ(normal["gbps_by_link"]["rdma"]["dispatch"], 0.0);
  EXPECT_EQ(normal["timed_by"], "deepep normal") << normal;
  const auto topology = collective_json({"--kernel", "normal", "--timing", "topology"});
  EXPECT_NE(topology["dispatch_us"], normal["dispatch_us"]);
  const auto all_reduce = collective_json({"--kernel", "all_reduce", "--tokens", "1024"});
  EXPECT_GT(all_reduce["time_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(all_reduce["busbw_gbps"].get<double>(),
                   all_reduce["algbw_gbps"].get<double>() * 2 * 7 / 8);
}

// A GB200 NVL72 rack is one NVLink domain: EP16 inside it moves every copy over NVLink, where two HGX
// H200 nodes send half of them through the NICs. All-gather traffic (every token to every other
// rank) makes the bytes per level countable by hand: DeepSeek-V3's hidden 7168 in FP8 with its scales
// is 7168 * (1 + 4/128) = 7392 B a copy, 128 tokens a rank.
TEST(cliCollective, Nvl72IsOneNvlinkDomainWhereTwoH200NodesCrossTheNics) {
  const std::vector<std::string> traffic{"--kernel", "allgather", "--ep", "16", "--tokens", "128"};
  auto on = [&](const std::string& cluster) {
    std::vector<std::string> options = traffic;
    options.insert(options.end(), {"--cluster", cluster});
    return collective_json(options, "deepseek-v3");
  };
  const auto rack = on("gb200-nvl72"), nodes = on("h200-2x8");
  EXPECT_DOUBLE_EQ(rack["bytes_per_rank"]["nvlink"].get<double>(), 128.0 * 15 * 7392);  // 14,192,640
  EXPECT_EQ(rack["bytes_per_rank"]["rdma"], 0.0);
  EXPECT_EQ(rack["bottleneck_link"], "nvlink");
  EXPECT_DOUBLE_EQ(nodes["bytes_per_rank"]["nvlink"].get<double>(), 128.0 * 7 * 7392);  // 6,623,232
  EXPECT_DOUBLE_EQ(nodes["bytes_per_rank"]["rdma"].get<double>(), 128.0 * 8 * 7392);    // 7,569,408
  EXPECT_EQ(nodes["bottleneck_link"], "rdma");
  EXPECT_LT(rack["dispatch_us"].get<double>(), nodes["dispatch_us"].get<double>());

  // DeepEP on the rack: the GB200 tables time EP4 (one compute tray) themselves; wider EP inside the
  // rack is their link model, all NVLink — never the H100/H200 tables' transferred model.
  const auto tray =
      collective_json({"--cluster", "gb200-nvl72", "--ep", "4", "--kernel", "normal"}, "deepseek-v3");
  EXPECT_EQ(tray["timed_by"], "deepep normal") << tray;
  const auto wide =
      collective_json({"--cluster", "gb200-nvl72", "--ep", "64", "--kernel", "normal"}, "deepseek-v3");
  EXPECT_NE(wide["timed_by"].get<std::string>().find("link model of its measured tables"), std::string::npos)
      << wide;
  EXPECT_EQ(wide["bytes_per_rank"]["rdma"], 0.0);
}

// An NVFP4 dispatch payload (SGLang's GB200 deployments quantize tokens for NVFP4 experts inside
// DeepEP) is 7168 * (0.5 + 1/16) = 4032 B a DeepSeek-V3 copy against FP8's 7392: the bytes by hand at
// all-gather traffic, and on the tray the GB200 tables time, fewer bytes take less time (the tables,
// measured with FP8, read at the tokens moving as many bytes) and BF16's more; the combine is BF16 in all.
TEST(cliCollective, Nvfp4DispatchMovesItsBytesAndTheTablesTimeThem) {
  auto with = [](const std::string& dtype, const std::vector<std::string>& options) {
    std::vector<std::string> all = options;
    all.insert(all.end(), {"--cluster", "gb200-nvl72", "--dispatch-dtype", dtype});
    return collective_json(all, "deepseek-v3");
  };
  const std::vector<std::string> allgather{"--kernel", "allgather", "--ep", "16", "--tokens", "128"};
  EXPECT_DOUBLE_EQ(with("nvfp4", allgather)["bytes_per_rank"]["nvlink"].get<double>(), 128.0 * 15 * 4032);
  const std::vector<std::string> tray{"--kernel", "normal", "--ep", "4", "--tokens", "4096"};
  const auto fp4 = with("nvfp4", tray), fp8 = with("fp8", tray), bf16 = with("bf16", tray);
  EXPECT_EQ(fp4["timed_by"], "deepep normal") << fp4;
  EXPECT_LT(fp4["dispatch_us"].get<double>(), fp8["dispatch_us"].get<double>());
  EXPECT_LT(fp8["dispatch_us"].get<double>(), bf16["dispatch_us"].get<double>());
  EXPECT_EQ(fp4["combine_us"], fp8["combine_us"]);
  EXPECT_EQ(bf16["combine_us"], fp8["combine_us"]);
}

// DeepEP's auto mode runs what SGLang's rule picks for the step: normal with prefill, low-latency
// for a decode-only step (the same resolver a run asks).
TEST(cliCollective, AutoRunsTheKernelOfItsStep) {
  const auto timed = [](const std::vector<std::string>& options) {
    const auto result = collective_json(options);
    return std::pair(result["dispatch_us"], result["timed_by"]);
  };
  EXPECT_EQ(timed({"--kernel", "auto"}).first, timed({"--kernel", "normal"}).first);
  EXPECT_EQ(timed({"--kernel", "auto", "--step", "decode"}).first, timed({"--kernel", "low_latency"}).first);
  EXPECT_NE(timed({"--kernel", "normal"}).first, timed({"--kernel", "low_latency"}).first);
  EXPECT_EQ(timed({"--kernel", "auto"}).second,
            "deepep auto (low_latency for decode-only steps, normal otherwise)");
}

// --sms sets the SMs of DeepEP's normal kernels wherever one times the call: its tables' rows at that
// count, or the link model fit at it; fewer SMs reach less of the link.
TEST(cliCollective, SmsSetTheNormalKernelsShareInTablesAndLinkModel) {
  for (const std::string timing : {"tables", "model"}) {
    const auto dispatch_us = [&](const std::string& sms) {
      return collective_json({"--timing", timing, "--tokens", "4096", "--sms", sms},
                             "deepseek-v3")["dispatch_us"]
          .get<double>();
    };
    EXPECT_GT(dispatch_us("12"), dispatch_us("24")) << timing;
  }
}

// DeepSeek-V3's 8 expert groups are 8 nodes' experts at EP64: its gate's 4 groups bound the nodes a
// token reaches, so a rank sends at most 4 RDMA copies per token (one per node but its own).
TEST(cliCollective, GroupLimitedRoutingBoundsTheNodesATokenReaches) {
  auto rdma_bytes = [](bool group_limited) {
    std::vector<std::string> options{"--cluster", "h200-ib", "--nodes", "8", "--ep", "64", "--tokens", "256"};
    if (group_limited) options.push_back("--group-limited");
    const auto result = collective_json(options, "deepseek-v3");
    EXPECT_EQ(result["group_limited"], group_limited);
    return result["bytes_per_rank"]["rdma"].get<double>();
  };
  const double copy = 7168 * (1 + 4.0 / 128);  // FP8 with a scale per 128
  const double limited = rdma_bytes(true), free = rdma_bytes(false);
  EXPECT_LE(limited, 256 * 4 * copy);
  EXPECT_GT(free, 256 * 4 * copy) << "top-8 of 256 experts reaches about 5.3 of 8 nodes";
}

// Redundant slots: SGLang's trivial layout, so EP72 holds DeepSeek-V3's 256 experts in 288 slots.
TEST(cliCollective, RedundantSlotsLetTheEpSizeDivideTheSlots) {
  const auto result = collective_json(
      {"--cluster", "h100-ib", "--nodes", "9", "--ep", "72", "--redundant", "32", "--kernel", "low_latency"},
      "deepseek-v3");
  EXPECT_EQ(result["redundant"], 32);
  EXPECT_GT(result["dispatch_us"].get<double>(), 0);
}

// The combine's bytes are shown beside the dispatch's: the same copies back, in BF16 rather than FP8.
TEST(cliCollective, ShowsTheCombinesBytesToo) {
  const auto result = collective_json({"--kernel", "normal", "--tokens", "256"});
  const auto& dispatch = result["bytes_per_rank"];
  const auto& combine = result["combine_bytes_per_rank"];
  const double ratio = 2.0 / (1.0 + 4.0 / 128);  // BF16 against FP8 with a 4-byte scale per 128
  for (const char* level : {"nvlink", "rdma", "forwarded"})
    EXPECT_DOUBLE_EQ(combine[level].get<double>(), dispatch[level].get<double>() * ratio) << level;
  const CliResult text = run_semsim({"collective", "--model", "deepseek-v2-lite", "--tokens", "256"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("per rank and call: dispatch NVLink "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\n                   combine  NVLink "), std::string::npos) << text.out;
}

// calibration.extrapolate has its flag: a query far outside the measured grid is refused without it
// and priced with it.
TEST(cliCollective, ExtrapolateLetsTablesBeQueriedFarOutsideTheirGrid) {
  const std::vector<std::string> far{"collective", "--model",  "deepseek-v2-lite", "--kernel",
                                     "normal",     "--tokens", "1000000",          "--json"};
  const CliResult refused = run_semsim(far);
  EXPECT_EQ(refused.exit_code, 2) << describe(far, refused);
  EXPECT_NE(refused.err.find("far outside the measured grid"), std::string::npos) << refused.err;
  std::vector<std::string> extrapolated = far;
  extrapolated.push_back("--extrapolate");
  const CliResult r = run_semsim(extrapolated);
  ASSERT_EQ(r.exit_code, 0) << describe(extrapolated, r);
  EXPECT_GT(nlohmann::json::parse(r.out)["dispatch_us"].get<double>(), 0);
}

// `collective` prices an exchange exactly as a run's step does: the effective topology (a profile's
// scale-up efficiency halves NVLink here), the same overhead and the same timing. Every token picks
// all 8 experts (one per rank), so a one-step run of 8 prompts of 512 tokens, one per rank, moves
// the very traffic of `collective --tokens 512`; its steps.csv sums both MoE layers' exchanges.
TEST(cliCollective, TimesAnExchangeAsAOneStepRunOfTheSameTrafficDoes) {
  const TempDir tmp;
  std::ofstream(tmp / "every-expert.yaml")
      << "kind: model\nname: every-expert\nsource: test\nlayers: 2\nhidden: 2048\nvocabulary: 32000\n"
         "first_dense_layers: 0\nmoe_layer_interval: 1\ndense_ffn: 4096\ntied_embeddings: false\n"
         "experts: {routed: 8, shared: 0, top_k: 8, groups: 1, topk_groups: 1, ffn: 1408, shared_ffn: 1408}\n"
         "attention: {kind: gqa, heads: 16, kv_heads: 4, head_dim: 128}\n";
  std::ofstream(tmp / "half.yaml") << "kind: profile\nversion: 2\nname: half-nvlink\nsource: datasheet\n"
                                      "device: h200-sxm\nefficiency: {scaleup: 0.5}\n";
  std::ofstream(tmp / "run.yaml")
      << "schema: 1\nname: one-step\nmodel: " << tmp / "every-expert.yaml"
      << "\ncluster: h200-1x8\ncalibration: " << tmp / "half.yaml"
      << "\nparallelism: {ep: 8, attention: dp}\n"
         "workload: {requests: 8, seed: 1, concurrency: 8, input_len: {dist: fixed, "
         "value: 512}, output_len: {dist: fixed, value: 1}}\n";
  const std::vector<std::string> run_args{"run", tmp / "run.yaml", "--out", tmp / "out"};
  const CliResult run = run_semsim(run_args);
  ASSERT_EQ(run.exit_code, 0) << describe(run_args, run);
  const std::string steps = read_file(fs::path(tmp / "out") / "steps.csv");
  ASSERT_EQ(column_of(steps, "dispatch_s").size(), 1u) << steps;
  const double run_dispatch = column_of(steps, "dispatch_s")[0] / 2;
  const double run_combine = column_of(steps, "combine_s")[0] / 2;

  const auto timed = [&](const std::string& profile) {
    return collective_json(
        {"--cluster", "h200-1x8", "--kernel", "dedup", "--tokens", "512", "--calibration", profile},
        tmp / "every-expert.yaml");
  };
  const auto half = timed(tmp / "half.yaml");
  EXPECT_NEAR(half["dispatch_us"].get<double>(), run_dispatch * 1e6, 1e-6 * run_dispatch * 1e6);
  EXPECT_NEAR(half["combine_us"].get<double>(), run_combine * 1e6, 1e-6 * run_combine * 1e6);
  // The efficiency is what sets it: the datasheet profile's 0.8 moves the same bytes faster.
  EXPECT_LT(timed("datasheet")["dispatch_us"].get<double>(), 0.9 * half["dispatch_us"].get<double>());
}

TEST(cliCollective, BadOptionsExit2WithOneMessage) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--ep", "12", "--cluster", "h200-2x8"}, "--ep 12 does not divide the 64 routed experts"},
      {{"--ep", "16"}, "the cluster 'h200-1x8' holds groups of 2 to 8 GPUs"},
      {{"--routing", "zipf:x"}, "--routing 'zipf:x': expected uniform or zipf:S"},
      {{"--kernel", "nccl"}, "--kernel"},
      {{"--step", "mixed"}, "--step"},
      {{"--tokens", "4194304"}, "a dispatch routes at most 16777216 tokens per call"},
      {{"--cluster", "h200-9x9"}, "h200-9x9"},
      {{"--cluster", "h200-2x8", "--ep", "12", "--redundant", "4"},
       "--ep 12 does not divide the 64 routed experts + 4 redundant slots"},
      {{"--group-limited"}, "--group-limited: 'deepseek-v2-lite' has no group limit"},
      // Work without bound: refused at once rather than run for hours.
      {{"--repeat", "65536"}, "--repeat"},
      {{"--tokens", "65536", "--repeat", "200"},
       "--repeat 200 calls of --tokens 65536 over EP 8: 104857600 tokens to route, more than the 67108864"},
      // --sms where no DeepEP normal kernel times the call (was silently ignored).
      {{"--timing", "topology", "--sms", "12"},
       "--sms 12 sets the SMs of DeepEP's normal kernels, and --kernel normal runs none: --timing topology"},
      {{"--kernel", "low_latency", "--sms", "12"}, "DeepEP's low-latency kernel times this call"},
      {{"--kernel", "auto", "--step", "decode", "--sms", "12"},
       "DeepEP's low-latency kernel times this call"},
      {{"--kernel", "all_reduce", "--sms", "12"}, "--kernel all_reduce (NCCL's) runs none"},
  };
  for (const auto& [options, message] : cases) {
    std::vector<std::string> args{"collective", "--model", "deepseek-v2-lite"};
    args.insert(args.end(), options.begin(), options.end());
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_NE(r.err.find(message), std::string::npos) << describe(args, r);
    EXPECT_TRUE(r.out.empty()) << describe(args, r);
  }
}

}  // namespace
}  // namespace semsim::cli_test
