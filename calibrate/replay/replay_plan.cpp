#include "calibrate/replay/replay_plan.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "models/input_error.hpp"

namespace semsim {
namespace {

class ReplayPlanner {
 public:
  ReplayPlanner(const StepExport& data, const ExportedStep& step, int rank)
      : data_(data),
        step_(step),
        rank_(rank),
        batch_(step.ranks.at(static_cast<std::size_t>(rank))),
        tokens_(batch_.tokens()) {}

  std::vector<PhasePlan> plan() {
    const ExportedModel& m = data_.model;
    std::vector<PhasePlan> phases;
    phases.reserve(kExportedPhaseCount);  // add() hands out references into it
    auto add = [&](const char* name, bool always) -> std::vector<KernelLaunch>& {
      PhasePlan& p = phases.emplace_back();
      p.phase = name;
      always_.push_back(always);
      return p.launches;
    };
    std::vector<KernelLaunch>& other = add("other", false);
    for (int layer = 0; layer < m.layers; ++layer) {
      if (std::binary_search(m.moe_layers.begin(), m.moe_layers.end(), layer)) continue;
      attention(layer, other);
      gemms("dense_ffn", layer, tokens_, other);
    }
    gemms("lm_head", -1, batch_.logits, other);
    std::vector<KernelLaunch>& attention_phase = add("attention", false);
    std::vector<KernelLaunch>& dispatch = add("dispatch", true);
    std::vector<KernelLaunch>& experts = add("experts", false);
    std::vector<KernelLaunch>& combine = add("combine", true);
    for (const ExportedLayer& l : step_.layers) {
      attention(l.layer, attention_phase);
      gemms("gate", l.layer, tokens_, attention_phase);
      if (tokens_ > 0) attention_phase.push_back(launch(LiveKernel::kTopK, l.layer, tokens_));
      dispatch.push_back(exchange(l.layer, l.dispatch_bytes));
      routed_experts(l, experts);
      gemms("shared_experts", l.layer, tokens_, experts);
      combine.push_back(exchange(l.layer, l.combine_bytes));
    }
    std::vector<PhasePlan> kept;
    for (std::size_t i = 0; i < phases.size(); ++i)
      if (always_[i] || !phases[i].launches.empty()) kept.push_back(std::move(phases[i]));
    return kept;
  }

 private:
  static KernelLaunch launch(LiveKernel kernel, int layer, long long rows) {
    KernelLaunch l;
    l.kernel = kernel;
    l.layer = layer;
    l.rows = rows;
    return l;
  }

  // An operator's GEMMs over `rows` rows; a SwiGLU FFN (gate/up then down) has its activation between.
  void gemms(const std::string& op, int layer, long long rows, std::vector<KernelLaunch>& out) const {
    if (rows <= 0) return;
    const bool swiglu = op == "shared_experts" || op == "dense_ffn";
    bool first = true;
    for (const ExportedGemm& g : data_.model.gemms) {
      if (g.op != op) continue;
      KernelLaunch gemm = launch(LiveKernel::kGemm, layer, rows);
      gemm.op = op;
      gemm.n = g.n;
      gemm.k = g.k;
      out.push_back(gemm);
      if (swiglu && first) {
        KernelLaunch activation = launch(LiveKernel::kSwiglu, layer, rows);
        activation.ffn = g.n / 2;
        out.push_back(activation);
      }
      first = false;
    }
  }

  // Projections over every new token; the decode tokens as one batch over their mean context (as
  // the calibrated profile prices them); each prefill chunk on its own.
  void attention(int layer, std::vector<KernelLaunch>& out) const {
    if (tokens_ == 0) return;
    gemms("attention_projections", layer, tokens_, out);
    int decodes = 0;
    long long decode_keys = 0;
    for (const ExportedChunk& c : batch_.chunks) {
      if (c.new_tokens == 1) {
        ++decodes;
        decode_keys += c.prior_context + 1;
        continue;
      }
      KernelLaunch prefill = launch(LiveKernel::kAttentionPrefill, layer, c.new_tokens);
      prefill.context = c.prior_context + c.new_tokens;
      out.push_back(prefill);
    }
    if (decodes == 0) return;
    KernelLaunch decode = launch(LiveKernel::kAttentionDecode, layer, decodes);
    decode.context = std::llround(static_cast<double>(decode_keys) / decodes);
    out.push_back(decode);
  }

  void routed_experts(const ExportedLayer& l, std::vector<KernelLaunch>& out) const {
    const ExportedExperts& e = l.ranks.at(static_cast<std::size_t>(rank_));
    const long long activations = e.activations();
    if (activations == 0) return;
    KernelLaunch permute = launch(LiveKernel::kPermute, l.layer, activations);
    for (const int tokens : e.tokens)
      if (tokens > 0) permute.expert_tokens.push_back(tokens);
    out.push_back(permute);
    KernelLaunch grouped = permute;
    grouped.kernel = LiveKernel::kRoutedExperts;
    out.push_back(grouped);
    out.push_back(launch(LiveKernel::kUnpermute, l.layer, activations));
  }

  KernelLaunch exchange(int layer, const std::vector<double>& bytes) const {
    KernelLaunch x = launch(LiveKernel::kSendRecv, layer, 0);
    const int ranks = data_.ranks;
    x.send_bytes.assign(static_cast<std::size_t>(ranks), 0.0);
    x.receive_bytes.assign(static_cast<std::size_t>(ranks), 0.0);
    for (int other = 0; other < ranks; ++other) {
      if (other == rank_) continue;
      x.send_bytes[other] = bytes[static_cast<std::size_t>(rank_) * ranks + other];
      x.receive_bytes[other] = bytes[static_cast<std::size_t>(other) * ranks + rank_];
    }
    return x;
  }

  const StepExport& data_;
  const ExportedStep& step_;
  int rank_;
  const ExportedRank& batch_;
  long long tokens_;
  std::vector<bool> always_;
};

const char* live_kernel_name(LiveKernel kernel) {
  switch (kernel) {
    case LiveKernel::kGemm:
      return "gemm";
    case LiveKernel::kSwiglu:
      return "swiglu";
    case LiveKernel::kAttentionDecode:
      return "attention_decode";
    case LiveKernel::kAttentionPrefill:
      return "attention_prefill";
    case LiveKernel::kTopK:
      return "top_k";
    case LiveKernel::kPermute:
      return "permute";
    case LiveKernel::kRoutedExperts:
      return "routed_experts";
    case LiveKernel::kUnpermute:
      return "unpermute";
    case LiveKernel::kSendRecv:
      return "send_recv";
  }
  return "?";
}

}  // namespace

std::vector<PhasePlan> plan_rank_step(const StepExport& data, const ExportedStep& step, int rank) {
  if (rank < 0 || rank >= data.ranks)
    throw InputError("live: rank " + std::to_string(rank) + " is not one of the export's " +
                     std::to_string(data.ranks) + " ranks");
  return ReplayPlanner(data, step, rank).plan();
}

void ReplayFootprint::include(const KernelLaunch& l) {
  switch (l.kernel) {
    case LiveKernel::kGemm:
      gemm_weights = std::max(gemm_weights, l.n * l.k);
      gemm_inputs = std::max(gemm_inputs, l.rows * l.k);
      gemm_outputs = std::max(gemm_outputs, l.rows * l.n);
      break;
    case LiveKernel::kSwiglu:
      gemm_outputs = std::max(gemm_outputs, l.rows * 2 * l.ffn);
      activated = std::max(activated, l.rows * l.ffn);
      break;
    case LiveKernel::kTopK:
      router_rows = std::max(router_rows, l.rows);
      break;
    case LiveKernel::kRoutedExperts:
      active_experts = std::max(active_experts, static_cast<int>(l.expert_tokens.size()));
      [[fallthrough]];
    case LiveKernel::kPermute:
    case LiveKernel::kUnpermute:
      routed_rows = std::max(routed_rows, l.rows);
      break;
    case LiveKernel::kAttentionDecode:
    case LiveKernel::kAttentionPrefill:  // each attention case has buffers of its own
    case LiveKernel::kSendRecv:          // so has the exchange
      break;
  }
}

std::string describe(const KernelLaunch& l) {
  std::ostringstream text;
  text << live_kernel_name(l.kernel) << " layer=" << l.layer << " rows=" << l.rows;
  if (l.kernel == LiveKernel::kGemm) text << " op=" << l.op << " n=" << l.n << " k=" << l.k;
  if (l.kernel == LiveKernel::kSwiglu) text << " ffn=" << l.ffn;
  if (l.kernel == LiveKernel::kAttentionDecode || l.kernel == LiveKernel::kAttentionPrefill)
    text << " context=" << l.context;
  if (l.kernel == LiveKernel::kRoutedExperts || l.kernel == LiveKernel::kPermute) {
    text << " experts=";
    for (std::size_t i = 0; i < l.expert_tokens.size(); ++i) text << (i ? "," : "") << l.expert_tokens[i];
  }
  if (l.kernel == LiveKernel::kSendRecv) {
    double sent = 0, received = 0;
    for (const double b : l.send_bytes) sent += b;
    for (const double b : l.receive_bytes) received += b;
    text << " sent=" << sent << " received=" << received;
  }
  return text.str();
}

}  // namespace semsim
