// The step export format (calibrate/replay/step_export.hpp): round trip, located errors on corrupt files,
// and the replay planner (calibrate/replay/replay_plan.hpp) against hand-computed plans.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "calibrate/replay/replay_plan.hpp"
#include "calibrate/replay/step_export.hpp"
#include "models/input_error.hpp"
#include "tests/step_export_fixture.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;
using test::two_rank_export;

class StepExportFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("semsim-step-export-" + std::to_string(::getpid()) + ".txt");
  }
  void TearDown() override { fs::remove(path_); }
  std::string write(const StepExport& d) {
    std::ostringstream text;
    write_step_export(text, d);
    put(text.str());
    return text.str();
  }
  void put(const std::string& text) { std::ofstream(path_) << text; }
  std::string error_reading() {
    try {
      read_step_export(path_.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  // The export with line `line` (1-based) replaced.
  void put_with_line(const std::string& text, int line, const std::string& replacement) {
    std::istringstream in(text);
    std::string out, l;
    for (int n = 1; std::getline(in, l); ++n) out += (n == line ? replacement : l) + "\n";
    put(out);
  }
  fs::path path_;
};

TEST_F(StepExportFile, RoundTripsExactlyAndWritesTheSameBytes) {
  const StepExport d = two_rank_export();
  const std::string text = write(d);
  const StepExport back = read_step_export(path_.string());
  EXPECT_EQ(back, d);
  std::ostringstream again;
  write_step_export(again, back);
  EXPECT_EQ(again.str(), text);
  EXPECT_EQ(text.rfind("semsim-steps version=1\n", 0), 0u);
}

TEST_F(StepExportFile, CorruptLinesAreNamedByFileLineAndKey) {
  const std::string text = write(two_rank_export());
  // Line 1 format, 3 run, 4 model, 5-12 gemm, 13 step, 14-15 rank, 16 layer, 17-18 experts.
  const std::string at = path_.string() + ":";
  struct Case {
    int line;
    std::string replacement, expected;
  };
  const Case cases[] = {
      {1, "semsim-steps version=2", at + "1: semsim-steps version: version 2 is not one"},
      {13,
       "step index=3 start_s=0.25 end_s=0.2561 attention_s=x dispatch_s=0 experts_s=0 combine_s=0 other_s=0",
       at + "13: step attention_s: 'x' is not a number"},
      {14, "rank chunks=1+9,1x20 logits=3 other_s=0", at + "14: rank chunks: '1x20' is not NEW+PRIOR"},
      {16, "layer layer=1 dispatch_s=0 combine_s=0 dispatch_bytes=1,2,3 combine_bytes=0,0,0,0",
       at + "16: layer dispatch_bytes: 3 values; expected 4"},
      {17, "experts ids=0,9 tokens=5,3 attention_s=0 experts_s=0",
       at + "17: experts ids: 9 is outside [0, 3]"},
      {17, "experts ids=0,1 tokens=5,3 attention_s=0 experts_s=0 speed=3",
       at + "17: experts speed: unknown key"},
      {18, "", at + "16: layer 1: 1 'experts' lines before line 18; expected 2"},
      {15, "rank chunks= logits=0", at + "15: rank other_s: missing"},
      {5, "gemm op=moe n=1 k=1", at + "5: gemm op: 'moe' is not attention_projections"},
  };
  for (const Case& c : cases) {
    put_with_line(text, c.line, c.replacement);
    EXPECT_EQ(error_reading().rfind(c.expected, 0), 0u) << "line " << c.line << ": " << error_reading();
  }
  put(text + "step index=4 start_s=1 end_s=2 attention_s=0 dispatch_s=0 experts_s=0 combine_s=0 other_s=0\n");
  EXPECT_EQ(error_reading().rfind(at + "19: step 4: 0 'layer' lines", 0), 0u) << error_reading();
}

TEST(ReplayPlan, RankWithDecodesAndAPrefillRunsExactShapes) {
  const StepExport d = two_rank_export();
  const std::vector<PhasePlan> plan = plan_rank_step(d, d.steps[0], 0);
  std::vector<std::string> phases;
  for (const PhasePlan& p : plan) phases.push_back(p.phase);
  EXPECT_EQ(phases, (std::vector<std::string>{"other", "attention", "dispatch", "experts", "combine"}));
  const auto lines = [](const PhasePlan& p) {
    std::vector<std::string> out;
    for (const KernelLaunch& l : p.launches) out.push_back(describe(l));
    return out;
  };
  // 6 tokens: the prefill chunk of 4 over 4 keys; the decodes over (10 + 21) / 2 = 15.5 -> 16 keys.
  const std::vector<std::string> attention{"gemm layer=0 rows=6 op=attention_projections n=96 k=64",
                                           "gemm layer=0 rows=6 op=attention_projections n=64 k=64",
                                           "attention_prefill layer=0 rows=4 context=4",
                                           "attention_decode layer=0 rows=2 context=16"};
  std::vector<std::string> other = attention;
  other.insert(other.end(), {"gemm layer=0 rows=6 op=dense_ffn n=256 k=64", "swiglu layer=0 rows=6 ffn=128",
                             "gemm layer=0 rows=6 op=dense_ffn n=64 k=128",
                             "gemm layer=-1 rows=3 op=lm_head n=1000 k=64"});
  EXPECT_EQ(lines(plan[0]), other);
  std::vector<std::string> moe_attention;
  for (std::string line : attention)
    moe_attention.push_back(line.replace(line.find("layer=0"), 7, "layer=1"));
  moe_attention.insert(moe_attention.end(), {"gemm layer=1 rows=6 op=gate n=4 k=64", "top_k layer=1 rows=6"});
  EXPECT_EQ(lines(plan[1]), moe_attention);
  EXPECT_EQ(plan[2].launches.at(0).send_bytes, (std::vector<double>{0, 260}));
  EXPECT_EQ(plan[2].launches.at(0).receive_bytes, (std::vector<double>{0, 0}));
  EXPECT_EQ(lines(plan[3]),
            (std::vector<std::string>{
                "permute layer=1 rows=8 experts=5,3", "routed_experts layer=1 rows=8 experts=5,3",
                "unpermute layer=1 rows=8", "gemm layer=1 rows=6 op=shared_experts n=128 k=64",
                "swiglu layer=1 rows=6 ffn=64", "gemm layer=1 rows=6 op=shared_experts n=64 k=64"}));
  EXPECT_EQ(plan[4].launches.at(0).send_bytes, (std::vector<double>{0, 0}));
  EXPECT_EQ(plan[4].launches.at(0).receive_bytes, (std::vector<double>{0, 512}));
}

TEST(ReplayPlan, IdleRankOnlyServesItsExpertsAndJoinsTheExchanges) {
  const StepExport d = two_rank_export();
  const std::vector<PhasePlan> plan = plan_rank_step(d, d.steps[0], 1);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].phase, "dispatch");
  EXPECT_EQ(plan[0].launches.at(0).receive_bytes, (std::vector<double>{260, 0}));
  EXPECT_EQ(plan[1].phase, "experts");
  ASSERT_EQ(plan[1].launches.size(), 3u);  // no shared experts without tokens of its own
  EXPECT_EQ(plan[1].launches[1].expert_tokens, (std::vector<int>{4}));  // expert 2 idle, expert 3 four tokens
  EXPECT_EQ(plan[2].launches.at(0).send_bytes, (std::vector<double>{512, 0}));
  EXPECT_THROW(plan_rank_step(d, d.steps[0], 2), InputError);
}

// The replay's buffers come from this footprint; two that a buffer per token row would not hold:
// the dense FFN's activation (6 x 128 > 6 x hidden 64) and the router's choices (6 x top-2 > 8 copies).
TEST(ReplayPlan, FootprintHoldsEveryLaunchOfTheReplayedRanks) {
  const StepExport d = two_rank_export();
  ReplayFootprint f;
  for (const int rank : {0, 1})
    for (const PhasePlan& p : plan_rank_step(d, d.steps[0], rank))
      for (const KernelLaunch& l : p.launches) f.include(l);
  EXPECT_EQ(f.gemm_weights, 1000 * 64);  // the LM head
  EXPECT_EQ(f.gemm_inputs, 6 * 128);     // the dense FFN's down projection
  EXPECT_EQ(f.gemm_outputs, 3 * 1000);   // the LM head's logits
  EXPECT_EQ(f.activated, 6 * 128);
  EXPECT_EQ(f.router_rows, 6);
  EXPECT_EQ(f.routed_rows, 8);  // rank 0's 5 + 3 copies; rank 1 has 4
  EXPECT_EQ(f.active_experts, 2);
  ReplayFootprint idle;
  for (const PhasePlan& p : plan_rank_step(d, d.steps[0], 1))
    for (const KernelLaunch& l : p.launches) idle.include(l);
  EXPECT_EQ(idle.routed_rows, 4);
  EXPECT_EQ(idle.active_experts, 1);  // expert 2 idle
  EXPECT_EQ(idle.gemm_weights, 1);    // nothing of its own: every buffer keeps one element
}

}  // namespace
}  // namespace semsim
