#include "sim/calibrated_cost_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "calibrate/fit/point_memo.hpp"
#include "calibrate/format/kernels.hpp"

namespace semsim {

// An operator as the sum of its parts (one table, or the GEMMs it is made of), each priced by a
// curve of the profile or, where the profile has none, by the roofline; memoised, because the
// engine asks the same few points again and again.
class CalibratedCostModel::Operator {
 public:
  struct Part {
    std::string what;
    Coverage coverage = Coverage::kRoofline;
    std::string source;
    std::function<double(double, double)> seconds;
  };

  Operator(std::string name, std::vector<Part> parts) : name_(std::move(name)), parts_(std::move(parts)) {}

  double seconds(double x, double y = 0) const {
    return memo_.get(x, y, [&] {
      double total = 0;
      for (const Part& part : parts_) total += part.seconds(x, y);
      return total;
    });
  }

  // The least calibrated of its parts stands for the whole.
  OperatorCoverage coverage() const {
    OperatorCoverage c{name_, Coverage::kMeasured, ""};
    std::vector<std::string> sources;
    for (const Part& part : parts_) {
      c.coverage = std::max(c.coverage, part.coverage);
      sources.push_back(fmt::format("{} [{}: {}]", part.what, coverage_name(part.coverage), part.source));
    }
    c.source = fmt::format("{}", fmt::join(sources, " + "));
    return c;
  }

 private:
  std::string name_;
  std::vector<Part> parts_;
  mutable PointMemo memo_;
};

namespace {

using Operator = CalibratedCostModel::Operator;
using Part = Operator::Part;

Part curve_part(std::string what, std::shared_ptr<KernelCurve> curve) {
  Part part{std::move(what), curve->coverage(), curve->source(), {}};
  part.seconds = [curve](double x, double y) { return curve->seconds(x, y); };
  return part;
}

// An operator-scope table of the model's own shape, or nothing.
std::unique_ptr<Operator> operator_table(const KernelLibrary& library, const MoeModel& model,
                                         const char* kernel, const std::string& dtype, const char* name) {
  const std::string shape = kernel_shape(kernel, model);
  std::shared_ptr<KernelCurve> curve = shape.empty() ? nullptr : library.curve(kernel, shape, dtype);
  if (!curve) return nullptr;
  return std::make_unique<Operator>(name, std::vector<Part>{curve_part(kernel, std::move(curve))});
}

// The dtypes of the tables that price the operators. Weight GEMMs run in FP8 where the roofline
// prices them at FP8 peak: with 128-wide block scales (DeepGEMM, as SGLang serves FP8 checkpoints)
// where the profile measured those; FP4 in its own tables (NVFP4 GEMMs, NVFP4 and MXFP4 MoE).
struct OperatorDtypes {
  std::string weights;           // weight GEMMs composed from GEMM tables
  std::string operator_weights;  // operator tables of operators with weights
  std::string experts;           // the routed experts' MoE kernel tables
  std::string operator_experts;  // the routed experts' operator table
  std::string kv;                // attention cores
};

OperatorDtypes operator_dtypes(const Precision& precision, const Device& device,
                               const KernelLibrary& library) {
  const auto table_dtype = [&](WeightFormat format) -> std::string {
    if (format == WeightFormat::kFp8 && device.fp8_flops > 0)
      return library.has("gemm", "fp8_block") ? "fp8_block" : "fp8";
    if (format == WeightFormat::kFp8) return "bf16";  // a device without FP8 runs BF16
    return name_of(kWeightFormatNames, format);
  };
  const auto operator_dtype = [&](WeightFormat format) -> std::string {
    const std::string dtype = table_dtype(format);
    return dtype == "fp8_block" ? "fp8" : dtype;
  };
  OperatorDtypes dtypes;
  dtypes.weights = table_dtype(precision.weights);
  dtypes.operator_weights = operator_dtype(precision.weights);
  dtypes.experts = table_dtype(precision.experts);
  dtypes.operator_experts = operator_dtype(precision.experts);
  dtypes.kv = precision.kv_bytes < 2.0 ? "fp8" : "bf16";
  return dtypes;
}

// Each operator from the profile's tables where it has them, else from the roofline or nothing.
class OperatorBuilder {
 public:
  OperatorBuilder(const MoeModel& model, const KernelLibrary& library, const RooflineCostModel& roofline,
                  OperatorDtypes dtypes, double activation_bytes)
      : model_(model),
        library_(library),
        roofline_(roofline),
        dtypes_(std::move(dtypes)),
        activation_bytes_(activation_bytes) {}

  const OperatorDtypes& dtypes() const { return dtypes_; }

  // The operator's own table, else its GEMMs (when the profile has GEMM tables), else nothing.
  std::unique_ptr<Operator> composed(const char* kernel, const char* name, const std::string& table_dtype,
                                     const std::vector<GemmShape>& gemms, const std::string& dtype,
                                     double bytes_per_weight) const {
    if (auto table = operator_table(library_, model_, kernel, table_dtype, name)) return table;
    if (gemms.empty() || !library_.has("gemm", dtype)) return nullptr;
    std::vector<Part> parts;
    for (const GemmShape& g : gemms) parts.push_back(gemm_part(g, dtype, bytes_per_weight));
    return std::make_unique<Operator>(name, std::move(parts));
  }

  // The operator table (plus permutes when measured), else the fused MoE kernel over a balanced
  // histogram.
  std::unique_ptr<Operator> routed_experts(bool experts_see_whole_batch) const {
    const std::string& table_dtype = dtypes_.operator_experts;
    if (operator_table(library_, model_, "routed_experts", table_dtype, "routed experts")) {
      std::vector<Part> parts;
      for (const char* kernel : {"routed_experts", "token_permute", "token_unpermute"}) {
        const std::string shape = kernel_shape(kernel, model_);
        std::shared_ptr<KernelCurve> curve =
            library_.curve(kernel, shape, kernel == std::string("routed_experts") ? table_dtype : "bf16");
        if (!curve) continue;
        Part part = curve_part(kernel, curve);
        if (kernel != std::string("routed_experts"))
          part.seconds = [curve](double, double rows) { return curve->seconds(rows); };
        parts.push_back(std::move(part));
      }
      return std::make_unique<Operator>("routed experts", std::move(parts));
    }
    // The table's rows of fewer experts are EP ranks that were given the group's whole batch
    // (SGLang's EP without DeepEP: a rank computes every top-k slot of each token reaching it): they
    // price the allgather dispatch. Under any other a rank is given only its own tokens' copies.
    const std::string shape =
        fmt::format("hidden={} ffn={} experts={} top_k={} distribution=balanced", model_.hidden,
                    model_.expert_ffn, model_.routed_experts, model_.top_k);
    if (std::shared_ptr<KernelCurve> curve = experts_see_whole_batch
                                                 ? library_.curve("moe_experts", shape, dtypes_.experts)
                                                 : library_.moe_experts_without_ep(shape, dtypes_.experts))
      return std::make_unique<Operator>("routed experts",
                                        std::vector<Part>{curve_part("moe_experts", curve)});
    return nullptr;
  }

  // An attention core: its operator table, else the MLA or GQA kernel at this rank's heads.
  std::unique_ptr<Operator> attention_core(const char* kernel, const char* family, const char* name) const {
    if (auto table = operator_table(library_, model_, kernel, dtypes_.kv, name)) return table;
    const AttentionShape& a = model_.attention;
    const bool mla = a.kind == AttentionKind::kMla;
    const std::string core_shape = mla ? fmt::format("heads={}", a.heads)
                                       : fmt::format("heads={} kv_heads={} head_dim={} window=0", a.heads,
                                                     std::max(1, a.kv_heads), a.head_dim);
    std::shared_ptr<KernelCurve> curve =
        library_.curve(fmt::format("{}_{}", mla ? "mla" : "gqa", family), core_shape, dtypes_.kv);
    if (!curve) return nullptr;
    return std::make_unique<Operator>(name, std::vector<Part>{curve_part(family, curve)});
  }

 private:
  // A GEMM's table, else the roofline's GEMM.
  Part gemm_part(const GemmShape& g, const std::string& dtype, double bytes_per_weight) const {
    const std::string shape = fmt::format("n={} k={}", g.n, g.k);
    if (std::shared_ptr<KernelCurve> curve = library_.curve("gemm", shape, dtype))
      return curve_part("gemm " + shape, std::move(curve));
    Part part{"gemm " + shape, Coverage::kRoofline, "efficiency.gemm", {}};
    part.seconds = [roofline = &roofline_, g, bytes_per_weight, activation_bytes = activation_bytes_](
                       double tokens, double) {
      const double n = static_cast<double>(g.n), k = static_cast<double>(g.k);
      return roofline->seconds(
          {2 * tokens * n * k, n * k * bytes_per_weight + tokens * (n + k) * activation_bytes},
          KernelKind::kGemm);
    };
    return part;
  }

  const MoeModel& model_;
  const KernelLibrary& library_;
  const RooflineCostModel& roofline_;
  OperatorDtypes dtypes_;
  double activation_bytes_;
};

}  // namespace

CalibratedCostModel::~CalibratedCostModel() = default;

CalibratedCostModel::CalibratedCostModel(const MoeModel& model, const Device& device,
                                         const CalibrationProfile& profile, const Precision& precision,
                                         bool allow_extrapolation, bool experts_see_whole_batch)
    : model_(model),
      precision_(precision),
      roofline_(model, device, profile, precision),
      library_(profile, device, allow_extrapolation) {
  const OperatorBuilder build(model, library_, roofline_, operator_dtypes(precision, device, library_),
                              precision.activation_bytes);
  const OperatorDtypes& dtype = build.dtypes();
  const double weight_bytes = precision.weight_bytes();
  projections_ = build.composed("attention_projections", "attention projections", dtype.operator_weights,
                                attention_projection_gemms(model), dtype.weights, weight_bytes);
  // Composed from GEMM tables, the router and the LM head stay in BF16 as SGLang runs them; an
  // operator table of the LM head is of the weights' precision (the project's microbenchmarks time
  // it so).
  if (!model.dense()) gate_ = build.composed("gate", "router", "bf16", {gate_gemm(model)}, "bf16", 2.0);
  head_ = build.composed("lm_head", "LM head", dtype.operator_weights, {lm_head_gemm(model)}, "bf16", 2.0);
  if (model.shared_experts > 0)
    shared_ = build.composed(
        "shared_experts", "shared experts", dtype.operator_weights,
        swiglu_gemms(model, static_cast<long long>(model.shared_experts) * model.shared_expert_ffn),
        dtype.weights, weight_bytes);
  if (model.moe_layers() < model.layers && model.dense_ffn > 0)
    dense_ = build.composed("dense_ffn", "dense FFN", dtype.operator_weights,
                            swiglu_gemms(model, model.dense_ffn), dtype.weights, weight_bytes);
  if (!model.dense()) routed_ = build.routed_experts(experts_see_whole_batch);
  decode_ = build.attention_core("attention_decode", "decode", "attention decode");
  prefill_ = build.attention_core("attention_prefill", "prefill", "attention prefill");
  prefill_from_prompts_ = prefill_ && !operator_table(library_, model, "attention_prefill", dtype.kv, "");
}

double CalibratedCostModel::prefill_chunk(int new_tokens, long long visible_prior) const {
  const auto n = static_cast<double>(new_tokens), prior = static_cast<double>(visible_prior);
  if (!prefill_from_prompts_) return prefill_->seconds(n, prior + n);
  // A kernel table times prompts without a cached prefix: a chunk after `prior` cached tokens is
  // priced as the prompt of prior + n tokens less the part before the chunk (causal work grows
  // with the square of the length), as aiconfigurator's SDK does.
  const double full = prior + n;
  return prefill_->seconds(1, full) * (full * full - prior * prior) / (full * full);
}

double CalibratedCostModel::attention(int layer, std::span<const SequenceChunk> batch) const {
  if (!projections_ && !decode_ && !prefill_) return roofline_.attention(layer, batch);
  long long tokens = 0, decode_context = 0;
  std::vector<SequenceChunk> decodes, prefills;  // for the parts the profile has no table of
  double seconds = 0;
  for (const SequenceChunk& chunk : batch) {
    if (chunk.new_tokens <= 0) continue;
    tokens += chunk.new_tokens;
    const long long visible = visible_prior_context(model_, layer, chunk.prior_context);
    if (chunk.new_tokens == 1) {
      decodes.push_back(chunk);
      decode_context += visible + 1;
    } else if (prefill_) {
      seconds += prefill_chunk(chunk.new_tokens, visible);
    } else {
      prefills.push_back(chunk);
    }
  }
  if (tokens == 0) return 0.0;
  seconds += projections_ ? projections_->seconds(static_cast<double>(tokens))
                          : roofline_.seconds(attention_projection_cost(model_, tokens, precision_),
                                              KernelKind::kGemm);
  if (!decodes.empty()) {
    const auto sequences = static_cast<double>(decodes.size());
    seconds += decode_ ? decode_->seconds(sequences, static_cast<double>(decode_context) / sequences)
                       : roofline_.seconds(attention_core_cost(model_, layer, decodes, precision_),
                                           KernelKind::kAttention);
  }
  if (!prefills.empty())
    seconds +=
        roofline_.seconds(attention_core_cost(model_, layer, prefills, precision_), KernelKind::kAttention);
  return seconds;
}

double CalibratedCostModel::routed_experts(std::span<const int> tokens_per_expert) const {
  if (!routed_) return roofline_.routed_experts(tokens_per_expert);
  const long long tokens = std::accumulate(tokens_per_expert.begin(), tokens_per_expert.end(), 0LL);
  const auto active =
      std::count_if(tokens_per_expert.begin(), tokens_per_expert.end(), [](int t) { return t > 0; });
  if (tokens <= 0) return 0.0;
  return routed_memo_.get(static_cast<std::size_t>(active), tokens, [&] {
    return routed_->seconds(static_cast<double>(active), static_cast<double>(tokens));
  });
}

double CalibratedCostModel::gate(long long tokens) const {
  return tokens > 0 && gate_ ? gate_->seconds(static_cast<double>(tokens)) : roofline_.gate(tokens);
}

double CalibratedCostModel::shared_experts(long long tokens) const {
  return tokens > 0 && shared_ ? shared_->seconds(static_cast<double>(tokens))
                               : roofline_.shared_experts(tokens);
}

double CalibratedCostModel::dense_ffn(long long tokens) const {
  return tokens > 0 && dense_ ? dense_->seconds(static_cast<double>(tokens)) : roofline_.dense_ffn(tokens);
}

double CalibratedCostModel::lm_head(long long tokens) const {
  return tokens > 0 && head_ ? head_->seconds(static_cast<double>(tokens)) : roofline_.lm_head(tokens);
}

std::vector<OperatorCoverage> CalibratedCostModel::coverage() const {
  std::vector<OperatorCoverage> all;
  const std::pair<const char*, const Operator*> operators[] = {{"attention projections", projections_.get()},
                                                               {"attention decode", decode_.get()},
                                                               {"attention prefill", prefill_.get()},
                                                               {"router", gate_.get()},
                                                               {"routed experts", routed_.get()},
                                                               {"shared experts", shared_.get()},
                                                               {"dense FFN", dense_.get()},
                                                               {"LM head", head_.get()}};
  for (const auto& [name, op] : operators) {
    if (op) {
      all.push_back(op->coverage());
      continue;
    }
    const bool absent =
        ((name == std::string("router") || name == std::string("routed experts")) && model_.dense()) ||
        (name == std::string("shared experts") && model_.shared_experts == 0) ||
        (name == std::string("dense FFN") && !(model_.moe_layers() < model_.layers && model_.dense_ffn > 0));
    if (!absent) all.push_back({name, Coverage::kRoofline, "the profile's efficiencies"});
  }
  // No table measures them (models/operator_costs.hpp ElementwiseWork).
  all.push_back(
      {"elementwise kernels", Coverage::kRoofline,
       "RMSNorm, RoPE, SiLU x up: memory-bound at the profile's launch floor and memory efficiency"});
  return all;
}

}  // namespace semsim
