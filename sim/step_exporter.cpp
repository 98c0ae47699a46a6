#include "sim/step_exporter.hpp"

#include <fmt/format.h>

#include "models/input_error.hpp"
#include "models/operator_costs.hpp"
#include "sim/step_recorder.hpp"

namespace semsim {

void check_exportable(const Scenario& scenario) {
  if (scenario.disaggregation)
    throw InputError(
        fmt::format("--export-steps: {} is disaggregated; the step export replays one server's steps, so "
                    "run one pool alone (serving.pool: prefill or decode) for its export",
                    scenario.file));
  if (scenario.model.dense())
    throw InputError(
        fmt::format("--export-steps: model '{}' is dense (no experts): the step export replays "
                    "MoE layers",
                    scenario.model.name));
  const auto refuse = [&](const std::string& why) {
    throw InputError(
        fmt::format("--export-steps: scenario '{}' {}; the step export covers Attention-DP "
                    "without two-batch overlap or speculative decoding, with full attention on every layer",
                    scenario.name, why));
  };
  if (scenario.attention != AttentionMode::kDataParallel) refuse("runs Attention-TP");
  if (scenario.serving.overlap != Overlap::kNone) refuse("runs two-batch overlap");
  if (scenario.model.attention.sliding_window_every > 0) refuse("has sliding-window attention layers");
  // The replay runs the model's own layers: a draft's passes are not among them.
  if (scenario.serving.speculative.on()) refuse("decodes speculatively (serving.speculative)");
}

StepExport step_export_header(const Scenario& scenario, const StepWindow& window) {
  const MoeModel& model = scenario.model;
  StepExport data;
  data.scenario = scenario.name;
  data.seed = scenario.workload.seed;
  data.rate = scenario.workload.arrival.rate;
  data.ranks = scenario.ep;
  data.first_step = window.first;
  ExportedModel& m = data.model;
  m.name = model.name;
  m.hidden = model.hidden;
  m.layers = model.layers;
  m.routed_experts = model.routed_experts;
  m.top_k = model.top_k;
  m.expert_ffn = model.expert_ffn;
  const AttentionShape& a = model.attention;
  m.mla = a.kv_lora_rank > 0;
  m.heads = a.heads;
  if (m.mla) {
    m.kv_lora = a.kv_lora_rank;
    m.rope = a.qk_rope_head_dim;
    m.nope = a.qk_nope_head_dim;
    m.v_head = a.v_head_dim;
  } else {
    m.kv_heads = a.kv_heads;
    m.head_dim = a.head_dim;
  }
  for (int layer = 0; layer < model.layers; ++layer)
    if (model.is_moe_layer(layer)) m.moe_layers.push_back(layer);
  // The live replay runs BF16 and FP8 kernels only (calibrate/replay/step_export.hpp).
  const Precision& precision = scenario.precision;
  if (precision.weights != precision.experts || is_fp4(precision.weights))
    throw InputError(fmt::format(
        "precision: weights {}, experts {}: the live replay runs one format, bf16 or fp8",
        name_of(kWeightFormatNames, precision.weights), name_of(kWeightFormatNames, precision.experts)));
  m.weights = name_of(kWeightFormatNames, precision.weights);
  m.dispatch_bytes_per_element = scenario.dispatch_bytes_per_element;
  m.activation_bytes = scenario.precision.activation_bytes;
  // The GEMMs the cost models price each operator by (models/operator_costs.hpp).
  const auto add = [&](const char* op, const std::vector<GemmShape>& shapes) {
    for (const GemmShape& g : shapes) m.gemms.push_back({op, g.n, g.k});
  };
  add("attention_projections", attention_projection_gemms(model));
  add("gate", {gate_gemm(model)});
  if (model.shared_experts > 0)
    add("shared_experts",
        swiglu_gemms(model, static_cast<long long>(model.shared_experts) * model.shared_expert_ffn));
  if (model.dense_ffn > 0) add("dense_ffn", swiglu_gemms(model, model.dense_ffn));
  add("lm_head", {lm_head_gemm(model)});
  return data;
}

StepExporter::StepExporter(const Scenario& scenario, const Placement& placement, StepWindow window)
    : scenario_(scenario), placement_(placement), window_(window), moe_index_(scenario.model.layers, -1) {
  int moe = 0;
  for (int layer = 0; layer < scenario.model.layers; ++layer)
    if (scenario.model.is_moe_layer(layer)) moe_index_[layer] = moe++;
}

void StepExporter::record(long long index, const std::vector<RankBatch>& batches, const StepGraph& graph,
                          const StepSchedule& schedule, const StepRecord& record,
                          const StepBuilder& builder) {
  const int ranks = scenario_.ep;
  const int experts = scenario_.model.routed_experts;
  ExportedStep& step = steps_.emplace_back();
  step.index = index;
  step.start_s = schedule.start;
  step.end_s = schedule.end;
  for (int p = 0; p < kExportedPhaseCount; ++p) step.phase_s[p] = record.phases[static_cast<Phase>(p)];
  step.ranks.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    ExportedRank& rank = step.ranks[r];
    for (const SequenceChunk& chunk : batches[r].chunks)
      rank.chunks.push_back({chunk.new_tokens, chunk.prior_context});
    rank.logits = batches[r].logits;
    // Its own work, what the replay runs: the step's activity lasts as long as the slowest rank's.
    rank.other_s = builder.rank_other_seconds()[static_cast<std::size_t>(r)];
  }
  step.layers.resize(static_cast<std::size_t>(scenario_.model.moe_layers()));
  for (std::size_t moe = 0; moe < step.layers.size(); ++moe) {
    ExportedLayer& layer = step.layers[moe];
    layer.ranks.resize(static_cast<std::size_t>(ranks));
    const std::vector<int>& served = builder.expert_tokens(static_cast<int>(moe));
    for (int r = 0; r < ranks; ++r) {
      ExportedExperts& e = layer.ranks[r];
      for (const int expert : placement_.slots[moe][r]) {
        e.ids.push_back(expert);
        e.tokens.push_back(served[static_cast<std::size_t>(r) * experts + expert]);
      }
    }
  }
  const auto activities = graph.activities();
  for (std::size_t i = 0; i < activities.size(); ++i) {
    const Activity& a = activities[i];
    const int activity = static_cast<int>(i);
    if (a.layer < 0) continue;  // dense layers and LM head: each rank's own, below
    ExportedLayer& layer = step.layers[static_cast<std::size_t>(moe_index_[a.layer])];
    layer.layer = a.layer;
    if (a.is_collective()) {
      std::vector<double>& bytes = a.phase == Phase::kDispatch ? layer.dispatch_bytes : layer.combine_bytes;
      (a.phase == Phase::kDispatch ? layer.dispatch_s : layer.combine_s) +=
          device_seconds(a, schedule, activity, 0);
      bytes.assign(static_cast<std::size_t>(ranks) * ranks, 0.0);
      const CopyTraffic& traffic = a.collective.traffic;
      for (int src = 0; src < ranks; ++src)
        for (int dst = 0; dst < ranks; ++dst)
          bytes[static_cast<std::size_t>(src) * ranks + dst] =
              static_cast<double>(traffic.copies_at(src, dst)) * traffic.bytes_per_copy;
      continue;
    }
    for (int r = 0; r < ranks; ++r) {
      ExportedExperts& e = layer.ranks[r];
      (a.phase == Phase::kAttention ? e.attention_s : e.experts_s) +=
          device_seconds(a, schedule, activity, r);
    }
  }
}

}  // namespace semsim
