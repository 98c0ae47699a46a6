#pragma once
// The fitter: turns microbenchmark samples into a profile's kernel tables and collective fits, each
// with the residuals of predicting points the fit did not see.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/format/kernels.hpp"
#include "calibrate/format/profile.hpp"

namespace semsim {

// Median and 95th percentile (linear between order statistics) of relative errors.
FitResiduals residuals_of(std::vector<double> relative_errors);

// One measured kernel time at (x[, y]) on its axes.
struct KernelSample {
  double x = 0;
  double y = 0;  // second axis of two-axis kernels
  double seconds = 0;
};

// The table of one kernel on one shape: the grid is every distinct coordinate of `grid`; a row keeps
// its longest run of contiguous measured points (a point that failed to measure is a hole), and a
// row with fewer than two is dropped. Residuals: each interior grid point predicted from its row
// without it (leave one out), plus `held_out` samples off the grid (e.g. skewed expert histograms)
// predicted by the table. Nothing when too little was measured to make a table.
std::optional<KernelTable> fit_kernel_table(const KernelSpec& spec, const std::string& shape,
                                            const std::string& dtype, const std::string& implementation,
                                            const std::vector<KernelSample>& grid,
                                            const std::vector<KernelSample>& held_out = {});

// kLaunchFloorShare (calibrate/fit/interpolation.hpp): fit_scattered_table fits rows above it.

// A measured size of a row whose time differs from both measured sizes beside it by more than this
// factor (above both or below both), alone or in a run of at most kOutlierRun sizes, is an outlier:
// a spike or dip no smooth kernel law passes through (DeepGEMM FP8 n 3072 k 7168 takes 146-150 us at
// m 769-1024, 54 us at 768 and 67 us at 1281). A tile step is no outlier: the sizes after it stay up.
inline constexpr double kOutlierFactor = 1.5;
inline constexpr std::size_t kOutlierRun = 3;

// Of a two-axis table, a row whose measured sizes around x lie this far apart or more (three
// doublings) crosses the gap as the rows beside it that measured x cross it (fit_scattered_table):
// chosen on H100's rows left out (prefill attention p95 20.6 -> 19.4 %, MLA prefill 12.7 -> 11.9 %;
// 3 and 16 did worse) and checked on H200's.
inline constexpr double kWideGap = 8;

// The table of one kernel on one shape from samples scattered over its axes (a database's rows):
// rows at every distinct value of the first axis (two-axis kernels), and along the last axis the
// least-squares piecewise-linear fit of log(seconds - launch floor) over log x with a knot at every
// distinct value (repeated measurements of one point average), lightly penalised in curvature; the
// floor is a fixed share of the row's least time. A tiled kernel (KernelSpec::tiled) first rounds x
// up to whole tiles, of the size (1 to 128) whose tile multiples predict the samples, each left out
// in turn, best. A row is made non-decreasing (pool adjacent violators) when its measurements never
// decrease; one whose measurements dip keeps them (kernels switch tile configurations: a larger
// batch may really run faster). Each row
// covers its own measured range; a row with fewer than two distinct values is dropped. Residuals:
// `folds`-fold cross-validation over the samples (each fold predicted by the table fitted without
// it); `predictions`, when given, gets each sample's held-out prediction (nothing where it lay
// beyond the rest's reach). folds < 2 leaves both empty. Nothing when no row has two distinct values.
// Outliers (kOutlierFactor) of rows of at least five sizes are kept out of every fit, added to
// `outliers` when given, and not scored (a fold may still flag others among the rows it fits).
std::optional<KernelTable> fit_scattered_table(const KernelSpec& spec, const std::string& shape,
                                               const std::string& dtype, const std::string& implementation,
                                               const std::vector<KernelSample>& samples, int folds = 5,
                                               std::vector<std::optional<double>>* predictions = nullptr,
                                               std::vector<OutlierRow>* outliers = nullptr);

// One measured collective, nccl-tests conventions.
struct CollectiveSample {
  double bus_bytes = 0;      // bytes over the busiest link direction (algorithm bytes x bus factor)
  double message_bytes = 0;  // bytes per peer (all_to_all, all_to_allv), per rank otherwise
  double seconds = 0;
};

// Each size is taken at the least time of it and every larger size (more bytes never take less time);
// alpha from the smallest messages, bus bandwidth from the slope over the largest ones (bus bytes at
// least 1/8 of the largest), and at every measured size the bandwidth factor that makes
// alpha + bus_bytes / (bus_bandwidth * factor) pass through the sample, capped so that no message
// beats `link_bandwidth`. Residuals: every interior size predicted with its factor left out.
// One sample per message size (the first of repeats is kept); nothing with fewer than three sizes.
std::optional<CollectiveFit> fit_collective(const std::string& collective, const std::string& level,
                                            int ranks, std::vector<CollectiveSample> samples,
                                            double link_bandwidth);

// What a fit predicts for one collective.
double collective_seconds(const CollectiveFit& fit, double bus_bytes, double message_bytes);

// nccl-tests bus bytes of `collective` (all_reduce, all_gather, reduce_scatter, all_to_all) over
// `ranks` for `bytes` of the collective's size (nccl-tests' size: the whole buffer, every rank's
// shard together for all_gather and reduce_scatter), and the message size its bandwidth factor is
// indexed by (the calibration suite's convention: bytes per peer for all-to-all, the buffer for
// all-reduce, one rank's shard otherwise).
double nccl_bus_bytes(const std::string& collective, int ranks, double bytes);
double nccl_message_bytes(const std::string& collective, int ranks, double bytes);

}  // namespace semsim
