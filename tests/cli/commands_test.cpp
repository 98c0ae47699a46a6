// The informational subcommands and `check` on valid input: --version, --help, list, check default,
// and every model preset on the H200 clusters it fits.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"

namespace semsim::cli_test {
namespace {

bool has_line_starting_with(const std::string& text, const std::string& word) {
  for (const auto& line : split_lines(text))
    if (line == word || line.starts_with(word + " ")) return true;
  return false;
}

TEST(cliCommands, VersionPrintsTheVersion) {
  const CliResult r = run_semsim({"--version"});
  EXPECT_EQ(r.exit_code, 0) << describe({"--version"}, r);
  // The version, and in a git checkout its commit: "semsim 0.1.0 (git 62d224d12ab3)".
  EXPECT_TRUE(r.out == "semsim 0.1.0\n" || r.out.starts_with("semsim 0.1.0 (git ")) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(cliCommands, HelpListsTheSubcommands) {
  const CliResult r = run_semsim({"--help"});
  EXPECT_EQ(r.exit_code, 0) << describe({"--help"}, r);
  for (const char* word : {"run", "check", "list", "--version"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << " missing from --help:\n" << r.out;
}

TEST(cliCommands, SubcommandHelpExits0) {
  for (const char* sub : {"run", "check", "list"}) {
    const CliResult r = run_semsim({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << describe({sub, "--help"}, r);
    EXPECT_NE(r.out.find("--help"), std::string::npos) << r.out;
  }
}

TEST(cliCommands, ListModelsHasAllNinePresets) {
  const CliResult r = run_semsim({"list", "models"});
  ASSERT_EQ(r.exit_code, 0) << describe({"list", "models"}, r);
  for (const char* model :
       {"deepseek-v2-lite", "deepseek-v3", "qwen3-30b-a3b", "qwen3-235b-a22b", "mixtral-8x7b", "olmoe-1b-7b",
        "gpt-oss-120b", "llama-4-maverick", "moonlight-16b-a3b"})
    EXPECT_TRUE(has_line_starting_with(r.out, model)) << model << " missing from:\n" << r.out;
}

TEST(cliCommands, ListClustersHasTheH200AndH100Presets) {
  const CliResult r = run_semsim({"list", "clusters"});
  ASSERT_EQ(r.exit_code, 0) << describe({"list", "clusters"}, r);
  for (const char* cluster : {"h200-1x8", "h200-2x8", "h200-32x8-rail", "h100-pcie-8x"})
    EXPECT_TRUE(has_line_starting_with(r.out, cluster)) << cluster << " missing from:\n" << r.out;
}

// The presets that take a node count, with their range, domain size, device and fabrics.
TEST(cliCommands, ListClustersShowsEachPresetsNodeRange) {
  const CliResult r = run_semsim({"list", "clusters"});
  ASSERT_EQ(r.exit_code, 0) << describe({"list", "clusters"}, r);
  const auto lines = split_lines(r.out);
  auto line_of = [&](const std::string& name) {
    for (const auto& line : lines)
      if (line.starts_with(name + " ")) return line;
    return std::string();
  };
  auto squeezed = [](const std::string& line) {  // one space between columns
    std::string out;
    for (const char c : line)
      if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
    return out;
  };
  for (const auto& [name, shown] : std::vector<std::pair<std::string, std::string>>{
           {"h800-ib", "h800-ib nodes 1-2048 (default 1) x 8 h800-sxm fabric rail | fat_tree"},
           {"h100-ib", "h100-ib nodes 1-256 (default 1) x 8 h100-sxm fabric rail | fat_tree"},
           {"h200-ib", "h200-ib nodes 1-256 (default 1) x 8 h200-sxm fabric rail | fat_tree"},
           {"gb200-nvl72", "gb200-nvl72 nodes 1-28 (default 1) x 72 gb200 fabric rail | fat_tree"},
           {"cloudmatrix384", "cloudmatrix384 nodes 1-5 (default 1) x 384 ascend-910c fabric fat_tree"},
           {"h200-2x8", "h200-2x8 nodes 2 (fixed) x 8 h200-sxm fabric fat_tree"},
           {"h200-1x8", "h200-1x8 nodes 1 (fixed) x 8 h200-sxm fabric none"}})
    EXPECT_EQ(squeezed(line_of(name)), shown) << r.out;
}

TEST(cliCommands, ListHardwareHasTheH200) {
  const CliResult r = run_semsim({"list", "hardware"});
  ASSERT_EQ(r.exit_code, 0) << describe({"list", "hardware"}, r);
  EXPECT_TRUE(has_line_starting_with(r.out, "h200-sxm")) << r.out;
}

TEST(cliCommands, ListPoliciesHasTheDefaults) {
  const CliResult r = run_semsim({"list", "policies"});
  ASSERT_EQ(r.exit_code, 0) << describe({"list", "policies"}, r);
  // Policy lines are indented under their kind ("placement:", "dispatch:", ...).
  for (const char* kind :
       {"placement:", "request_scheduling:", "token_scheduling:", "dispatch:", "replica_choice:"})
    EXPECT_TRUE(has_line_starting_with(r.out, kind)) << kind << " missing from:\n" << r.out;
  for (const char* policy : {"contiguous", "round_robin", "dedup"})
    EXPECT_NE(r.out.find("  " + std::string(policy) + " "), std::string::npos) << policy << " missing from:\n"
                                                                               << r.out;
}

TEST(cliCommands, CheckDefaultPasses) {
  const CliResult r = run_semsim({"check", "default"});
  EXPECT_EQ(r.exit_code, 0) << describe({"check", "default"}, r);
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(r.out.starts_with("<default>: ok\n")) << r.out;
  EXPECT_NE(r.out.find("deepseek-v2-lite"), std::string::npos);
  EXPECT_NE(r.out.find("h200-1x8"), std::string::npos);
  EXPECT_NE(r.out.find("EP8"), std::string::npos);
}

TEST(cliCommands, CheckTheDefaultScenarioFileByPath) {
  const std::string file = (fs::path(SEMSIM_SOURCE_DIR) / "sim" / "scenarios" / "default.yaml").string();
  const CliResult r = run_semsim({"check", file});
  EXPECT_EQ(r.exit_code, 0) << describe({"check", file}, r);
  EXPECT_TRUE(r.out.starts_with(file + ": ok\n")) << r.out;
}

TEST(cliCommands, CheckAppliesOverrides) {
  const std::vector<std::string> args{"check", "default",
                                      "--set", "workload.requests=77",
                                      "--set", "policies.request_scheduling=shortest_queue"};
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_NE(r.out.find("77 requests"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("request scheduling shortest_queue"), std::string::npos) << r.out;
}

// A key of the layout in full set on a shorthand scenario (the default's `{ep: 8, attention: dp}`)
// expands the shorthand first: it was "unknown key 'moe'".
TEST(cliCommands, SetOfTheLayoutInFullExpandsTheShorthand) {
  const std::vector<std::string> moe_tp{"check", "default", "--set", "parallelism.moe.tp=8"};
  const CliResult r = run_semsim(moe_tp);
  ASSERT_EQ(r.exit_code, 0) << describe(moe_tp, r);
  EXPECT_NE(r.out.find("experts TP8 (a slice of every expert per device) attention dp"), std::string::npos)
      << r.out;
  const std::vector<std::string> attention_tp{
      "check", "default", "--set", "parallelism.attention.tp=8", "--set", "parallelism.attention.dp=1"};
  const CliResult tp = run_semsim(attention_tp);
  ASSERT_EQ(tp.exit_code, 0) << describe(attention_tp, tp);
  EXPECT_NE(tp.out.find("attention tp"), std::string::npos) << tp.out;
}

// What cannot be expanded or mixed is refused with what to write instead.
TEST(cliCommands, SetMixingShorthandAndLayoutSaysWhatToWrite) {
  TempDir tmp;
  const std::string file = tmp / "extra-keys.yaml";
  std::ofstream(file)
      << "model: deepseek-v2-lite\ncluster: h200-1x8\nparallelism: {ep: 8, attention: dp, dp: 8}\n";
  const std::vector<std::vector<std::string>> cases{
      {"check", file, "--set", "parallelism.moe.tp=8"},
      {"check", "default", "--set", "parallelism.moe.tp=8", "--set", "parallelism.attention=tp"},
      {"check", "default", "--set", "parallelism.attention.dp=8", "--set", "parallelism.ep=4"}};
  for (const auto& args : cases) {
    const CliResult r = run_semsim(args);
    EXPECT_EQ(r.exit_code, 2) << describe(args, r);
    EXPECT_EQ(split_lines(r.err).size(), 1u) << describe(args, r);
    EXPECT_NE(r.err.find("--set 'parallelism={"), std::string::npos) << describe(args, r);
    EXPECT_EQ(r.err.find("unknown key"), std::string::npos) << describe(args, r);
  }
}

// Every model preset on each H200 cluster, with an EP size that divides its experts and fits.
struct ModelOnCluster {
  std::string model;
  std::string cluster;
  int ep;
};

void PrintTo(const ModelOnCluster& p, std::ostream* os) {
  *os << p.model << " on " << p.cluster << " EP" << p.ep;
}

class ModelPresetTest : public testing::TestWithParam<ModelOnCluster> {};

TEST_P(ModelPresetTest, CheckPasses) {
  const ModelOnCluster& p = GetParam();
  const std::vector<std::string> args{"check", "default",
                                      "--set", "model=" + p.model,
                                      "--set", "cluster=" + p.cluster,
                                      "--set", "parallelism.ep=" + std::to_string(p.ep)};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
  // Nothing on stderr but, where the EP group leaves nodes idle, the warning that says so.
  const auto warnings = split_lines(r.err);
  EXPECT_LE(warnings.size(), 1u) << r.err;
  for (const std::string& warning : warnings)
    EXPECT_TRUE(warning.starts_with("warning: cluster '" + p.cluster + "' has ")) << warning;
  EXPECT_NE(r.out.find("model " + p.model + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cluster " + p.cluster + " "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("EP" + std::to_string(p.ep) + " "), std::string::npos) << r.out;
}

std::vector<ModelOnCluster> model_cluster_grid() {
  const std::vector<std::string> models{"deepseek-v2-lite", "qwen3-30b-a3b",     "qwen3-235b-a22b",
                                        "mixtral-8x7b",     "olmoe-1b-7b",       "gpt-oss-120b",
                                        "llama-4-maverick", "moonlight-16b-a3b", "deepseek-v3"};
  std::vector<ModelOnCluster> grid;
  for (const auto& model : models) {
    // DeepSeek-V3 in bf16 needs EP16 to fit (198 GB of weights per device at EP8); Mixtral has 8 experts.
    const bool big = model == "deepseek-v3";
    const int wide_ep = model == "mixtral-8x7b" ? 8 : 16;
    if (!big) grid.push_back({model, "h200-1x8", 8});
    grid.push_back({model, "h200-2x8", wide_ep});
    grid.push_back({model, "h200-32x8-rail", wide_ep});
  }
  grid.push_back({"deepseek-v3", "h200-32x8-rail", 64});
  return grid;
}

INSTANTIATE_TEST_SUITE_P(cli, ModelPresetTest, testing::ValuesIn(model_cluster_grid()),
                         [](const testing::TestParamInfo<ModelOnCluster>& info) {
                           std::string name = info.param.model + "_on_" + info.param.cluster + "_ep" +
                                              std::to_string(info.param.ep);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// DeepSeek-V3 fits one 8xH200 node with FP8 weights but not with BF16 (the corpus has the BF16 case).
TEST(cliCommands, DeepSeekV3FitsOneH200NodeWithFp8Weights) {
  const std::vector<std::string> args{
      "check", "default", "--set", "model=deepseek-v3", "--set", "precision.weights=fp8"};
  const CliResult r = run_semsim(args);
  EXPECT_EQ(r.exit_code, 0) << describe(args, r);
}

// A short run of every preset on one node (DeepSeek-V3 on two): no crash, every request completes.
class ModelPresetRunTest : public testing::TestWithParam<std::string> {};

TEST_P(ModelPresetRunTest, ShortRunCompletes) {
  const std::string& model = GetParam();
  TempDir tmp;
  std::vector<std::string> args{
      "run", "default", "--set", "model=" + model, "--set", "workload.requests=8", "--out", tmp / "out"};
  if (model == "deepseek-v3")
    args.insert(args.end(), {"--set", "cluster=h200-2x8", "--set", "parallelism.ep=16"});
  const CliResult r = run_semsim(args);
  ASSERT_EQ(r.exit_code, 0) << describe(args, r);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("8 of 8"), std::string::npos) << r.out;
  for (const char* file : {"summary.json", "requests.csv", "steps.csv"})
    EXPECT_TRUE(fs::is_regular_file(tmp / ("out/" + std::string(file)))) << file;
}

INSTANTIATE_TEST_SUITE_P(cli, ModelPresetRunTest,
                         testing::Values("deepseek-v2-lite", "deepseek-v3", "qwen3-30b-a3b",
                                         "qwen3-235b-a22b", "mixtral-8x7b", "olmoe-1b-7b", "gpt-oss-120b",
                                         "llama-4-maverick", "moonlight-16b-a3b"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace semsim::cli_test
