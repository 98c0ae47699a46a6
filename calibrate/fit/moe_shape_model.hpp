#pragma once
// The fused MoE kernel (`moe_experts`) of a shape the tables do not hold, from the shapes of the same
// backend (the table's `implementation`: Triton fused MoE, FlashInfer CUTLASS, ...) that they do, by
// the physics of its expert GEMMs rather than by raw times at the same coordinates.
//
// A rank of an EP group of degree ep = experts / x runs x local experts over y token copies. Two
// shapes at the same EP degree and the same copies per local expert run GEMMs of the same height per
// expert (the same tile padding, the same weight- or compute-bound regime, the same share of copies
// piled on expert 0 by a group's remote slots), so a neighbour is asked there — at x' = E' / ep,
// y' = y x' / x — and its time above the backend's launch floor is scaled by the roofline work
// (weight bytes, FLOPs and activations of hidden, ffn, active experts and copies) of the two shapes,
// to the power kMoeWorkExponent:
//
//   T(x, y) = floor + (T'(x', y') - floor) * (work(x, y) / work'(x', y'))^kMoeWorkExponent
//
// The neighbours (up to KernelLibrary::kNeighbours, same dtype, backend and routing distribution)
// are blended in log time by inverse squared distance in log (hidden, ffn, experts, top_k): their
// achieved rates at those points are the backend's efficiency curve, sampled where it is nearest.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/fit/interpolation.hpp"
#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/format/profile.hpp"
#include "models/device.hpp"

namespace semsim {

// The numbers of a `moe_experts` shape ("hidden=... ffn=... experts=... top_k=... distribution=...").
struct MoeShape {
  double hidden = 0, ffn = 0, experts = 0, top_k = 0;
  std::string distribution;
  // Nothing when a key is missing or not a positive number.
  static std::optional<MoeShape> parse(const std::string& shape);
};

// How far apart two shapes are for the blend: squared log distance over hidden, ffn, experts and
// top_k, the last two weighted by kMoeCountWeight; nothing when their distributions differ. Expert
// count and top-k set how a group's remote copies pile on a rank's first expert and how the kernel
// is tuned, which the scaling by work does not carry: weighting them 2 (against 1, 0.25 and 0) gave
// the least error on H100's shapes left out (p95 28.2 -> 27.6 %, Triton BF16 30.7 -> 29.8 %), and
// H200's agreed.
inline constexpr double kMoeCountWeight = 2.0;

// The share of the backend's least measured time taken as its launch floor: 0.95 (against the
// tables' 0.8) on H100's shapes left out (p95 28.9 -> 28.2 %), and on H200's.
inline constexpr double kMoeFloorShare = 0.95;

// Larger expert GEMMs reach a higher rate (fuller tiles and waves, more loads in flight per launch),
// so across shapes a kernel's time above its floor grows more slowly than its work: as work^0.85.
// Chosen on H100's shapes left out (median + p95 of the family: 0.335 at 1, 0.315 at 0.85, 0.317
// and 0.318 at 0.9 and 0.8; p95 Triton BF16 29.6 -> 28.4 %, FP8 25.6 -> 23.5 %, FlashInfer CUTLASS
// 20.6 -> 18.4 %), checked on H200's, B200's and GB200's (results/calibration-measured/).
inline constexpr double kMoeWorkExponent = 0.85;
std::optional<double> moe_shape_distance(const MoeShape& a, const MoeShape& b);

// The backend a `moe_experts` shape of `dtype` and `distribution` is priced as when the profile does
// not hold it: the implementation that measured the most shapes of that dtype and distribution
// (ties: the first by name) — the kernel the serving framework ran across its tables. "" when none.
std::string moe_default_backend(const std::vector<const KernelTable*>& tables,
                                const std::string& distribution);

// The least time of any table of `backend` among `tables`, times kMoeFloorShare: what no shape of
// that backend's kernel runs below (its launches), kept out of the scaling by work.
double moe_launch_floor(const std::vector<const KernelTable*>& tables, const std::string& backend);

// A measured shape of the same kernel, dtype, backend and distribution, and its blending weight.
struct MoeNeighbour {
  KernelTableLookup lookup;
  std::string shape;
  double least_copies;  // the least its table measured: below it the table answers that time
  double weight;
};

// The cross-shape curve of `shape` in `dtype` from `neighbours`, `floor` the backend's moe_launch_floor.
// A query no neighbour measured near enough is the nearest one's InputError.
std::unique_ptr<KernelCurve> make_moe_shape_curve(const std::string& shape, const std::string& dtype,
                                                  std::vector<MoeNeighbour> neighbours, double floor,
                                                  const Device& device);

}  // namespace semsim
