#pragma once
// A calibration profile (format version 2, see calibrate/README.md): how a device performs on the
// kernels and collectives of MoE serving. Every profile has achievable fractions of the datasheet
// (read by the roofline and the network); a measured profile adds per-kernel time tables over the
// benchmarked grid and per-collective fits, each with the residuals of its fit. `source: datasheet`
// profiles (calibrate/profiles/*-datasheet.yaml, embedded) carry documented assumptions so the
// simulator runs before any measurement.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/format/engine_costs.hpp"
#include "models/device.hpp"
#include "models/yaml_input.hpp"

namespace semsim {

// Relative errors |predicted - measured| / measured of a fit, over `samples` held-out points.
struct FitResiduals {
  double median = 0;
  double p95 = 0;
  int samples = 0;
  bool operator==(const FitResiduals&) const = default;
};

struct TableAxis {
  std::string name;
  std::vector<double> values;  // positive, strictly increasing
  bool operator==(const TableAxis&) const = default;
};

// Measured seconds of one kernel on one shape over a grid of one or two axes (calibrate/format/kernels.hpp
// names them). Grid points that were not measured (e.g. more active experts than tokens) are empty.
struct KernelTable {
  std::string kernel;          // a name from kernel_specs()
  std::string shape;           // "key=value ..." as kernel_shape() writes it for a model
  std::string dtype = "bf16";  // bf16 | fp8 (GEMM weights and activations)
  std::string implementation;  // what ran, e.g. cublasGemmGroupedBatchedEx
  std::vector<TableAxis> axes;
  // Kernels pay for whole tiles of their last axis (a GEMM of 129 rows runs the tiles of 256 when
  // its tile is 128 rows): the table is measured and asked at multiples of `tile` (1: no tiles).
  double tile = 1;
  std::vector<std::optional<double>> seconds;  // row-major: [i0 * axes[1].size() + i1]
  FitResiduals residuals;
  // Where the table starts in the profile file it was read from (0: made in memory, never read):
  // errors about the table (a query far outside its grid) cite it.
  int line = 0;

  std::size_t columns() const { return axes.size() > 1 ? axes[1].values.size() : axes.at(0).values.size(); }
  bool operator==(const KernelTable&) const = default;
};

// One collective at one link level and rank count: time(bytes) = alpha + bus_bytes / (bus_bandwidth *
// factor(message bytes)), with bus bytes in the nccl-tests convention and `factor` interpolated over
// the measured message sizes (1 at large messages; below 1 where small messages waste bandwidth).
struct CollectiveFit {
  std::string collective;  // a name from collective_names()
  std::string level;       // scaleup | scaleout
  int ranks = 0;
  double alpha = 0;                  // seconds
  double bus_bandwidth = 0;          // bytes/s at the largest messages
  double efficiency = 0;             // bus_bandwidth / the datasheet bandwidth of one link of the level
  std::vector<double> factor_bytes;  // message sizes: bytes per peer for all_to_all(v), per rank otherwise
  std::vector<double> factor;
  FitResiduals residuals;
  bool operator==(const CollectiveFit&) const = default;
};

// What one source table gave a profile: its rows, those used, and why the others were not.
struct SourceTable {
  std::string file;  // FOLDER/NAME of the table, without the path to its folder
  int rows = 0;
  int used = 0;
  int repeats = 0;                     // rows repeating an earlier row's measurement (averaged)
  std::map<std::string, int> skipped;  // reason -> rows
  bool operator==(const SourceTable&) const = default;
};

// The machines a profile's collectives were measured on (calibrate/import/raw_results.hpp finds it).
struct ProfileTopology {
  int nodes = 1;
  int gpus_per_node = 0;
  int nics_per_node = 0;           // InfiniBand/RoCE adapters per node (0: none seen)
  std::vector<std::string> hosts;  // one per node, in rank order
  bool operator==(const ProfileTopology&) const = default;
};

// A measured row the fit kept out: it disagrees with the measured sizes on both sides of it by more
// than kOutlierFactor (calibrate/fit/fit.hpp), as one spike or dip of a row.
struct OutlierRow {
  std::string kernel, shape, dtype;
  std::vector<double> at;  // its coordinates on the table's axes
  double seconds = 0;
  std::vector<double> neighbours;  // the mean seconds of the measured sizes either side of the run
  bool operator==(const OutlierRow&) const = default;
};

// Where a measured profile came from.
struct ProfileProvenance {
  std::string date;    // ISO 8601, UTC: when it was measured ("" when the source does not say)
  std::string gpu;     // CUDA device name
  int gpus = 0;        // devices on the machine (the largest rank count measured)
  std::string driver;  // driver version
  std::string cuda;    // CUDA runtime version
  std::string cublas;
  std::string nccl;
  std::string database;    // a public database the tables came from ("" for the project's own suite)
  std::string frameworks;  // serving frameworks and versions whose kernels were timed
  std::vector<SourceTable> tables;
  std::optional<ProfileTopology> topology;  // the project's own suite: what it ran on
  std::vector<OutlierRow> outliers;         // rows the kernel fits kept out
  bool operator==(const ProfileProvenance&) const = default;
};

// How well a profile's model predicts measurements it did not fit, per kernel (or collective)
// family: within a measured shape (k-fold over its samples) and across shapes (each shape left
// out and predicted from its neighbours by the cross-shape model).
struct FamilyResiduals {
  std::string family;  // a kernel name, or nccl
  FitResiduals within_shape;
  FitResiduals across_shapes;
  bool operator==(const FamilyResiduals&) const = default;
};

struct CalibrationProfile {
  std::string name = "datasheet";
  std::string source = "datasheet";  // datasheet | measured
  std::string device;
  std::optional<ProfileProvenance> provenance;  // measured profiles
  double gemm_efficiency = 0.70;                // fraction of dense peak FLOP/s reached by GEMM-like kernels
  double attention_efficiency = 0.45;           // fraction of BF16 peak reached by attention kernels
  double memory_efficiency = 0.80;              // fraction of HBM bandwidth reached by memory-bound kernels
  double scaleup_efficiency = 0.80;    // fraction of scale-up link bandwidth reached by NCCL all-to-all
  double scaleout_efficiency = 0.85;   // fraction of NIC bandwidth reached over the fabric
  double kernel_overhead = 4e-6;       // seconds per kernel launch (fixed cost of small kernels)
  double collective_overhead = 10e-6;  // seconds of software setup per collective
  EngineCosts engine;                  // the serving engine's host work (scenarios with an engine:)
  std::vector<KernelTable> kernels;
  std::vector<CollectiveFit> collectives;
  std::vector<FamilyResiduals> residuals;
  // Per kernel family, the weight w of the cross-shape model in the time of a measured shape:
  // own^(1 - w) * neighbours^w (calibrate/fit/kernel_library.hpp); families left out use their own
  // tables alone.
  std::map<std::string, double> cross_shape_weights;
  std::string notes;

  // The device's embedded datasheet profile (calibrate/profiles/<device>-datasheet.yaml), or the
  // generic assumptions above for a device that has none (a device defined in a user file).
  static CalibrationProfile datasheet(const Device& device);
  // The device's embedded measured profile (calibrate/profiles/<device>-measured.yaml, imported
  // from public per-kernel measurements), or null when none is embedded for it. Read once per
  // process and shared: it is megabytes, and every scenario of a sweep holds it.
  static std::shared_ptr<const CalibrationProfile> measured(const Device& device);
  // The file under calibrate/profiles/ that measured(device) was packed from: for a device of the same
  // silicon as a measured one (the H800), that one's, whose tables it keeps, lines and all.
  static std::string measured_file(const Device& device);
  // What a scenario runs with when it names no profile: the measured profile where one is
  // embedded, else the datasheet's.
  static std::shared_ptr<const CalibrationProfile> standard(const Device& device);
  // A profile file; its `device` must match the cluster's device. Keys it leaves out keep the
  // device's datasheet values (or those of `defaults`).
  static CalibrationProfile from_yaml(const YamlInput& in, const Device& device);
  static CalibrationProfile from_yaml(const YamlInput& in, const Device& device, CalibrationProfile defaults);
  // The profile as a version-2 YAML document that from_yaml reads back unchanged.
  std::string to_yaml() const;

  const KernelTable* find_kernel(const std::string& kernel, const std::string& shape,
                                 const std::string& dtype) const;
  // "name (measured)", or for a datasheet profile a warning that no kernel was measured: every time
  // it gives is a roofline over the device's datasheet figures (what `check` and `coverage` print).
  std::string describe_source() const;
  bool operator==(const CalibrationProfile&) const = default;
};

}  // namespace semsim
