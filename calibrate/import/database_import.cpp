#include "calibrate/import/database_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/format/kernels.hpp"
#include "calibrate/import/measured_profile.hpp"
#include "models/input_error.hpp"

namespace semsim {
namespace {

struct PointRef {
  const MeasuredPoint* point;
  std::size_t table;
  std::size_t row;
};

// (kernel, shape, dtype) -> implementation -> its points.
using KernelGroups =
    std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, std::vector<PointRef>>>;

std::string joined_values(const std::vector<MeasuredTable>& tables, const std::string& column,
                          const std::string& kind_prefix = "") {
  std::set<std::string> values;
  for (const MeasuredTable& t : tables) {
    if (!t.kind.starts_with(kind_prefix)) continue;
    const auto at = t.provenance.find(column);
    if (at != t.provenance.end()) values.insert(at->second.begin(), at->second.end());
  }
  return fmt::format("{}", fmt::join(values, ", "));
}

// Every GPU the tables name must stand for `device` (device_preset_for_gpu: the preset whose display
// name shares the most words; an ambiguous name is taken at its word).
void check_device(const std::vector<MeasuredTable>& tables, const Device& device) {
  for (const MeasuredTable& t : tables) {
    const auto at = t.provenance.find("device");
    if (at == t.provenance.end()) continue;
    for (const std::string& gpu : at->second) {
      std::string preset;
      try {
        preset = device_preset_for_gpu(gpu);
      } catch (const InputError&) {
        // Several presets fit: at least the model (the first word with a digit, "H100") must be this one's.
        std::istringstream words(gpu);
        std::string word;
        while (words >> word && word.find_first_of("0123456789") == std::string::npos) {
        }
        if (word.empty() || device.display_name.find(word) != std::string::npos) continue;
        preset = "a " + word;
      }
      if (preset != device.name)
        throw InputError(fmt::format("{}: measured on '{}' ({}), not on the {} (--device {})", t.path, gpu,
                                     preset, device.display_name, device.name));
    }
  }
}

// One kernel shape's samples and each one's k-fold prediction by the shape's own table.
struct FittedShape {
  std::string kernel, shape, dtype, implementation;
  std::vector<KernelSample> samples;
  std::vector<std::optional<double>> own;
};

// Within a measured shape, a held-out row is predicted by the shape's own table (interpolating
// along its axes) and by its neighbours at the same point (the cross-shape model); each family's
// weight of the latter is the one that predicts the held-out rows best (least median + p95 of the
// relative error, weights 0, 0.05 .. 1), and the family's residuals are those of the blend. Across shapes:
// each shape's rows predicted by its neighbours alone. The fused MoE kernel's cross-shape model is per
// backend, so its residuals are also given per backend and dtype ("moe_experts:BACKEND:DTYPE", at the
// family's weight).
void blend_across_shapes(CalibrationProfile& profile, const Device& device,
                         const std::vector<FittedShape>& fitted) {
  const KernelLibrary library(profile, device, false);
  struct Triple {
    double own, cross, measured;
  };
  std::map<std::string, std::vector<Triple>> pairs;             // family -> held-out rows
  std::map<std::string, std::vector<double>> own_only, across;  // family -> relative errors
  std::map<std::string, std::string> kernel_of;                 // family -> its kernel
  for (const FittedShape& f : fitted) {
    std::vector<std::string> families{f.kernel};
    if (f.kernel == "moe_experts")
      families.push_back(fmt::format("{}:{}:{}", f.kernel, f.implementation, f.dtype));
    for (const std::string& family : families) kernel_of[family] = f.kernel;
    const auto cross = library.curve(f.kernel, f.shape, f.dtype, /*without_own_shape=*/true);
    for (std::size_t i = 0; i < f.samples.size(); ++i) {
      const KernelSample& s = f.samples[i];
      std::optional<double> neighbours;
      try {
        if (cross) neighbours = cross->seconds(s.x, s.y);
      } catch (const InputError&) {
        // beyond every neighbour's measured range: not a prediction the model makes
      }
      for (const std::string& family : families) {
        if (neighbours) across[family].push_back(std::abs(*neighbours - s.seconds) / s.seconds);
        if (f.own[i] && neighbours)
          pairs[family].push_back({*f.own[i], *neighbours, s.seconds});
        else if (f.own[i])
          own_only[family].push_back(std::abs(*f.own[i] - s.seconds) / s.seconds);
      }
    }
  }
  std::vector<std::string> order;  // each kernel, then its per-backend families
  for (const KernelSpec& spec : kernel_specs())
    for (const auto& [family, kernel] : kernel_of)
      if (kernel == spec.name && family == kernel) {
        order.push_back(family);
        for (const auto& [sub, of] : kernel_of)
          if (of == kernel && sub != kernel) order.push_back(sub);
      }
  for (const std::string& family : order) {
    const std::string& kernel = kernel_of[family];
    const std::vector<Triple>& rows = pairs[family];
    // The targets are the median and the 95th percentile of the error: the weight minimising their sum.
    double best_weight = 0, best = std::numeric_limits<double>::infinity();
    if (family != kernel) {
      const auto weight = profile.cross_shape_weights.find(kernel);
      best_weight = weight == profile.cross_shape_weights.end() ? 0.0 : weight->second;
    }
    for (int step = 0; step <= 20 && !rows.empty() && family == kernel; ++step) {
      const double w = step / 20.0;
      std::vector<double> errors;
      for (const Triple& t : rows)
        errors.push_back(std::abs(std::pow(t.own, 1 - w) * std::pow(t.cross, w) - t.measured) / t.measured);
      const FitResiduals r = residuals_of(std::move(errors));
      if (r.median + r.p95 < best - 1e-12) best = r.median + r.p95, best_weight = w;
    }
    std::vector<double> within = own_only[family];
    for (const Triple& t : rows) {
      const double blended = std::pow(t.own, 1 - best_weight) * std::pow(t.cross, best_weight);
      within.push_back(std::abs(blended - t.measured) / t.measured);
    }
    if (best_weight > 0 && family == kernel) profile.cross_shape_weights[kernel] = best_weight;
    profile.residuals.push_back(
        {family, residuals_of(std::move(within)), residuals_of(std::move(across[family]))});
  }
}

using CollectiveGroups = std::map<std::pair<std::string, int>, std::vector<PointRef>>;  // (collective, ranks)
using SkippedRows = std::vector<std::vector<std::string>>;  // per table: why each row is left out ("" = used)

// The tables' points by the kernel table or collective fit they measure.
struct GroupedPoints {
  KernelGroups kernels;
  CollectiveGroups collectives;
  SkippedRows skipped;
};

GroupedPoints group_points(const std::vector<MeasuredTable>& tables) {
  GroupedPoints g;
  g.skipped.resize(tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    g.skipped[t].resize(tables[t].rows.size());
    for (std::size_t r = 0; r < tables[t].rows.size(); ++r) {
      const MeasuredRow& row = tables[t].rows[r];
      g.skipped[t][r] = row.skipped;
      for (const MeasuredPoint& p : row.points) {
        if (p.kernel.starts_with("nccl_"))
          g.collectives[{p.kernel.substr(5), p.ranks}].push_back({&p, t, r});
        else
          g.kernels[{p.kernel, p.shape, p.dtype}][p.implementation].push_back({&p, t, r});
      }
    }
  }
  return g;
}

// Per kernel, shape and dtype, the table of the preferred implementation's points (the other
// implementations' rows are skipped); the shapes that made one.
std::vector<FittedShape> fit_kernel_groups(CalibrationProfile& profile, const KernelGroups& kernels,
                                           SkippedRows& skipped, int folds,
                                           std::vector<OutlierRow>& outliers) {
  std::vector<FittedShape> fitted;
  for (const auto& [key, implementations] : kernels) {
    const auto& [kernel, shape, dtype] = key;
    const std::string* kept = nullptr;
    for (const auto& [implementation, points] : implementations)
      if (kept == nullptr || preferred_implementation(implementation, *kept)) kept = &implementation;
    for (const auto& [implementation, points] : implementations)
      if (implementation != *kept)
        for (const PointRef& ref : points)
          skipped[ref.table][ref.row] = "another implementation of the shape kept";
    FittedShape f{kernel, shape, dtype, *kept, {}, {}};
    for (const PointRef& ref : implementations.at(*kept))
      f.samples.push_back({ref.point->x, ref.point->y, ref.point->seconds});
    const KernelSpec& spec = *find_kernel_spec(kernel);
    if (auto table = fit_scattered_table(spec, shape, dtype, *kept, f.samples, folds, &f.own, &outliers)) {
      profile.kernels.push_back(std::move(*table));
      fitted.push_back(std::move(f));
    } else {
      for (const PointRef& ref : implementations.at(*kept))
        skipped[ref.table][ref.row] = "too few points for a curve";
    }
  }
  return fitted;
}

// A scale-up fit per collective and rank count whose points make one (the others' rows are skipped).
void fit_collective_groups(CalibrationProfile& profile, const CollectiveGroups& collectives,
                           SkippedRows& skipped, const Device& device) {
  for (const auto& [key, points] : collectives) {
    const auto& [collective, ranks] = key;
    std::vector<CollectiveSample> samples;
    // Several dtypes time the same byte counts: the fit keeps one sample per size.
    for (const PointRef& ref : points)
      samples.push_back({nccl_bus_bytes(collective, ranks, ref.point->x),
                         nccl_message_bytes(collective, ranks, ref.point->x), ref.point->seconds});
    auto fit = fit_collective(collective, "scaleup", ranks, samples, device.scaleup_bandwidth);
    if (!fit) {
      for (const PointRef& ref : points) skipped[ref.table][ref.row] = "too few sizes for a fit";
      continue;
    }
    profile.collectives.push_back(std::move(*fit));
  }
}

// The "nccl" family's residuals, when there are fits: every point at an interior size of its fit,
// predicted with that size's bandwidth factor left out.
void add_collective_residuals(CalibrationProfile& profile, const CollectiveGroups& collectives) {
  if (profile.collectives.empty()) return;
  std::vector<double> errors;
  for (const auto& [key, points] : collectives) {
    const auto fit = std::find_if(
        profile.collectives.begin(), profile.collectives.end(),
        [&key = key](const CollectiveFit& f) { return f.collective == key.first && f.ranks == key.second; });
    if (fit == profile.collectives.end()) continue;
    for (std::size_t skip = 0; skip < fit->factor_bytes.size(); ++skip) {
      if (skip == 0 || skip + 1 == fit->factor_bytes.size()) continue;  // ends are not interpolated
      CollectiveFit without = *fit;
      without.factor_bytes.erase(without.factor_bytes.begin() + static_cast<std::ptrdiff_t>(skip));
      without.factor.erase(without.factor.begin() + static_cast<std::ptrdiff_t>(skip));
      for (const PointRef& ref : points) {
        const double message = nccl_message_bytes(key.first, key.second, ref.point->x);
        if (message != fit->factor_bytes[skip]) continue;
        const double predicted =
            collective_seconds(without, nccl_bus_bytes(key.first, key.second, ref.point->x), message);
        errors.push_back(std::abs(predicted - ref.point->seconds) / ref.point->seconds);
      }
    }
  }
  profile.residuals.push_back({"nccl", residuals_of(errors), {}});
}

// The roofline's figures, for operators no table covers, from the same rows; what was derived.
std::vector<std::string> set_roofline_figures(CalibrationProfile& profile, const KernelGroups& kernels,
                                              const Device& device) {
  double best_gemm = 0, fastest_kernel = 1;
  for (const auto& [key, implementations] : kernels) {
    const auto& [kernel, shape, dtype] = key;
    for (const auto& [implementation, points] : implementations)
      for (const PointRef& ref : points) {
        fastest_kernel = std::min(fastest_kernel, ref.point->seconds);
        if (kernel == "gemm" && dtype == "bf16")
          best_gemm =
              std::max(best_gemm, kernel_roofline_seconds(kernel, shape, dtype, ref.point->x, 0, device) /
                                      ref.point->seconds);
      }
  }
  std::vector<std::string> derived;
  if (best_gemm > 0) {
    profile.gemm_efficiency = std::clamp(best_gemm, 0.01, 1.0);
    derived.push_back("efficiency.gemm (fastest BF16 GEMM over BF16 peak)");
  }
  if (!kernels.empty()) {
    profile.kernel_overhead = fastest_kernel;
    derived.push_back("overhead.kernel (the fastest kernel measured)");
  }
  const CollectiveFit* all_to_all = nullptr;
  for (const CollectiveFit& fit : profile.collectives)
    if (fit.collective == "all_to_all" && (!all_to_all || fit.ranks > all_to_all->ranks)) all_to_all = &fit;
  if (all_to_all) {
    profile.scaleup_efficiency = std::clamp(all_to_all->efficiency, 0.01, 1.0);
    profile.collective_overhead = all_to_all->alpha;
    derived.push_back(
        fmt::format("efficiency.scaleup and overhead.collective (the {}-GPU all-to-all)", all_to_all->ranks));
  }
  return derived;
}

// Where the profile came from: the database, frameworks, NCCL and GPU the tables name, and per
// table its rows, those used and why the others were not.
ProfileProvenance import_provenance(const std::vector<MeasuredTable>& tables, const ImportOptions& options,
                                    const SkippedRows& skipped,
                                    const std::vector<CollectiveFit>& collectives) {
  ProfileProvenance provenance;
  provenance.database = options.database;
  provenance.date = options.collected;
  provenance.gpu = joined_values(tables, "device");
  provenance.nccl = joined_values(tables, "version", "nccl");
  std::set<std::string> frameworks;
  for (const MeasuredTable& t : tables) {
    if (t.kind.starts_with("nccl")) continue;
    const auto names = t.provenance.find("framework"), versions = t.provenance.find("version");
    if (names == t.provenance.end() || versions == t.provenance.end()) continue;
    for (const std::string& name : names->second)
      for (const std::string& version : versions->second) frameworks.insert(name + " " + version);
  }
  provenance.frameworks = fmt::format("{}", fmt::join(frameworks, ", "));
  for (const CollectiveFit& fit : collectives) provenance.gpus = std::max(provenance.gpus, fit.ranks);
  for (std::size_t t = 0; t < tables.size(); ++t) {
    SourceTable source;
    // The folder and file names only: a profile's bytes do not depend on where the tables were.
    const std::filesystem::path path(tables[t].path);
    source.file = (path.parent_path().filename() / path.filename()).string();
    source.rows = static_cast<int>(tables[t].rows.size());
    source.repeats = tables[t].repeats;
    for (const std::string& reason : skipped[t]) reason.empty() ? ++source.used : ++source.skipped[reason];
    provenance.tables.push_back(std::move(source));
  }
  return provenance;
}

}  // namespace

bool preferred_implementation(const std::string& a, const std::string& b) {
  auto rank = [](const std::string& name) {
    return name == "fa3" ? 0 : name.starts_with("triton") || name.ends_with(" w4a16") ? 2 : 1;
  };
  return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
}

CalibrationProfile import_measured_tables(const std::vector<MeasuredTable>& tables, const Device& device,
                                          const ImportOptions& options) {
  check_device(tables, device);
  CalibrationProfile profile = CalibrationProfile::datasheet(device);
  profile.name = options.name.empty() ? device.name + "-measured" : options.name;
  profile.source = "measured";
  profile.kernels.clear();
  profile.collectives.clear();

  GroupedPoints points = group_points(tables);
  std::vector<OutlierRow> outliers;
  const std::vector<FittedShape> fitted =
      fit_kernel_groups(profile, points.kernels, points.skipped, options.folds, outliers);
  blend_across_shapes(profile, device, fitted);
  fit_collective_groups(profile, points.collectives, points.skipped, device);
  add_collective_residuals(profile, points.collectives);
  const std::vector<std::string> derived = set_roofline_figures(profile, points.kernels, device);
  profile.provenance = import_provenance(tables, options, points.skipped, profile.collectives);
  profile.provenance->outliers = std::move(outliers);
  profile.notes = fmt::format(
      "Imported from {} measured tables{}. Kernel tables are smoothed fits of the rows used; residuals "
      "are on rows left out of each fit. Derived from the rows: {}; the other efficiencies and overheads "
      "are the datasheet profile's.",
      tables.size(), options.database.empty() ? "" : " of " + options.database, fmt::join(derived, ", "));
  return profile;
}

}  // namespace semsim
