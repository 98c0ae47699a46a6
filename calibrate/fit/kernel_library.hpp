#pragma once
// A profile's kernel tables as curves the cost model asks: the table of the exact shape where the
// profile has one, otherwise a cross-shape model over the nearest measured shapes of the same
// kernel and dtype. The cross-shape model interpolates achieved efficiency — the kernel's roofline
// time (FLOPs at peak, bytes at HBM bandwidth, whichever is longer) over its measured time — at the
// same point of the axes, weighting neighbours by inverse squared distance in log shape space
// (every numeric shape key; non-numeric keys and a zero, such as no sliding window, must match).
// Efficiency changes slowly across shapes where raw times change by orders of magnitude, so this is
// what carries over from a measured shape to one in between. The fused MoE kernel has a model of
// its own (moe_shape_model.hpp): neighbours of its backend only, asked at the same EP degree and
// copies per expert, scaled by work above a launch floor.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/fit/interpolation.hpp"
#include "calibrate/format/profile.hpp"
#include "models/device.hpp"

namespace semsim {

enum class Coverage { kMeasured, kAcrossShapes, kRoofline };
std::string_view coverage_name(Coverage coverage);  // measured | interpolated | roofline

// The time of one kernel of one shape and dtype over its table axes.
class KernelCurve {
 public:
  virtual ~KernelCurve() = default;
  virtual double seconds(double x, double y = 0) const = 0;
  virtual Coverage coverage() const = 0;
  // Which measured shapes it comes from: "n=4096 k=7168", or "across: n=4096 k=6144, ...".
  virtual std::string source() const = 0;
};

// The roofline time of kernel-scope `kernel` (calibrate/format/kernels.hpp) of `shape` at (x, y) on
// `device`: what the cross-shape model normalises by.
double kernel_roofline_seconds(const std::string& kernel, const std::string& shape, const std::string& dtype,
                               double x, double y, const Device& device);

class KernelLibrary {
 public:
  // Queries far outside the measured grids are InputErrors unless `allow_extrapolation`.
  KernelLibrary(const CalibrationProfile& profile, const Device& device, bool allow_extrapolation);

  // The curve of `kernel` at `shape` in `dtype`, or nullptr when the profile has no table of that
  // kernel and dtype (the cost model then uses the roofline). A measured shape's table is pooled
  // with the cross-shape model by the profile's cross_shape_weight of the kernel (measurement noise
  // of one shape averages out against its neighbours'). Operator-scope tables are keyed by a
  // model's shape: only the exact one answers. `without_own_shape` ignores the
  // table of exactly `shape`, as leave-one-shape-out validation needs.
  std::unique_ptr<KernelCurve> curve(const std::string& kernel, const std::string& shape,
                                     const std::string& dtype, bool without_own_shape = false) const;

  // The fused MoE kernel (`moe_experts`) of `shape` as a rank given only its own token copies runs
  // it: experts / E * T(E, copies * E / experts), T the kernel of all the shape's E experts (no EP) at
  // the same load per expert — a shape not measured from its neighbours' kernels of all their experts
  // at that load — or, where less, the time of the tables' rows of `experts` (EP ranks given the
  // group's whole batch, as curve() answers) at `copies`. Both overestimate: beyond its largest
  // measured load T holds that load's rate, and an EP row computes remote slots too; the lesser is
  // the tighter. nullptr as curve() does.
  std::unique_ptr<KernelCurve> moe_experts_without_ep(const std::string& shape,
                                                      const std::string& dtype) const;

  // Whether the profile has any table of `kernel` in `dtype`.
  bool has(const std::string& kernel, const std::string& dtype) const {
    return tables_.contains({kernel, dtype});
  }
  // The dtypes the profile has tables of `kernel` in, in order.
  std::vector<std::string> dtypes(const std::string& kernel) const {
    std::vector<std::string> names;
    for (const auto& [key, tables] : tables_)
      if (key.first == kernel) names.push_back(key.second);
    return names;
  }

  // How many nearest measured shapes the cross-shape model blends.
  static constexpr std::size_t kNeighbours = 4;

 private:
  std::string label(const KernelTable& table) const;
  const CalibrationProfile& profile_;
  const Device& device_;
  bool allow_extrapolation_;
  std::map<std::pair<std::string, std::string>, std::vector<const KernelTable*>> tables_;  // (kernel, dtype)
};

}  // namespace semsim
