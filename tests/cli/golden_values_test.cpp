// Pinned values: the default scenario's key results, to the bit, and a few of its steps. A change of
// the engine that moves any of them fails here loudly; if the change is meant, say in its commit why
// the numbers moved and update them from a run of the new binary (scripts/repin-golden-values).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

struct GoldenRun {
  Json summary;
  std::vector<std::string> steps;  // steps.csv lines, header first
};

GoldenRun run_default(const TempDir& tmp, const std::vector<std::string>& sets) {
  std::vector<std::string> args{"run", "default", "--out", tmp / "out"};
  for (const std::string& set : sets) args.insert(args.end(), {"--set", set});
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  const fs::path out = tmp / "out";
  GoldenRun run{Json::parse(read_file(out / "summary.json")), {}};
  std::istringstream steps(read_file(out / "steps.csv"));
  for (std::string line; std::getline(steps, line);) run.steps.push_back(line);
  return run;
}

void expect_distribution(const Json& d, double mean, double p50, double p90, double p99) {
  EXPECT_EQ(d["mean"].get<double>(), mean);
  EXPECT_EQ(d["p50"].get<double>(), p50);
  EXPECT_EQ(d["p90"].get<double>(), p90);
  EXPECT_EQ(d["p99"].get<double>(), p99);
}

// `semsim run default`: DeepSeek-V2-Lite, 8 x H200, Attention-DP, EP8, 2,000 requests, on the
// embedded measured profile, DeepEP's auto dispatch: its kernels move and time the all-to-all, its
// low-latency buffers (256 tokens per rank) are reserved.
TEST(cliGoldenValues, DefaultScenario) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {});
  const Json& s = run.summary;
  EXPECT_EQ(s["calibration"], "h200-sxm-measured");
  EXPECT_EQ(s["dispatch_kernel"], "deepep auto (low_latency for decode-only steps, normal otherwise)");
  EXPECT_EQ(s["dispatch"], "auto");
  EXPECT_EQ(s["dispatch_buffer_bytes_per_device"].get<double>(), 272631040.0);
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 105.96712948216063);
  EXPECT_EQ(s["requests_completed"].get<int>(), 2000);
  EXPECT_EQ(s["throughput_tok_s"]["total"].get<double>(), 14495.060944899737);
  expect_distribution(s["ttft_s"], 0.010172568175207475, 0.009960142406018946, 0.01152750651260277,
                      0.015678227555342376);
  expect_distribution(s["tpot_s"], 0.0036974877527247967, 0.003692286689911414, 0.003895754419821943,
                      0.004089033091395655);
  expect_distribution(s["e2e_s"], 0.9530319451200292, 0.9516881980629925, 1.0040978923625268,
                      1.0551139638332585);
  EXPECT_EQ(s["lar"].get<double>(), 0.1250072669073647);
  EXPECT_EQ(s["a2a_bytes"]["scale_up"].get<double>(), 1080078126656.0);
  EXPECT_EQ(s["imbalance"].get<double>(), 1.614640423895965);
  EXPECT_EQ(s["steps"].get<int>(), 28933);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.003661419311827795);
  EXPECT_EQ(s["phase_seconds"]["attention"].get<double>(), 43.38300632238147);
  EXPECT_EQ(s["phase_seconds"]["dispatch"].get<double>(), 6.26760721685826);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 42.66920848347717);
  EXPECT_EQ(s["phase_seconds"]["combine"].get<double>(), 7.423867497719802);
  EXPECT_EQ(s["phase_seconds"]["other"].get<double>(), 6.192155428676904);
  EXPECT_EQ(s["a2a_share_of_moe_time"].get<double>(), 0.1372665757644025);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 13.691474714578458);
  ASSERT_EQ(run.steps.size(), 28934u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.00754343757,0.0021480831,0.0011981725,0.00240933334,0.00148509339,0."
            "000302755232,512,0,327552704,0,0.127116,1.567909,0,0,0,0,0.00268326589,0");
  EXPECT_EQ(run.steps[100],
            "99,0.325678994,0.00295149601,0.00141341109,0.000145711335,0.00101971875,0.000167257509,0."
            "000205397324,0,5,4159360,0,0.141026,2.020513,0,0,0,0,0.000312968844,0");
}

// The default with NCCL-style dedup dispatch on the datasheet profile (the roofline, the copies over
// the topology): the numbers the engine gave before measured profiles existed.
TEST(cliGoldenValues, DefaultScenarioOnTheDatasheetProfile) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {"calibration=datasheet", "policies.dispatch=dedup"});
  const Json& s = run.summary;
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 105.88617955245901);
  EXPECT_EQ(s["requests_completed"].get<int>(), 2000);
  EXPECT_EQ(s["throughput_tok_s"]["total"].get<double>(), 14506.142411522385);
  expect_distribution(s["ttft_s"], 0.007192478850256082, 0.007162128446605465, 0.008376904853868083,
                      0.010406536750275634);
  expect_distribution(s["tpot_s"], 0.0031894842725884646, 0.0031911065274935475, 0.0032999696183206233,
                      0.0033838142078351898);
  expect_distribution(s["e2e_s"], 0.8205109683603167, 0.8206164594439898, 0.848574860151966,
                      0.869749463199996);
  EXPECT_EQ(s["lar"].get<double>(), 0.1250072669073647);
  EXPECT_EQ(s["a2a_bytes"]["scale_up"].get<double>(), 981452617728.0);
  EXPECT_EQ(s["imbalance"].get<double>(), 1.6221151673185572);
  EXPECT_EQ(s["steps"].get<int>(), 33447);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.003164854695933884);
  EXPECT_EQ(s["phase_seconds"]["attention"].get<double>(), 29.267495140004307);
  EXPECT_EQ(s["phase_seconds"]["dispatch"].get<double>(), 11.094845858666718);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 47.280151669338835);
  EXPECT_EQ(s["phase_seconds"]["combine"].get<double>(), 11.714265180444297);
  EXPECT_EQ(s["phase_seconds"]["other"].get<double>(), 6.49813716644645);
  EXPECT_EQ(s["a2a_share_of_moe_time"].get<double>(), 0.22956778716452345);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 22.809111039110388);
  EXPECT_EQ(s["comm_hidden_seconds"].get<double>(), 0.0);
  ASSERT_EQ(run.steps.size(), 33448u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.00551414841,0.00167761913,0.000621542933,0.00200932159,0.000912325689,0."
            "000293339065,512,0,327552704,0,0.127116,1.567909,0,0,0,0,0.00153386862,0");
  EXPECT_EQ(run.steps[100],
            "99,0.285253444,0.00253493182,0.000817258,0.000312715733,0.0009038696,0.000313388089,0."
            "0001877004,0,3,1961728,0,0.096154,2.051282,0,0,0,0,0.000626103822,0");
  EXPECT_EQ(run.steps[1000],
            "999,3.06290019,0.00299466327,0.000823449467,0.0003135136,0.001354738,0.000314935467,0."
            "000188026733,0,13,8349760,0,0.113412,1.731755,0,0,0,0,0.000628449067,0");
}

// The datasheet dedup run with two-batch overlap, 300 requests: micro-batches, hidden communication, SM
// slowdown.
TEST(cliGoldenValues, DefaultScenarioWithTwoBatchOverlap) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {"calibration=datasheet", "policies.dispatch=dedup",
                                          "serving.overlap=two_batch", "workload.requests=300"});
  const Json& s = run.summary;
  EXPECT_EQ(s["overlap"], "two_batch");
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 17.478963455490728);
  EXPECT_EQ(s["steps"].get<int>(), 3817);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.004571045041203921);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 9.346956957282822);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 0.2912165864888882);
  EXPECT_EQ(s["comm_hidden_seconds"].get<double>(), 4.655023463367389);
  expect_distribution(s["tpot_s"], 0.004682550086901178, 0.004679334239942429, 0.004913299165243397,
                      0.004965213751215148);
  ASSERT_EQ(run.steps.size(), 3818u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.00636003672,0.00255805006,0,0.00345456258,2.36736e-05,0.000323750478,512,0,"
            "327552704,0,0.127116,1.567909,0,0,0,0,2.36736e-05,0.00213419502");
  EXPECT_EQ(run.steps[200],
            "199,0.67097587,0.00426957188,0.00161182948,4.81584e-05,0.00222209813,1.20682667e-05,0."
            "0003754176,0,14,8914688,0,0.122711,1.648352,0,0,0,0,6.02266667e-05,0.00119286044");
}

}  // namespace
}  // namespace semsim::cli_test
