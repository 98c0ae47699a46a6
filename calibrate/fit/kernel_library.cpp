#include "calibrate/fit/kernel_library.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "calibrate/fit/moe_shape_model.hpp"
#include "calibrate/fit/point_memo.hpp"
#include "calibrate/format/kernels.hpp"
#include "models/input_error.hpp"
#include "models/operator_costs.hpp"

namespace semsim {
namespace {

// "key=value ..." split into its pairs (values kept as text: some are words, e.g. a distribution).
std::map<std::string, std::string> shape_pairs(const std::string& shape) {
  std::map<std::string, std::string> pairs;
  std::istringstream words(shape);
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    pairs[word.substr(0, equals)] = equals == std::string::npos ? "" : word.substr(equals + 1);
  }
  return pairs;
}

double shape_number(const std::map<std::string, std::string>& pairs, const char* key) {
  const auto at = pairs.find(key);
  const auto value = at == pairs.end() ? std::nullopt : parse_number(at->second);
  if (!value) throw std::invalid_argument(fmt::format("kernel shape has no number '{}'", key));
  return *value;
}

// Squared distance between two shapes in log space, or nothing when they differ in kind (a word
// or a zero that does not match, or other keys).
std::optional<double> shape_distance(const std::map<std::string, std::string>& a,
                                     const std::map<std::string, std::string>& b) {
  if (a.size() != b.size()) return std::nullopt;
  double squared = 0;
  for (const auto& [key, value] : a) {
    const auto other = b.find(key);
    if (other == b.end()) return std::nullopt;
    const auto x = parse_number(value), y = parse_number(other->second);
    if (!x || !y || *x <= 0 || *y <= 0) {
      if (value != other->second) return std::nullopt;
      continue;
    }
    squared += std::pow(std::log(*x / *y), 2);
  }
  return squared;
}

using ShapePairs = std::map<std::string, std::string>;

double roofline_seconds(const std::string& kernel, const ShapePairs& shape, const std::string& dtype,
                        double x, double y, const Device& device);

BeyondWork beyond_work(const KernelTable& table) {
  const KernelSpec* spec = find_kernel_spec(table.kernel);
  return spec != nullptr && spec->work_at_best_rate ? BeyondWork::kBestRate : BeyondWork::kTrend;
}

class TableCurve final : public KernelCurve {
 public:
  TableCurve(const KernelTable& table, std::string label, bool allow_extrapolation)
      : lookup_(table, std::move(label), allow_extrapolation, beyond_work(table)), shape_(table.shape) {}
  double seconds(double x, double y) const override { return lookup_.seconds(x, y); }
  Coverage coverage() const override { return Coverage::kMeasured; }
  std::string source() const override { return shape_; }

 private:
  KernelTableLookup lookup_;
  std::string shape_;
};

class CrossShapeCurve final : public KernelCurve {
 public:
  struct Neighbour {
    KernelTableLookup lookup;
    std::string shape;
    ShapePairs pairs;  // `shape` parsed once: the roofline reads it at every new point
    double weight;
  };
  CrossShapeCurve(std::string kernel, std::string shape, std::string dtype, const Device& device,
                  std::vector<Neighbour> neighbours)
      : kernel_(std::move(kernel)),
        pairs_(shape_pairs(shape)),
        dtype_(std::move(dtype)),
        device_(device),
        neighbours_(std::move(neighbours)) {}

  double seconds(double x, double y) const override {
    return memo_.get(x, y, [&] {
      double weights = 0, log_efficiency = 0;
      std::optional<InputError> outside;
      for (const Neighbour& n : neighbours_) {
        try {
          const double measured = n.lookup.seconds(x, y);
          log_efficiency +=
              n.weight * std::log(roofline_seconds(kernel_, n.pairs, dtype_, x, y, device_) / measured);
          weights += n.weight;
        } catch (const InputError& error) {
          outside = error;  // this neighbour was not measured that far: the others may have been
        }
      }
      if (weights == 0) throw *outside;
      return roofline_seconds(kernel_, pairs_, dtype_, x, y, device_) / std::exp(log_efficiency / weights);
    });
  }
  Coverage coverage() const override { return Coverage::kAcrossShapes; }
  std::string source() const override {
    std::vector<std::string> shapes;
    for (const Neighbour& n : neighbours_) shapes.push_back(n.shape);
    return "across: " + fmt::format("{}", fmt::join(shapes, "; "));
  }

 private:
  std::string kernel_;
  ShapePairs pairs_;
  std::string dtype_;
  const Device& device_;
  std::vector<Neighbour> neighbours_;
  mutable PointMemo memo_;
};

// The fused MoE kernel of a rank given only its own copies: its share of the kernel of all the
// shape's experts at the same load per expert, or the EP rows' time at its copies where that is
// less (KernelLibrary::moe_experts_without_ep).
class WithoutEpCurve final : public KernelCurve {
 public:
  WithoutEpCurve(std::unique_ptr<KernelCurve> all_experts, std::unique_ptr<KernelCurve> ep_rows,
                 double experts)
      : all_experts_(std::move(all_experts)), ep_rows_(std::move(ep_rows)), experts_(experts) {}
  double seconds(double experts, double copies) const override {
    const double share = experts / experts_ * all_experts_->seconds(experts_, copies * experts_ / experts);
    try {
      return std::min(share, ep_rows_->seconds(experts, copies));
    } catch (const InputError&) {
      return share;  // the EP rows were not measured that far
    }
  }
  Coverage coverage() const override { return all_experts_->coverage(); }
  std::string source() const override {
    return fmt::format("{}, its {} experts' row at the rank's load per expert", all_experts_->source(),
                       experts_);
  }

 private:
  std::unique_ptr<KernelCurve> all_experts_, ep_rows_;
  double experts_;
};

// A measured shape's own table pooled with its neighbours: own^(1 - w) * neighbours^w, the
// neighbours' part dropped where they were not measured that far.
class PooledCurve final : public KernelCurve {
 public:
  PooledCurve(std::unique_ptr<KernelCurve> own, std::unique_ptr<KernelCurve> neighbours, double weight)
      : own_(std::move(own)), neighbours_(std::move(neighbours)), weight_(weight) {}
  double seconds(double x, double y) const override {
    const double own = own_->seconds(x, y);
    try {
      return std::pow(own, 1 - weight_) * std::pow(neighbours_->seconds(x, y), weight_);
    } catch (const InputError&) {
      return own;
    }
  }
  Coverage coverage() const override { return Coverage::kMeasured; }
  std::string source() const override {
    return fmt::format("{} pooled {:.2f} with {}", own_->source(), weight_, neighbours_->source());
  }

 private:
  std::unique_ptr<KernelCurve> own_, neighbours_;
  double weight_;
};

// A table's dtype as a weight format: "fp8" and "fp8_block" are both FP8.
WeightFormat table_format(const std::string& dtype) {
  if (dtype == "bf16") return WeightFormat::kBf16;
  if (dtype == "nvfp4") return WeightFormat::kNvfp4;
  if (dtype == "mxfp4") return WeightFormat::kMxfp4;
  return WeightFormat::kFp8;
}

double peak_flops(const std::string& dtype, const Device& device) {
  return semsim::peak_flops(table_format(dtype), device);
}

double element_bytes(const std::string& dtype) {
  return weight_format_bytes(table_format(dtype));
}

}  // namespace

std::string_view coverage_name(Coverage coverage) {
  switch (coverage) {
    case Coverage::kMeasured:
      return "measured";
    case Coverage::kAcrossShapes:
      return "interpolated";
    case Coverage::kRoofline:
      return "roofline";
  }
  return "";
}

double kernel_roofline_seconds(const std::string& kernel, const std::string& shape, const std::string& dtype,
                               double x, double y, const Device& device) {
  return roofline_seconds(kernel, shape_pairs(shape), dtype, x, y, device);
}

namespace {

// FLOPs and HBM bytes of each kernel family, counted as models/operator_costs.cpp counts the
// operators they make up; only their ratios across neighbouring shapes matter here.
double roofline_seconds(const std::string& kernel, const ShapePairs& s, const std::string& dtype, double x,
                        double y, const Device& device) {
  const double flops_rate = peak_flops(dtype, device), bandwidth = device.hbm_bandwidth;
  double flops = 0, bytes = 0;
  const double w = element_bytes(dtype);
  if (kernel == "gemm") {
    const double n = shape_number(s, "n"), k = shape_number(s, "k");
    flops = 2 * x * n * k;
    bytes = x * k * w + n * k * w + x * n * 2;
  } else if (kernel == "moe_experts") {
    const double hidden = shape_number(s, "hidden"), ffn = shape_number(s, "ffn");
    flops = 2 * y * 3 * hidden * ffn;
    bytes = std::min(x, std::max(1.0, y)) * 3 * hidden * ffn * w + y * hidden * 2 * 2;
  } else if (kernel == "mla_prefill" || kernel == "mla_decode") {
    // DeepSeek's MLA: 192-wide query/key heads and 128-wide values over the 512 + 64 latent.
    const double heads = shape_number(s, "heads");
    const double kv = kernel == "mla_decode" ? 1.0 : 0.0;
    flops = kv > 0 ? 2 * x * heads * y * (576 + 512) : x * heads * y * y * (192 + 128);
    bytes = kv > 0 ? x * y * 576 * w : x * y * (heads * (192 + 128) + 576) * 2;
  } else if (kernel == "gqa_prefill" || kernel == "gqa_decode") {
    const double heads = shape_number(s, "heads"), kv_heads = shape_number(s, "kv_heads");
    const double head_dim = shape_number(s, "head_dim"), window = shape_number(s, "window");
    const double seen = window > 0 ? std::min(y, window) : y;
    if (kernel == "gqa_decode") {
      flops = 2 * x * heads * seen * 2 * head_dim;
      bytes = x * seen * 2 * kv_heads * head_dim * w;
    } else {
      const double attended = window > 0 ? y * seen - seen * seen / 2 : y * y / 2;
      flops = 2 * x * heads * attended * 2 * head_dim;
      bytes = x * y * (heads + 2 * kv_heads) * head_dim * 2 * 2;
    }
  } else if (kernel.starts_with("deepep_")) {
    // Bytes each rank moves: its tokens' hidden states to the ranks of their experts.
    const double hidden = shape_number(s, "hidden"), top_k = shape_number(s, "top_k");
    return x * top_k * hidden * 2 / device.scaleup_bandwidth;
  } else {
    throw std::invalid_argument("roofline_seconds: not a kernel-scope table: " + kernel);
  }
  return std::max(flops / flops_rate, bytes / bandwidth);
}

}  // namespace

KernelLibrary::KernelLibrary(const CalibrationProfile& profile, const Device& device,
                             bool allow_extrapolation)
    : profile_(profile), device_(device), allow_extrapolation_(allow_extrapolation) {
  for (const KernelTable& table : profile.kernels) tables_[{table.kernel, table.dtype}].push_back(&table);
}

std::string KernelLibrary::label(const KernelTable& table) const {
  return fmt::format("calibration profile '{}': {} '{}' {}", profile_.name, table.kernel, table.shape,
                     table.dtype);
}

std::unique_ptr<KernelCurve> KernelLibrary::moe_experts_without_ep(const std::string& shape,
                                                                   const std::string& dtype) const {
  std::unique_ptr<KernelCurve> all_experts = curve("moe_experts", shape, dtype);
  if (!all_experts) return nullptr;
  return std::make_unique<WithoutEpCurve>(std::move(all_experts), curve("moe_experts", shape, dtype),
                                          shape_number(shape_pairs(shape), "experts"));
}

std::unique_ptr<KernelCurve> KernelLibrary::curve(const std::string& kernel, const std::string& shape,
                                                  const std::string& dtype, bool without_own_shape) const {
  const auto family = tables_.find({kernel, dtype});
  if (family == tables_.end()) return nullptr;
  const auto wanted = shape_pairs(shape);
  const KernelTable* own = nullptr;
  for (const KernelTable* table : family->second)
    if (table->shape == shape) own = table;
  // The fused MoE kernel is priced from shapes of its own backend only (moe_shape_model.hpp).
  const bool moe = kernel == "moe_experts";
  const std::string backend =
      !moe  ? ""
      : own ? own->implementation
            : moe_default_backend(family->second,
                                  wanted.contains("distribution") ? wanted.at("distribution") : "");
  std::vector<std::pair<double, const KernelTable*>> near;
  const auto moe_shape = moe ? MoeShape::parse(shape) : std::nullopt;
  for (const KernelTable* table : family->second) {
    if (table == own || (moe && table->implementation != backend)) continue;
    const auto other = moe_shape ? MoeShape::parse(table->shape) : std::nullopt;
    if (const auto distance = other ? moe_shape_distance(*moe_shape, *other)
                                    : shape_distance(wanted, shape_pairs(table->shape)))
      near.emplace_back(*distance, table);
  }
  const KernelSpec* spec = find_kernel_spec(kernel);
  const bool kernel_scope = spec != nullptr && spec->scope == KernelScope::kKernel;
  if (own && !without_own_shape) {
    auto table = std::make_unique<TableCurve>(*own, label(*own), allow_extrapolation_);
    const auto weight = profile_.cross_shape_weights.find(kernel);
    if (weight == profile_.cross_shape_weights.end() || weight->second <= 0 || near.empty() || !kernel_scope)
      return table;
    return std::make_unique<PooledCurve>(std::move(table), curve(kernel, shape, dtype, true), weight->second);
  }
  if (near.empty() || !kernel_scope) return nullptr;
  std::sort(near.begin(), near.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second->shape < b.second->shape;
  });
  near.resize(std::min(near.size(), kNeighbours));
  if (moe) {
    std::vector<MoeNeighbour> neighbours;
    for (const auto& [distance, table] : near)
      neighbours.push_back(
          {KernelTableLookup(*table, label(*table), allow_extrapolation_, beyond_work(*table)), table->shape,
           table->axes.back().values.front(), 1.0 / std::max(distance, 1e-12)});
    return make_moe_shape_curve(shape, dtype, std::move(neighbours),
                                moe_launch_floor(family->second, backend), device_);
  }
  std::vector<CrossShapeCurve::Neighbour> neighbours;
  for (const auto& [distance, table] : near)
    neighbours.push_back({KernelTableLookup(*table, label(*table), allow_extrapolation_, beyond_work(*table)),
                          table->shape, shape_pairs(table->shape), 1.0 / std::max(distance, 1e-12)});
  return std::make_unique<CrossShapeCurve>(kernel, shape, dtype, device_, std::move(neighbours));
}

}  // namespace semsim
