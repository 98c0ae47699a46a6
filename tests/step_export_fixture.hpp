#pragma once
// A step export small enough to check by hand, for the tests of the format (calibrate/) and of the
// commands that read it (cli/).
#include "calibrate/replay/step_export.hpp"

namespace semsim::test {

// Two ranks of a model with a dense layer 0 and a MoE layer 1 of 4 experts, two per rank; one step.
inline StepExport two_rank_export() {
  StepExport d;
  d.scenario = "tiny";
  d.seed = 7;
  d.rate = 12.5;
  d.ranks = 2;
  d.first_step = 3;
  ExportedModel& m = d.model;
  m.name = "toy";
  m.hidden = 64;
  m.layers = 2;
  m.routed_experts = 4;
  m.top_k = 2;
  m.expert_ffn = 32;
  m.mla = true;
  m.heads = 4;
  m.kv_lora = 16, m.rope = 8, m.nope = 16, m.v_head = 16;
  m.moe_layers = {1};
  m.dispatch_bytes_per_element = 1.03125;
  m.gemms = {{"attention_projections", 96, 64},
             {"attention_projections", 64, 64},
             {"gate", 4, 64},
             {"shared_experts", 128, 64},
             {"shared_experts", 64, 64},
             {"dense_ffn", 256, 64},
             {"dense_ffn", 64, 128},
             {"lm_head", 1000, 64}};
  ExportedStep& s = d.steps.emplace_back();
  s.index = 3;
  s.start_s = 0.25;
  s.end_s = 0.2561;
  s.phase_s[0] = 0.001, s.phase_s[1] = 0.0005, s.phase_s[2] = 0.002, s.phase_s[3] = 0.0005,
  s.phase_s[4] = 0.0021;
  s.ranks = {{{{1, 9}, {1, 20}, {4, 0}}, 3, 0.0021}, {{}, 0, 0}};
  ExportedLayer& l = s.layers.emplace_back();
  l.layer = 1;
  // Rank 0's 6 tokens x top-2: 5 copies stay, 4 go to rank 1 (65 B each); combine returns them at 128 B.
  l.dispatch_bytes = {325, 260, 0, 0};
  l.combine_bytes = {640, 0, 512, 0};
  l.dispatch_s = 0.0005, l.combine_s = 0.0005;
  l.ranks = {{{0, 1}, {5, 3}, 0.001, 0.002}, {{2, 3}, {0, 4}, 0, 0.0015}};
  return d;
}

}  // namespace semsim::test
