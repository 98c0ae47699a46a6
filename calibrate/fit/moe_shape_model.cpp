#include "calibrate/fit/moe_shape_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "models/input_error.hpp"

namespace semsim {

std::optional<MoeShape> MoeShape::parse(const std::string& shape) {
  std::map<std::string, std::string> pairs;
  std::istringstream words(shape);
  for (std::string word; words >> word;) {
    const auto equals = word.find('=');
    if (equals != std::string::npos) pairs[word.substr(0, equals)] = word.substr(equals + 1);
  }
  MoeShape s;
  for (const auto& [key, field] :
       {std::pair{"hidden", &MoeShape::hidden}, std::pair{"ffn", &MoeShape::ffn},
        std::pair{"experts", &MoeShape::experts}, std::pair{"top_k", &MoeShape::top_k}}) {
    const auto at = pairs.find(key);
    const auto value = at == pairs.end() ? std::nullopt : parse_number(at->second);
    if (!value || !(*value > 0)) return std::nullopt;
    s.*field = *value;
  }
  s.distribution = pairs.contains("distribution") ? pairs["distribution"] : "";
  return s;
}

std::optional<double> moe_shape_distance(const MoeShape& a, const MoeShape& b) {
  if (a.distribution != b.distribution) return std::nullopt;
  auto d = [](double u, double v) { return std::pow(std::log(u / v), 2); };
  return d(a.hidden, b.hidden) + d(a.ffn, b.ffn) +
         kMoeCountWeight * (d(a.experts, b.experts) + d(a.top_k, b.top_k));
}

std::string moe_default_backend(const std::vector<const KernelTable*>& tables,
                                const std::string& distribution) {
  std::map<std::string, int> shapes;
  for (const KernelTable* t : tables)
    if (const auto s = MoeShape::parse(t->shape); s && s->distribution == distribution)
      ++shapes[t->implementation];
  std::string best;
  int most = 0;
  for (const auto& [backend, count] : shapes)
    if (count > most) best = backend, most = count;
  return best;
}

double moe_launch_floor(const std::vector<const KernelTable*>& tables, const std::string& backend) {
  double least = std::numeric_limits<double>::infinity();
  for (const KernelTable* t : tables)
    if (t->implementation == backend)
      for (const auto& seconds : t->seconds)
        if (seconds) least = std::min(least, *seconds);
  return std::isfinite(least) ? kMoeFloorShare * least : 0.0;
}

namespace {

class MoeShapeCurve final : public KernelCurve {
 public:
  MoeShapeCurve(std::string shape, MoeShape moe, std::string dtype, std::vector<MoeNeighbour> neighbours,
                double floor, const Device& device)
      : shape_(std::move(shape)),
        moe_(moe),
        dtype_(std::move(dtype)),
        neighbours_(std::move(neighbours)),
        floor_(floor),
        device_(device) {
    for (const MoeNeighbour& n : neighbours_) neighbour_shapes_.push_back(*MoeShape::parse(n.shape));
  }

  double seconds(double x, double y) const override {
    const auto key = std::make_pair(x, y);
    if (const auto at = memo_.find(key); at != memo_.end()) return at->second;
    const double ep = moe_.experts / x;
    double weights = 0, log_seconds = 0;
    std::optional<InputError> outside;
    for (std::size_t i = 0; i < neighbours_.size(); ++i) {
      const MoeNeighbour& n = neighbours_[i];
      // The same EP degree and copies per local expert on the neighbour's own experts.
      const double nx = neighbour_shapes_[i].experts / ep;
      if (nx < 1) continue;  // fewer experts than the group has ranks: no such rank
      const double ny = std::max(y * nx / x, n.least_copies);
      double measured = 0;
      try {
        measured = n.lookup.seconds(nx, ny);
      } catch (const InputError& error) {
        if (!outside) outside = error;  // the nearest neighbour's reason, should none answer
        continue;
      }
      const double work_ratio =
          kernel_roofline_seconds("moe_experts", shape_, dtype_, x, ny * x / nx, device_) /
          kernel_roofline_seconds("moe_experts", n.shape, dtype_, nx, ny, device_);
      const double scaled =
          floor_ + std::max(measured - floor_, 0.0) * std::pow(work_ratio, kMoeWorkExponent);
      log_seconds += n.weight * std::log(std::max(scaled, floor_));
      weights += n.weight;
    }
    if (weights == 0) {
      if (outside) throw *outside;
      throw InputError(
          fmt::format("moe_experts '{}' {}: no measured shape of its backend has as many experts "
                      "as its EP group of {} ranks",
                      shape_, dtype_, ep));
    }
    const double value = std::exp(log_seconds / weights);
    memo_.emplace(key, value);
    return value;
  }
  Coverage coverage() const override { return Coverage::kAcrossShapes; }
  std::string source() const override {
    std::vector<std::string> shapes;
    for (const MoeNeighbour& n : neighbours_) shapes.push_back(n.shape);
    return "across: " + fmt::format("{}", fmt::join(shapes, "; "));
  }

 private:
  std::string shape_;
  MoeShape moe_;
  std::string dtype_;
  std::vector<MoeNeighbour> neighbours_;
  std::vector<MoeShape> neighbour_shapes_;
  double floor_;
  const Device& device_;
  mutable std::map<std::pair<double, double>, double> memo_;
};

}  // namespace

std::unique_ptr<KernelCurve> make_moe_shape_curve(const std::string& shape, const std::string& dtype,
                                                  std::vector<MoeNeighbour> neighbours, double floor,
                                                  const Device& device) {
  const auto moe = MoeShape::parse(shape);
  if (!moe || neighbours.empty()) return nullptr;
  for (const MoeNeighbour& n : neighbours)
    if (!MoeShape::parse(n.shape)) return nullptr;
  return std::make_unique<MoeShapeCurve>(shape, *moe, dtype, std::move(neighbours), floor, device);
}

}  // namespace semsim
