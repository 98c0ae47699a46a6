// Pinned values: the default scenario's key results, to the bit, and a few of its steps. A change of
// the engine that moves any of them fails here loudly; if the change is meant, say in its commit why
// the numbers moved and update them from a run of the new binary.
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
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 105.85038525347107);
  EXPECT_EQ(s["requests_completed"].get<int>(), 2000);
  EXPECT_EQ(s["throughput_tok_s"]["total"].get<double>(), 14511.047799418671);
  expect_distribution(s["ttft_s"], 0.009124123171120423, 0.008949251042942308, 0.010289195525932727,
                      0.014074283061754827);
  expect_distribution(s["tpot_s"], 0.003158751695304972, 0.0031552091826314637, 0.003333183681238995,
                      0.003512924204153647);
  expect_distribution(s["e2e_s"], 0.8146058054738886, 0.8134389476095123, 0.8589167319648168,
                      0.9046132554033839);
  EXPECT_EQ(s["lar"].get<double>(), 0.1250072669073647);
  EXPECT_EQ(s["a2a_bytes"]["scale_up"].get<double>(), 1081051205824.0);
  EXPECT_EQ(s["imbalance"].get<double>(), 1.6227711697255374);
  EXPECT_EQ(s["steps"].get<int>(), 33887);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.0031227048933457208);
  EXPECT_EQ(s["phase_seconds"]["attention"].get<double>(), 41.59949780127485);
  EXPECT_EQ(s["phase_seconds"]["dispatch"].get<double>(), 7.0022759454331);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 42.253019766774386);
  EXPECT_EQ(s["phase_seconds"]["combine"].get<double>(), 8.274095571243091);
  EXPECT_EQ(s["phase_seconds"]["other"].get<double>(), 6.690211636081018);
  EXPECT_EQ(s["a2a_share_of_moe_time"].get<double>(), 0.15410615066632574);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 15.276371516676313);
  ASSERT_EQ(run.steps.size(), 33888u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.00681453183,0.00176131404,0.0011981725,0.00209565853,0.00148509339,"
            "0.000274293366,512,0,327552704,0,0.127116,1.567909,0,0,0,0,0.00268326589,0");
  EXPECT_EQ(run.steps[100],
            "99,0.277491278,0.00237414927,0.00116215923,0.000145710659,0.000708122656,0.000167270971,"
            "0.000190885758,0,3,2625984,0,0.096154,2.068376,0,0,0,0,0.00031298163,0");
}

// The default with NCCL-style dedup dispatch on the datasheet profile (the roofline, the copies over
// the topology): the numbers the engine gave before measured profiles existed.
TEST(cliGoldenValues, DefaultScenarioOnTheDatasheetProfile) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {"calibration=datasheet", "policies.dispatch=dedup"});
  const Json& s = run.summary;
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 105.73341734045894);
  EXPECT_EQ(s["requests_completed"].get<int>(), 2000);
  EXPECT_EQ(s["throughput_tok_s"]["total"].get<double>(), 14527.10068997504);
  expect_distribution(s["ttft_s"], 0.006078362561321949, 0.006007761873451756, 0.00706759647305617,
                      0.008920008355187345);
  expect_distribution(s["tpot_s"], 0.0025607489948691123, 0.002567129549985, 0.002679287310373637,
                      0.0027549959999079634);
  expect_distribution(s["e2e_s"], 0.6590693562529439, 0.6604952013912992, 0.6894268773832961,
                      0.7097528083140371);
  EXPECT_EQ(s["lar"].get<double>(), 0.1250072669073647);
  EXPECT_EQ(s["a2a_bytes"]["scale_up"].get<double>(), 981452617728.0);
  EXPECT_EQ(s["imbalance"].get<double>(), 1.6343587069167251);
  EXPECT_EQ(s["steps"].get<int>(), 41836);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.002526583153311422);
  EXPECT_EQ(s["phase_seconds"]["attention"].get<double>(), 18.424234524844987);
  EXPECT_EQ(s["phase_seconds"]["dispatch"].get<double>(), 13.718796288000263);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 52.175844684791684);
  EXPECT_EQ(s["phase_seconds"]["combine"].get<double>(), 14.344399103999866);
  EXPECT_EQ(s["phase_seconds"]["other"].get<double>(), 7.038858200299838);
  EXPECT_EQ(s["a2a_share_of_moe_time"].get<double>(), 0.284434056190697);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 28.063195391998647);
  EXPECT_EQ(s["comm_hidden_seconds"].get<double>(), 0.0);
  ASSERT_EQ(run.steps.size(), 41837u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.00476181134,0.00112583673,0.000621542933,0.00184674879,0.000912325689,"
            "0.000255357198,512,0,327552704,0,0.127116,1.567909,0,0,0,0,0.00153386862,0");
  EXPECT_EQ(run.steps[100],
            "99,0.229361841,0.00199104866,0.0004009928,0.000312715733,0.0008002832,0.000313388089,"
            "0.000163668833,0,3,1998976,0,0.096154,2.222222,0,0,0,0,0.000626103822,0");
  EXPECT_EQ(run.steps[1000],
            "999,2.40636644,0.00241221732,0.000406287267,0.000313366933,0.0012139728,0.000314651022,"
            "0.0001639393,0,10,6419072,0,0.123077,1.574359,0,0,0,0,0.000628017956,0");
}

// The datasheet dedup run with two-batch overlap, 300 requests: micro-batches, hidden communication, SM
// slowdown.
TEST(cliGoldenValues, DefaultScenarioWithTwoBatchOverlap) {
  TempDir tmp;
  const GoldenRun run = run_default(tmp, {"calibration=datasheet", "policies.dispatch=dedup",
                                          "serving.overlap=two_batch", "workload.requests=300"});
  const Json& s = run.summary;
  EXPECT_EQ(s["overlap"], "two_batch");
  EXPECT_EQ(s["simulated_seconds"].get<double>(), 17.20833851589489);
  EXPECT_EQ(s["steps"].get<int>(), 5139);
  EXPECT_EQ(s["mean_step_seconds"].get<double>(), 0.003342489586047139);
  EXPECT_EQ(s["phase_seconds"]["experts"].get<double>(), 10.84688944783644);
  EXPECT_EQ(s["comm_exposed_seconds"].get<double>(), 1.0418550364444443);
  EXPECT_EQ(s["comm_hidden_seconds"].get<double>(), 5.375441211551352);
  expect_distribution(s["tpot_s"], 0.003464465322234333, 0.0035068626551155984, 0.003753995120332988,
                      0.0038229794548434288);
  ASSERT_EQ(run.steps.size(), 5140u);
  EXPECT_EQ(run.steps[1],
            "0,0.0312845332,0.00506769966,0.00159026766,0,0.00318798978,2.36736e-05,0.000265768611,512,0,"
            "327552704,0,0.127116,1.567909,0,0,0,0,2.36736e-05,0.00213419502");
  EXPECT_EQ(run.steps[200],
            "199,0.476274204,0.00308936129,0.000702607306,0.000144434133,0.00189085283,2.41251556e-05,"
            "0.000327341867,0,11,6959168,0,0.139860,1.682984,0,0,0,0,0.000168559289,0.00108416569");
}

}  // namespace
}  // namespace semsim::cli_test
