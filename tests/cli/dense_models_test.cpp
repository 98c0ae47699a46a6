// Dense models (no experts: qwen3-32b, llama-3.1-70b) end to end: runs in both attention modes and
// network fidelities with no routing figures, `check` and `list`, and the MoE-only inputs and
// commands refusing them with one error naming the model (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

using Json = nlohmann::json;

const std::vector<std::string> kTinyDense{
    "--set", "model=qwen3-32b", "--set", "workload.requests=12", "--set", "workload.output_len.value=8"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Each steps.csv row's value in column `name`.
std::vector<std::string> column(const std::string& csv, const std::string& name) {
  const std::vector<std::string> lines = split_lines(csv);
  auto fields = [](const std::string& line) {
    std::vector<std::string> out;
    std::string::size_type begin = 0;
    for (std::string::size_type comma; (comma = line.find(',', begin)) != std::string::npos;
         begin = comma + 1)
      out.push_back(line.substr(begin, comma - begin));
    out.push_back(line.substr(begin));
    return out;
  };
  const std::vector<std::string> header = fields(lines.at(0));
  const auto at = std::find(header.begin(), header.end(), name) - header.begin();
  std::vector<std::string> values;
  for (std::size_t i = 1; i < lines.size(); ++i) values.push_back(fields(lines[i]).at(at));
  return values;
}

struct DenseRun {
  const char* attention;
  const char* fidelity;
};

class DenseModelRun : public testing::TestWithParam<DenseRun> {};

TEST_P(DenseModelRun, CompletesWithNoRoutingFigures) {
  TempDir tmp;
  const std::vector<std::string> args =
      with(with({"run", "default"}, kTinyDense),
           {"--set", std::string("parallelism.attention=") + GetParam().attention, "--set",
            std::string("network.fidelity=") + GetParam().fidelity, "--set", "outputs.layers_csv=true",
            "--timeline", tmp / "timeline.json", "--out", tmp / "out"});
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("Dense model"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Local activation rate"), std::string::npos) << r.out;

  const Json j = Json::parse(read_file(tmp.path() / "out" / "summary.json"));
  EXPECT_EQ(j["model_kind"], "dense");
  EXPECT_EQ(j["requests_completed"], 12);
  EXPECT_TRUE(j["lar"].is_null());
  EXPECT_TRUE(j["imbalance"].is_null());
  EXPECT_TRUE(j["a2a_share_of_moe_time"].is_null());
  EXPECT_EQ(j["dispatch_kernel"], "none (dense model)");
  EXPECT_EQ(j["expert_slots"]["physical_per_layer"], 0);
  for (const char* phase : {"attention", "dispatch", "experts", "combine"})
    EXPECT_EQ(j["phase_seconds"][phase], 0.0) << phase;
  EXPECT_GT(j["phase_seconds"]["other"].get<double>(), 0.0);
  // Attention-TP all-reduces every layer's two outputs; Attention-DP ranks exchange nothing.
  EXPECT_EQ(j["tp_collective_bytes"].get<double>() > 0, std::string(GetParam().attention) == "tp");

  const std::string steps = read_file(tmp.path() / "out" / "steps.csv");
  const std::vector<std::string> lar = column(steps, "lar"), imbalance = column(steps, "imbalance");
  ASSERT_FALSE(lar.empty());
  for (std::size_t i = 0; i < lar.size(); ++i) {
    EXPECT_EQ(lar[i], "0.000000") << i;
    EXPECT_EQ(imbalance[i], "0.000000") << i;
  }
  EXPECT_EQ(split_lines(read_file(tmp.path() / "out" / "layers.csv")).size(), 1u);  // the header alone
  EXPECT_FALSE(read_file(tmp.path() / "timeline.json").empty());
}

INSTANTIATE_TEST_SUITE_P(cli, DenseModelRun,
                         testing::Values(DenseRun{"dp", "bottleneck"}, DenseRun{"tp", "bottleneck"},
                                         DenseRun{"dp", "flow"}, DenseRun{"tp", "flow"}),
                         [](const testing::TestParamInfo<DenseRun>& info) {
                           return std::string(info.param.attention) + "_" + info.param.fidelity;
                         });

TEST(cliDenseModels, ListAndCheckSayDense) {
  const CliResult list = run_semsim({"list", "models"});
  ASSERT_EQ(list.exit_code, 0) << describe({"list", "models"}, list);
  for (const char* model : {"qwen3-32b", "llama-3.1-70b"}) {
    const auto line = list.out.find(std::string(model) + " ");
    ASSERT_NE(line, std::string::npos) << list.out;
    EXPECT_NE(list.out.substr(line, list.out.find('\n', line) - line).find("(dense)"), std::string::npos)
        << list.out;
  }
  const std::vector<std::string> args = with({"check", "default"}, kTinyDense);
  const CliResult check = run_semsim(args);
  ASSERT_EQ(check.exit_code, 0) << describe(args, check);
  EXPECT_NE(check.out.find("model qwen3-32b (64 layers, dense FFN 25600)"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("expert slots: none (dense model)"), std::string::npos) << check.out;
}

// One error at the key or option that brought in what a dense model cannot use, naming the model.
void expect_refused(const std::vector<std::string>& args, const std::string& where) {
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 2) << describe(args, r);
  EXPECT_NE(r.err.find("model 'qwen3-32b' is dense (no experts)"), std::string::npos) << describe(args, r);
  EXPECT_NE(r.err.find(where), std::string::npos) << describe(args, r);
  EXPECT_EQ(split_lines(r.err).size(), 1u) << describe(args, r);
}

TEST(cliDenseModels, ScenariosRefuseWhatGoesByRouting) {
  TempDir tmp;
  const std::vector<std::string> run = with({"run", "default", "--out", tmp / "out"}, kTinyDense);
  expect_refused(with(run, {"--set", "profile=" + tmp.path().string()}), "profile:");
  expect_refused(with(run, {"--set", "policies.placement=eplb"}), "policies.placement:");
  expect_refused(with(run, {"--set", "policies.request_scheduling=semmoe_dp"}),
                 "policies.request_scheduling:");
  expect_refused(
      with(run, {"--set", "parallelism.attention=tp", "--set", "policies.token_scheduling=semmoe_tp"}),
      "policies.token_scheduling:");
  expect_refused(with(run, {"--export-steps", tmp / "steps.semexport"}), "--export-steps");
  EXPECT_FALSE(fs::exists(tmp.path() / "out"));
}

TEST(cliDenseModels, MoeOnlyCommandsRefuseDenseModels) {
  TempDir tmp;
  expect_refused({"place", "--policy", "contiguous", "--profile", tmp / "none", "--ep", "8", "--model",
                  "qwen3-32b", "--out", tmp / "p.semplace"},
                 "semsim place needs a MoE model");
  expect_refused({"trace", "import", "--from", "sglang", tmp / "none", "--model", "qwen3-32b", "--out",
                  tmp / "t.semtrace"},
                 "semsim trace import needs a MoE model");
  expect_refused({"collective", "--model", "qwen3-32b", "--ep", "8", "--tokens", "128"},
                 "semsim collective needs a MoE model");
  expect_refused(
      with({"trace", "synth", "default", "--requests", "2", "--out", tmp / "s.semtrace"}, kTinyDense),
      "semsim trace synth needs a MoE model");
  // A trace whose header names a dense preset (the fuzz corpus's Mixtral trace, renamed).
  std::string trace =
      read_file(fs::path(SEMSIM_SOURCE_DIR) / "tests/fuzz/corpus/text_trace/mixtral-3-requests.semtrace.txt");
  trace.replace(trace.find("model mixtral-8x7b"), 18, "model qwen3-32b");
  const std::string file = tmp / "dense.semtrace.txt";
  std::ofstream(file) << trace;
  expect_refused({"profile", file, "--split", "0.5", "--out", tmp / "profile"},
                 "semsim profile needs a MoE model");
  expect_refused({"trace", "fit", file, "--split", "0.5", "--out", tmp / "fit"},
                 "semsim trace fit needs a MoE model");
  expect_refused({"place", "bound", "--trace", file, "--ep", "8"}, "semsim place bound needs a MoE model");
}

}  // namespace
}  // namespace semsim::cli_test
