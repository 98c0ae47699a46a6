// The step builder's graphs: which activities each attention mode emits, their dependencies, and the
// two-batch overlap's split of each rank's batch into micro-batches.
#include "sim/step_builder.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "policies/policy_registry.hpp"
#include "sim/run_plan.hpp"
#include "workloads/workload.hpp"

namespace semsim {
namespace {

struct StepBuilderFixture {
  Scenario scenario;
  std::unique_ptr<RoutingSource> routing;
  RooflineCostModel cost;
  RooflineCostModel rank_cost;
  MoeModel rank_model;
  Topology topology;

  explicit StepBuilderFixture(std::vector<std::string> overrides)
      : scenario(load_scenario(default_scenario_text(), "<default>", "", with_small(std::move(overrides)))),
        routing(make_routing_source(scenario.workload, scenario.model)),
        cost(expert_model_of(scenario), scenario.cluster.device, *scenario.calibration, scenario.precision),
        rank_cost(rank_model_of(scenario), scenario.cluster.device, *scenario.calibration,
                  scenario.precision),
        topology(effective_topology(scenario)) {}

  static std::vector<std::string> with_small(std::vector<std::string> overrides) {
    // NCCL-style dedup dispatch (the registry default), which every layout, experts TP included, takes.
    overrides.insert(overrides.begin(),
                     {"workload.requests=4", "parallelism.ep=2", "policies.dispatch=dedup"});
    return overrides;
  }
  // RooflineCostModel keeps a reference to its model: the TP shard must outlive it.
  static const MoeModel& rank_model_of(const Scenario& s) {
    static MoeModel shard;
    shard = s.attention == AttentionMode::kTensorParallel ? attention_tp_shard(s.model, s.tp) : s.model;
    return shard;
  }

  static const MoeModel& expert_model_of(const Scenario& s) {
    static MoeModel shard;
    shard = experts_tp_shard(s.model, s.moe_tp);
    return shard;
  }

  StepGraph build(const std::vector<RankBatch>& batches, const std::vector<TokenRef>& tokens,
                  const std::vector<int>& token_rank, const CostModel* draft_cost = nullptr) {
    const RunPlan plan = build_run(scenario);
    const auto token_scheduler =
        make_token_scheduler(scenario.token_scheduling, *plan.placement, scenario.ep);
    const DispatchTiming over_the_topology(scenario.dispatch);
    StepBuilder builder(scenario, plan.placement->placement, *routing, cost, rank_cost, topology,
                        *token_scheduler, over_the_topology, nullptr, draft_cost);
    StepGraph graph(scenario.ep);
    StepRecord record;
    builder.build(batches, tokens, token_rank, graph, record);
    return graph;
  }
};

// Rank 0 prefills 7 prompt tokens of request 0 (the chunk ends the prompt); rank 1 decodes one
// token of request 1 at position 20.
struct Step {
  std::vector<RankBatch> batches{RankBatch{{{7, 0}}, {true}, 7, 1, 7, 1, {}},
                                 RankBatch{{{1, 20}}, {true}, 1, 1, 0, 1, {}}};
  std::vector<TokenRef> tokens;
  std::vector<int> token_rank;
  Step() {
    for (int p = 0; p < 7; ++p) tokens.push_back({0, 0, p});
    tokens.push_back({1, 0, 20});
    token_rank = {0, 0, 0, 0, 0, 0, 0, 1};
  }
};

std::vector<Phase> phases_of(const StepGraph& g) {
  std::vector<Phase> phases;
  for (const Activity& a : g.activities()) phases.push_back(a.phase);
  return phases;
}

int moe_layers(const MoeModel& m) {
  int n = 0;
  for (int layer = 0; layer < m.layers; ++layer) n += m.is_moe_layer(layer) ? 1 : 0;
  return n;
}

TEST(StepBuilder, AttentionDpIsAChainOfFourActivitiesPerMoeLayer) {
  StepBuilderFixture f({});
  const Step step;
  const StepGraph g = f.build(step.batches, step.tokens, step.token_rank);
  const int layers = moe_layers(f.scenario.model);
  ASSERT_EQ(g.activities().size(), static_cast<std::size_t>(1 + 4 * layers));
  EXPECT_EQ(g.activities()[0].phase, Phase::kOther);
  EXPECT_TRUE(g.activities()[0].after().empty());
  for (int a = 1; a < static_cast<int>(g.activities().size()); ++a) {
    const Activity& activity = g.activities()[a];
    ASSERT_EQ(activity.after().size(), 1u) << a;
    EXPECT_EQ(activity.after()[0], a - 1) << a;
    const Phase expected[] = {Phase::kAttention, Phase::kDispatch, Phase::kExperts, Phase::kCombine};
    EXPECT_EQ(activity.phase, expected[(a - 1) % 4]) << a;
    EXPECT_EQ(activity.kind == ActivityKind::kCollective,
              activity.phase == Phase::kDispatch || activity.phase == Phase::kCombine);
  }
  // Rank 1's attention is its own decode token's; rank 0's its 7-token prefill.
  const Activity& attention = g.activities()[1];
  EXPECT_EQ(
      attention.seconds[1],
      attention_with_elementwise(f.rank_cost, attention.layer, step.batches[1].chunks) + f.cost.gate(1));
  EXPECT_EQ(
      attention.seconds[0],
      attention_with_elementwise(f.rank_cost, attention.layer, step.batches[0].chunks) + f.cost.gate(7));
}

TEST(StepBuilder, AttentionTpAddsReduceScatterAndAllGatherAroundTheMoeLayer) {
  StepBuilderFixture f({"parallelism.attention=tp"});
  RankBatch group{{{7, 0}, {1, 20}}, {true, true}, 8, 2, 7, 2, {}};
  Step step;
  step.token_rank.assign(8, 0);
  const StepGraph g = f.build({group}, step.tokens, step.token_rank);
  const int dense = f.scenario.model.layers - moe_layers(f.scenario.model);
  std::vector<Phase> expected{Phase::kOther};
  expected.insert(expected.end(), 4 * dense, Phase::kOther);  // two all-reduces per dense layer
  for (int l = 0; l < moe_layers(f.scenario.model); ++l)
    expected.insert(expected.end(), {Phase::kAttention, Phase::kReduceScatter, Phase::kDispatch,
                                     Phase::kExperts, Phase::kCombine, Phase::kAllGather});
  EXPECT_EQ(phases_of(g), expected);
  for (int a = 1; a < static_cast<int>(g.activities().size()); ++a)
    EXPECT_EQ(g.activities()[a].after()[0], a - 1);
}

// Experts split by TP under Attention-TP: each device runs its slice of every expert on every token
// between two all-reduces of the whole batch (halves without NCCL's fits: a reduce-scatter and an
// all-gather of equal slices).
TEST(StepBuilder, ExpertsSplitByTpRunEveryTokenOnEveryDeviceBetweenAllReduces) {
  for (const int devices : {2, 8}) {
    StepBuilderFixture f({fmt::format("parallelism={{attention: {{tp: {0}}}, moe: {{tp: {0}}}}}", devices)});
    ASSERT_EQ(f.scenario.ep, devices);
    RankBatch group{{{7, 0}, {1, 20}}, {true, true}, 8, 2, 7, 2, {}};
    Step step;
    step.token_rank.assign(8, 0);
    const StepGraph g = f.build({group}, step.tokens, step.token_rank);
    const MoeModel& m = f.scenario.model;
    const int dense = m.layers - moe_layers(m);
    std::vector<Phase> expected{Phase::kOther};
    expected.insert(expected.end(), 4 * dense, Phase::kOther);
    for (int l = 0; l < moe_layers(m); ++l)
      expected.insert(expected.end(), {Phase::kAttention, Phase::kDispatch, Phase::kDispatch, Phase::kExperts,
                                       Phase::kCombine, Phase::kCombine});
    ASSERT_EQ(phases_of(g), expected) << devices;
    // By hand: the 8 tokens' experts on layer 0 (routing as the builder's), each device its slice.
    const auto routing = make_routing_source(f.scenario.workload, m);
    std::vector<TokenRef> ids = step.tokens;
    for (TokenRef& t : ids) t.id = routing->token_id(t);
    std::vector<ExpertId> experts(ids.size() * m.top_k);
    routing->route(0, ids, experts);
    std::vector<int> per_expert(m.routed_experts, 0);
    for (const ExpertId e : experts) ++per_expert[e];
    const double slice_seconds =
        shared_experts_with_elementwise(f.cost, 8) + f.cost.routed_experts(per_expert);
    const Activity& first_experts = g.activities()[1 + 4 * dense + 3];
    ASSERT_EQ(first_experts.phase, Phase::kExperts);
    for (int d = 0; d < devices; ++d) EXPECT_DOUBLE_EQ(first_experts.seconds[d], slice_seconds) << d;
    // The slice FFN is 1/devices of the expert's: less work per device than a whole expert's.
    EXPECT_EQ(experts_tp_shard(m, devices).expert_ffn, m.expert_ffn / devices);
    // Each half of an all-reduce moves equal slices of the 8 tokens' hidden states between every
    // pair of devices.
    const Activity& reduce = g.activities()[1 + 4 * dense + 1];
    EXPECT_EQ(reduce.collective.traffic.devices, devices);
    EXPECT_DOUBLE_EQ(reduce.collective.traffic.bytes_per_copy, (8 + devices - 1) / devices * m.hidden * 2.0);
  }
}

// Experts split by TP under Attention-DP: an all-gather gives every device every rank's tokens
// (equal shards of the largest rank's, as NCCL moves them) and a reduce-scatter returns each its own.
TEST(StepBuilder, ExpertsSplitByTpUnderAttentionDpGatherAndScatterTheRanksTokens) {
  StepBuilderFixture f({"parallelism={attention: {dp: 2}, moe: {tp: 2}}"});
  const Step step;
  const StepGraph g = f.build(step.batches, step.tokens, step.token_rank);
  const MoeModel& m = f.scenario.model;
  std::vector<Phase> expected{Phase::kOther};
  for (int l = 0; l < moe_layers(m); ++l)
    expected.insert(expected.end(), {Phase::kAttention, Phase::kDispatch, Phase::kExperts, Phase::kCombine});
  ASSERT_EQ(phases_of(g), expected);
  const double shard = 7 * m.hidden * 2.0;  // rank 0's 7 tokens, the largest
  for (const int a : {2, 4}) {
    EXPECT_EQ(g.activities()[a].collective.traffic.devices, 2) << a;
    EXPECT_DOUBLE_EQ(g.activities()[a].collective.traffic.bytes_per_copy, shard) << a;
  }
  // Both devices gate and run their slice of the shared experts on all 8 tokens.
  EXPECT_DOUBLE_EQ(g.activities()[1].seconds[1],
                   attention_with_elementwise(f.rank_cost, g.activities()[1].layer, step.batches[1].chunks) +
                       f.cost.gate(8));
}

// Each rank's first half of tokens (rounded up) is micro-batch 0: rank 0's 7-token chunk splits 4 + 3
// (the second part after the first's 4 tokens of context, and it yields the token); rank 1's single
// decode token is all micro-batch 0's.
TEST(StepBuilder, TwoBatchOverlapSplitsEachRanksTokensAndInterleavesTheStages) {
  StepBuilderFixture f({"serving.overlap=two_batch"});
  const Step step;
  const StepGraph g = f.build(step.batches, step.tokens, step.token_rank);
  const auto activities = g.activities();
  const int layers = moe_layers(f.scenario.model);
  ASSERT_EQ(activities.size(), static_cast<std::size_t>(2 + 8 * layers));
  const MoeModel& m = f.scenario.model;
  const std::vector<SequenceChunk> first{{4, 0}}, second{{3, 4}};
  // Dense layers + LM head per micro-batch, ranks meeting after each: the slowest rank's LM head,
  // then per dense layer the slowest rank's attention + dense FFN. Micro-batch 0 holds rank 0's first
  // 4 tokens and rank 1's decode token (with its LM head row); micro-batch 1 rank 0's last 3 tokens
  // (with the prompt's LM head row).
  const std::vector<SequenceChunk> decode{{1, 20}};
  double other0 = lm_head_with_elementwise(f.rank_cost, 1), other1 = lm_head_with_elementwise(f.rank_cost, 1);
  for (int layer = 0; layer < m.layers; ++layer)
    if (!m.is_moe_layer(layer)) {
      other0 += std::max(
          attention_with_elementwise(f.rank_cost, layer, first) + dense_ffn_with_elementwise(f.rank_cost, 4),
          attention_with_elementwise(f.rank_cost, layer, decode) +
              dense_ffn_with_elementwise(f.rank_cost, 1));
      other1 +=
          attention_with_elementwise(f.rank_cost, layer, second) + dense_ffn_with_elementwise(f.rank_cost, 3);
    }
  EXPECT_EQ(activities[0].micro_batch, 0);
  EXPECT_EQ(activities[1].micro_batch, 1);
  EXPECT_DOUBLE_EQ(activities[0].seconds[0], other0);
  EXPECT_DOUBLE_EQ(activities[1].seconds[1], other1);
  // Per MoE layer: A.attention, A.dispatch, B.attention, B.dispatch, A.experts, A.combine, B.experts,
  // B.combine; each micro-batch's activities chained on its own.
  const struct {
    Phase phase;
    int micro_batch;
  } order[] = {{Phase::kAttention, 0}, {Phase::kDispatch, 0}, {Phase::kAttention, 1}, {Phase::kDispatch, 1},
               {Phase::kExperts, 0},   {Phase::kCombine, 0},  {Phase::kExperts, 1},   {Phase::kCombine, 1}};
  int last[2] = {0, 1};
  for (int l = 0; l < layers; ++l)
    for (int i = 0; i < 8; ++i) {
      const int a = 2 + 8 * l + i;
      EXPECT_EQ(activities[a].phase, order[i].phase) << a;
      EXPECT_EQ(activities[a].micro_batch, order[i].micro_batch) << a;
      ASSERT_EQ(activities[a].after().size(), 1u);
      EXPECT_EQ(activities[a].after()[0], last[order[i].micro_batch]) << a;
      last[order[i].micro_batch] = a;
    }
  const Activity& attention0 = activities[2];
  const Activity& attention1 = activities[4];
  EXPECT_EQ(attention0.seconds[0],
            attention_with_elementwise(f.rank_cost, attention0.layer, first) + f.cost.gate(4));
  EXPECT_EQ(attention1.seconds[0],
            attention_with_elementwise(f.rank_cost, attention1.layer, second) + f.cost.gate(3));
  EXPECT_EQ(attention1.seconds[1], 0.0);  // rank 1 has nothing in micro-batch 1
}

// A dense model's step on one rank: its 64 layers of attention and dense FFN plus the LM head, each
// a roofline kernel, summed by hand from Qwen3-32B's config.json numbers (no MoE layer, no routing).
TEST(StepBuilder, ADenseModelsStepIsItsLayersAndLmHeadByHand) {
  StepBuilderFixture f({"model=qwen3-32b", "calibration=datasheet", "parallelism.ep=1"});
  const double layers = 64, hidden = 5120, ffn = 25600, heads = 64, kv_heads = 8, head_dim = 128,
               vocabulary = 151936, n = 7, bf16 = 2;
  const Device& device = f.scenario.cluster.device;
  const CalibrationProfile& profile = *f.scenario.calibration;
  auto roofline = [&](double flops, double bytes, double flops_per_second) {
    return profile.kernel_overhead +
           std::max(flops / flops_per_second, bytes / (device.hbm_bandwidth * profile.memory_efficiency));
  };
  const double gemm = device.bf16_flops * profile.gemm_efficiency;
  // Attention over a 7-token prompt: q, k, v, o projections, then token i attends to i tokens.
  const double projection_params = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2;
  const double attended = n * (n + 1) / 2;
  const double attention =
      roofline(2 * n * projection_params + 2 * heads * (2 * head_dim) * attended,
               projection_params * bf16 + 2 * n * hidden * bf16 + n * 2 * kv_heads * head_dim * bf16,
               device.bf16_flops * profile.attention_efficiency);
  // SwiGLU: gate, up and down weights; hidden in and out plus the intermediate product per token.
  const double dense_ffn =
      roofline(2 * n * 3 * hidden * ffn, 3 * hidden * ffn * bf16 + n * 2 * (hidden + ffn) * bf16, gemm);
  // One logit row (the prompt's last token).
  const double lm_head =
      roofline(2 * hidden * vocabulary, hidden * vocabulary * bf16 + (hidden + vocabulary) * bf16, gemm);

  // Elementwise kernels, each a launch plus its bytes: per layer two residual-add RMSNorms
  // (2*4*5120 per token) and RoPE on q and k (2*(64+8)*128), then SiLU(gate) x up (3*25600); the final
  // RMSNorm on the logit row (4*5120).
  auto memory_bound = [&](double kernels, double bytes) {
    return kernels * profile.kernel_overhead + bytes / (device.hbm_bandwidth * profile.memory_efficiency);
  };
  const double elementwise =
      memory_bound(3, n * (2 * 4 * hidden + 2 * (heads + kv_heads) * head_dim) * bf16) +
      memory_bound(1, n * 3 * ffn * bf16);
  const double final_norm = memory_bound(1, 4 * hidden * bf16);

  const std::vector<RankBatch> batches{RankBatch{{{7, 0}}, {true}, 7, 1, 7, 1, {}}};
  std::vector<TokenRef> tokens;
  for (int p = 0; p < 7; ++p) tokens.push_back({0, 0, p});
  const StepGraph g = f.build(batches, tokens, std::vector<int>(7, 0));
  ASSERT_EQ(g.activities().size(), 1u);
  EXPECT_EQ(g.activities()[0].phase, Phase::kOther);
  EXPECT_NEAR(g.activities()[0].seconds[0],
              layers * (attention + dense_ffn + elementwise) + lm_head + final_norm, 1e-12);
}

// Under Attention-TP a dense model's step is its sharded layers and two all-reduces per layer (a
// reduce-scatter and an all-gather each without NCCL's tables): no MoE phase.
TEST(StepBuilder, ADenseModelUnderAttentionTpAllReducesEveryLayer) {
  StepBuilderFixture f({"model=qwen3-32b", "parallelism.attention=tp"});
  RankBatch group{{{7, 0}, {1, 20}}, {true, true}, 8, 2, 7, 2, {}};
  Step step;
  step.token_rank.assign(8, 0);
  const StepGraph g = f.build({group}, step.tokens, step.token_rank);
  EXPECT_EQ(phases_of(g), std::vector<Phase>(1 + 4 * 64, Phase::kOther));
  for (int a = 1; a < static_cast<int>(g.activities().size()); ++a)
    EXPECT_EQ(g.activities()[a].kind, ActivityKind::kCollective) << a;
}

}  // namespace
}  // namespace semsim

namespace semsim {
namespace {

// Speculative decoding with K = 2: rank 1 verifies request 1's last token and two drafts (three decode
// queries from position 20), both accepted. After the last layer the MTP layer's first pass runs
// over the three kept tokens, its second over the draft that pass made (position 23), each as one
// more MoE layer (attention and gate, dispatch, experts, combine) and the LM head.
TEST(StepBuilder, AnMtpVerificationAddsTheDraftsPassesAfterTheLastLayerByHand) {
  StepBuilderFixture f({"serving.speculative={method: mtp, tokens: 2}"});
  const RankBatch verify{
      {{1, 20}, {1, 21}, {1, 22}}, {true, true, true}, 3, 3, 0, 1, {DraftWork{{1, 0, 20}, 3, false, true}}};
  const std::vector<RankBatch> batches{RankBatch{}, verify};
  const std::vector<TokenRef> tokens{{1, 0, 20}, {1, 0, 21}, {1, 0, 22}};
  const StepGraph g = f.build(batches, tokens, {1, 1, 1});
  const int layers = moe_layers(f.scenario.model);
  const auto& a = g.activities();
  const std::size_t first = 1 + 4 * static_cast<std::size_t>(layers);
  ASSERT_EQ(a.size(), first + 2 * 5);
  EXPECT_EQ(a[1].seconds[1],
            attention_with_elementwise(f.rank_cost, a[1].layer, verify.chunks) + f.cost.gate(3));
  const std::vector<SequenceChunk> kept{{1, 20}, {1, 21}, {1, 22}}, drafted{{1, 23}};
  for (const auto& [pass, chunks, logits] : {std::tuple{0, kept, 1}, std::tuple{1, drafted, 1}}) {
    const std::size_t at = first + 5 * static_cast<std::size_t>(pass);
    const Phase expected[] = {Phase::kAttention, Phase::kDispatch, Phase::kExperts, Phase::kCombine,
                              Phase::kOther};
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(a[at + i].phase, expected[i]) << pass << " " << i;
      ASSERT_EQ(a[at + i].after().size(), 1u);
      EXPECT_EQ(a[at + i].after()[0], static_cast<int>(at + i) - 1);
    }
    EXPECT_EQ(a[at].layer, f.scenario.model.layers);  // the MTP layer's index
    const long long tokens = static_cast<long long>(chunks.size());
    EXPECT_EQ(a[at].seconds[1], attention_with_elementwise(f.rank_cost, 0, chunks) + f.cost.gate(tokens))
        << pass;
    EXPECT_EQ(a[at].seconds[0], 0.0) << pass;  // rank 0 has nothing to draft
    EXPECT_EQ(a[at + 4].seconds[1], lm_head_with_elementwise(f.rank_cost, logits)) << pass;
  }
}

// A request that finishes with this step drafts nothing: no pass runs.
TEST(StepBuilder, ARequestThatFinishesDraftsNothing) {
  StepBuilderFixture f({"serving.speculative={method: mtp, tokens: 1}"});
  const RankBatch verify{
      {{1, 20}, {1, 21}}, {true, true}, 2, 2, 0, 1, {DraftWork{{1, 0, 20}, 2, false, false}}};
  const StepGraph g = f.build({RankBatch{}, verify}, {{1, 0, 20}, {1, 0, 21}}, {1, 1});
  EXPECT_EQ(g.activities().size(), 1 + 4 * static_cast<std::size_t>(moe_layers(f.scenario.model)));
}

}  // namespace
}  // namespace semsim

namespace semsim {
namespace {

// A draft model (method draft, K = 2): after the last layer, one compute activity per pass, each rank
// running every layer of the draft model and its LM head over the pass's tokens, no collective.
TEST(StepBuilder, ADraftModelsPassesAreItsLayersOnEachRankByHand) {
  StepBuilderFixture f(
      {"serving.speculative={method: draft, tokens: 2, draft_model: qwen3-32b, "
       "acceptance: {dist: fixed, rate: 0.5}}"});
  const MoeModel& draft = *f.scenario.serving.speculative.draft_model;
  const RooflineCostModel draft_cost(draft, f.scenario.cluster.device, *f.scenario.calibration,
                                     f.scenario.precision);
  // Request 1 verified (position 20 and one draft), one accepted: two tokens kept, it goes on.
  const RankBatch verify{
      {{1, 20}, {1, 21}, {1, 22}}, {true, true, true}, 3, 3, 0, 1, {DraftWork{{1, 0, 20}, 2, false, true}}};
  const StepGraph g =
      f.build({RankBatch{}, verify}, {{1, 0, 20}, {1, 0, 21}, {1, 0, 22}}, {1, 1, 1}, &draft_cost);
  const auto& a = g.activities();
  const std::size_t first = 1 + 4 * static_cast<std::size_t>(moe_layers(f.scenario.model));
  ASSERT_EQ(a.size(), first + 2);
  auto by_hand = [&](const std::vector<SequenceChunk>& chunks) {
    long long tokens = 0;
    for (const SequenceChunk& c : chunks) tokens += c.new_tokens;
    double seconds = lm_head_with_elementwise(draft_cost, 1);
    for (int layer = 0; layer < draft.layers; ++layer)
      seconds += attention_with_elementwise(draft_cost, layer, chunks) +
                 dense_ffn_with_elementwise(draft_cost, tokens);
    return seconds;
  };
  EXPECT_DOUBLE_EQ(a[first].seconds[1], by_hand({{1, 20}, {1, 21}}));
  EXPECT_DOUBLE_EQ(a[first + 1].seconds[1], by_hand({{1, 22}}));
  for (std::size_t i = first; i < a.size(); ++i) {
    EXPECT_EQ(a[i].phase, Phase::kOther);
    EXPECT_EQ(a[i].kind, ActivityKind::kCompute);
    EXPECT_EQ(a[i].seconds[0], 0.0);
  }
}

}  // namespace
}  // namespace semsim
