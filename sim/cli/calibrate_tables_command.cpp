// `semsim calibrate import | predict | residuals | coverage`: profiles from measured tables (a public
// database's per-kernel latencies, nccl-tests logs), scored on any table of the same format, and
// what each model's operators are priced from.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/kernel_library.hpp"
#include "calibrate/fit/moe_model_holdout.hpp"
#include "calibrate/import/aiconfigurator_tables.hpp"
#include "calibrate/import/database_import.hpp"
#include "calibrate/import/nccl_tests_log.hpp"
#include "models/compressed_file.hpp"
#include "models/csv.hpp"
#include "models/input_error.hpp"
#include "models/operator_costs.hpp"
#include "models/output_files.hpp"
#include "models/presets.hpp"
#include "sim/calibrated_cost_model.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

struct ImportCommand {
  std::string from;
  std::vector<std::string> inputs;
  std::string device;
  std::string out;
  bool repeats = false;
  ImportOptions options;
};

// The tables of a database folder, in the importer's order of kinds (plain or gzip).
std::vector<std::string> database_tables(const std::string& dir) {
  if (!fs::is_directory(dir)) throw InputError("calibrate import: " + dir + ": no such folder");
  std::vector<std::string> paths;
  for (const std::string& kind : aiconfigurator_table_kinds())
    for (const char* suffix : {".csv", ".csv.gz"})
      if (fs::exists(fs::path(dir) / (kind + suffix)))
        paths.push_back((fs::path(dir) / (kind + suffix)).string());
  if (paths.empty())
    throw InputError(fmt::format("{}: holds none of the tables ({}.csv[.gz])", dir,
                                 fmt::join(aiconfigurator_table_kinds(), ".csv[.gz], ")));
  return paths;
}

void print_residuals(const CalibrationProfile& p) {
  std::cout << fmt::format("{:<24} {:>26} {:>26}\n", "family", "within shape: median p95",
                           "across shapes: median p95");
  for (const FamilyResiduals& r : p.residuals) {
    auto cell = [](const FitResiduals& f) {
      return f.samples == 0 ? std::string("-")
                            : fmt::format("{:5.1f}% {:5.1f}% ({})", 100 * f.median, 100 * f.p95, f.samples);
    };
    std::cout << fmt::format("{:<24} {:>26} {:>26}\n", r.family, cell(r.within_shape), cell(r.across_shapes));
  }
}

int import_tables(const ImportCommand& c) {
  if (c.inputs.empty()) throw InputError("calibrate import: give the tables (a folder, or nccl-tests logs)");
  check_output_file("--out", c.out, c.inputs);  // before the tables are read, which takes a while
  const Device device = device_option(c.device);
  std::vector<MeasuredTable> tables;
  ImportOptions options = c.options;
  if (c.from == "aiconfigurator") {
    if (c.inputs.size() != 1) throw InputError("calibrate import --from aiconfigurator: give one folder");
    for (const std::string& path : database_tables(c.inputs[0]))
      tables.push_back(read_aiconfigurator_table(path, c.repeats));
    if (options.database.empty()) options.database = "aiconfigurator";
  } else {
    for (const std::string& path : c.inputs) tables.push_back(read_nccl_tests_log(path));
    if (options.database.empty()) options.database = "nccl-tests";
  }
  const CalibrationProfile profile = import_measured_tables(tables, device, options);
  write_atomically(c.out, [&](const std::string& path) { write_text_file(path, profile.to_yaml()); });
  std::cout << fmt::format("profile {} for {}: {} kernel tables, {} collective fits from {} tables\n",
                           profile.name, device.name, profile.kernels.size(), profile.collectives.size(),
                           tables.size());
  print_residuals(profile);
  std::cout << "Wrote " << c.out << "\n";
  return 0;
}

// A profile and the device preset it is for.
struct LoadedProfile {
  Device device;
  CalibrationProfile profile;
};

// PROFILE as a scenario's `calibration:` names it: a profile file, or `measured` / `datasheet`, the
// device's embedded profile. A scenario's device is its cluster's; here `--device` names it, and
// `measured` without it means every device with an embedded measured profile.
std::vector<LoadedProfile> load_profiles(const std::string& profile, const std::string& device_name) {
  if (profile != "measured" && profile != "datasheet") {
    if (!device_name.empty())
      throw InputError(fmt::format("--device {}: a profile file names its own device ('{}' is a file)",
                                   device_name, profile));
    const YamlInput in = YamlInput::load_file(profile);
    const Device device = load_device(in.required("device"), "");
    return {{device, CalibrationProfile::from_yaml(in, device)}};
  }
  std::vector<Device> devices;
  if (!device_name.empty()) {
    devices.push_back(device_option(device_name));
  } else if (profile == "datasheet") {
    throw InputError(
        "datasheet: give --device PRESET (semsim list hardware): the datasheet profile is a device's");
  } else {
    for (const std::string& name : preset_names(PresetKind::kDevice))
      if (const Device device = device_option(name); CalibrationProfile::measured(device))
        devices.push_back(device);
  }
  std::vector<LoadedProfile> loaded;
  for (const Device& device : devices) {
    if (profile == "datasheet") {
      loaded.push_back({device, CalibrationProfile::datasheet(device)});
    } else if (const auto measured = CalibrationProfile::measured(device)) {
      loaded.push_back({device, *measured});
    } else {
      throw InputError(
          fmt::format("measured: no measured profile is embedded for '{}': give a profile file, "
                      "or datasheet",
                      device.name));
    }
  }
  return loaded;
}

std::string format_number(double value) {
  return fmt::format("{:.6g}", value);
}

// Two grid values (an axis value, a fit's message size) equal to rounding.
bool same_value(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), 1.0);
}

// Where `value` is on `axis` (axis.size() when it is not).
std::size_t index_on(const std::vector<double>& axis, double value) {
  return static_cast<std::size_t>(
      std::find_if(axis.begin(), axis.end(), [&](double v) { return same_value(v, value); }) - axis.begin());
}

// Whether the profile's own table of `p`'s kernel, shape and dtype holds a value at `p`'s grid point:
// a row the profile was fitted on (or a point its fit put on the grid), so its error is in-sample.
bool in_profile_table(const CalibrationProfile& profile, const MeasuredPoint& p) {
  const KernelTable* table = profile.find_kernel(p.kernel, p.shape, p.dtype);
  if (table == nullptr) return false;
  const bool two_axes = table->axes.size() > 1;
  const std::vector<double>& columns = table->axes.back().values;
  const std::size_t column = index_on(columns, two_axes ? p.y : p.x);
  const std::size_t row = two_axes ? index_on(table->axes[0].values, p.x) : 0;
  if (column == columns.size() || (two_axes && row == table->axes[0].values.size())) return false;
  return table->seconds.at(row * columns.size() + column).has_value();
}

// One measured point's prediction, whether the profile saw it, and why there is none.
struct Prediction {
  std::optional<double> seconds;
  bool in_profile = false;
  std::string missing;  // why there is no prediction ("" when there is one)
};

// The values of a row's dtype columns (gemm_dtype, moe_dtype, ...), for the rows whose dtype the
// simulator does not model.
std::string row_dtypes(const MeasuredTable& table, const MeasuredRow& row) {
  std::vector<std::string> dtypes;
  for (std::size_t c = 0; c < table.columns.size() && c < row.fields.size(); ++c)
    if (table.columns[c].ends_with("dtype")) dtypes.push_back(table.columns[c] + " " + row.fields[c]);
  return fmt::format("{}", fmt::join(dtypes, ", "));
}

// The GPU model a device string names, lower case: "NVIDIA H100 80GB HBM3" and the preset "h100-sxm"
// both name "h100".
std::string gpu_model(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name.starts_with("nvidia ")) name = name.substr(7);
  return name.substr(0, name.find_first_of(" -"));
}

// Whether a table measured on `device` (its rows' `device` column) is of the profile's device: the
// GPU the profile was measured on where it says, else the device preset's model.
bool same_device(const LoadedProfile& loaded, const std::string& device) {
  const std::string gpu = loaded.profile.provenance ? loaded.profile.provenance->gpu : "";
  return gpu.empty() ? gpu_model(device) == gpu_model(loaded.device.name) : device == gpu;
}

// One device's profile scored on another device's measurements says nothing about either: refused,
// unless asked for.
void check_same_device(const LoadedProfile& loaded, const MeasuredTable& table, bool any_device) {
  const auto devices = table.provenance.find("device");
  if (any_device || devices == table.provenance.end()) return;
  for (const std::string& device : devices->second)
    if (!same_device(loaded, device))
      throw InputError(fmt::format(
          "{}: measured on '{}', but profile '{}' is for {}{}: a profile scored on another device's "
          "measurements; pass --any-device to score it anyway",
          table.path, device, loaded.profile.name, loaded.device.name,
          loaded.profile.provenance && !loaded.profile.provenance->gpu.empty()
              ? " (measured on '" + loaded.profile.provenance->gpu + "')"
              : ""));
}

// `measured` without --device: the embedded profile of the device the table was measured on.
LoadedProfile profile_for_table(const std::string& profile, const std::string& device_name,
                                const MeasuredTable& table) {
  std::vector<LoadedProfile> loaded = load_profiles(profile, device_name);
  const auto devices = table.provenance.find("device");
  if (loaded.size() > 1 && devices != table.provenance.end() && devices->second.size() == 1)
    std::erase_if(loaded, [&](const LoadedProfile& p) { return !same_device(p, devices->second.front()); });
  if (loaded.empty())
    throw InputError(
        fmt::format("{}: no embedded profile is for the device {} was measured on ({}): give "
                    "--device PRESET or a profile file",
                    profile, table.path, fmt::join(devices->second, ", ")));
  if (loaded.size() > 1) {
    std::vector<std::string> names;
    for (const LoadedProfile& p : loaded) names.push_back(p.device.name);
    throw InputError(fmt::format("{}: {} devices have one ({}): give --device PRESET", profile, loaded.size(),
                                 fmt::join(names, ", ")));
  }
  return std::move(loaded.front());
}

// Per kernel family: rows, predictions, rows the profile was fitted on, and |error| over the rows
// it never saw (median, p90) — on stderr, so that stdout stays the CSV.
struct FamilyScore {
  int rows = 0, predicted = 0, in_profile = 0;
  std::vector<double> unseen_errors;
};

void print_prediction_summary(const std::string& table_path,
                              const std::map<std::string, FamilyScore>& families,
                              const std::map<std::string, int>& missing) {
  std::string out = fmt::format(
      "predict {}: |relative error| per kernel family over the rows the profile was "
      "never fitted on (in_profile 0)\n",
      table_path);
  out += fmt::format("  {:<24} {:>8} {:>10} {:>11} {:>8} {:>8}\n", "family", "rows", "predicted",
                     "in_profile", "median", "p90");
  int in_profile = 0;
  for (const auto& [family, score] : families) {
    const std::vector<double>& errors = score.unseen_errors;  // a lambda may not capture a binding (C++20)
    auto share = [&errors](double q) {
      return errors.empty() ? std::string("n/a") : fmt::format("{:.1f}%", 100 * percentile(errors, q));
    };
    out += fmt::format("  {:<24} {:>8} {:>10} {:>11} {:>8} {:>8}\n", family, score.rows, score.predicted,
                       score.in_profile, share(50), share(90));
    in_profile += score.in_profile;
  }
  if (in_profile > 0)
    out += fmt::format(
        "warning: {} rows are in the profile's own tables (in_profile 1): their errors are "
        "in-sample, left out of the median and p90\n",
        in_profile);
  for (const auto& [why, rows] : missing) out += fmt::format("no prediction for {} rows: {}\n", rows, why);
  std::cerr << out;
}

int predict(const std::string& profile_path, const std::string& device_name, const std::string& table_path,
            bool any_device) {
  const MeasuredTable table = table_path.ends_with(".log") || table_path.ends_with(".txt")
                                  ? read_nccl_tests_log(table_path)
                                  : read_aiconfigurator_table(table_path, /*allow_repeats=*/true);
  const LoadedProfile loaded = profile_for_table(profile_path, device_name, table);
  check_same_device(loaded, table, any_device);
  const KernelLibrary library(loaded.profile, loaded.device, /*allow_extrapolation=*/true);
  bool phased = false;
  for (const MeasuredRow& row : table.rows)
    for (const MeasuredPoint& p : row.points) phased = phased || !p.phase.empty();
  std::vector<std::string> header = table.columns;
  if (phased) header.push_back("phase");
  header.insert(header.end(),
                {"measured_us", "predicted_us", "relative_error", "in_profile", "no_prediction"});
  std::string out = csv_line(header) + "\n";
  std::map<std::tuple<std::string, std::string, std::string>, std::shared_ptr<KernelCurve>> curves;
  std::map<std::string, FamilyScore> families;
  std::map<std::string, int> missing;
  auto predict_point = [&](const MeasuredPoint& p) {
    Prediction prediction;
    if (p.kernel.starts_with("nccl_")) {
      const std::string collective = p.kernel.substr(5);
      for (const CollectiveFit& fit : loaded.profile.collectives)
        if (fit.collective == collective && fit.ranks == p.ranks && fit.level == "scaleup") {
          const double message = nccl_message_bytes(collective, p.ranks, p.x);
          prediction.seconds = collective_seconds(fit, nccl_bus_bytes(collective, p.ranks, p.x), message);
          prediction.in_profile = index_on(fit.factor_bytes, message) < fit.factor_bytes.size();
        }
      if (!prediction.seconds)
        prediction.missing = fmt::format("no {} fit of {} ranks in the profile", collective, p.ranks);
      return prediction;
    }
    auto& curve = curves[{p.kernel, p.shape, p.dtype}];
    if (!curve) curve = library.curve(p.kernel, p.shape, p.dtype);
    if (curve) {
      prediction.seconds = curve->seconds(p.x, p.y);
      prediction.in_profile = in_profile_table(loaded.profile, p);
    } else {
      prediction.missing = fmt::format("no {} table of dtype {} in the profile", p.kernel, p.dtype);
    }
    return prediction;
  };
  for (const MeasuredRow& row : table.rows) {
    if (row.points.empty()) {  // a row the simulator does not model: no prediction, and why
      const std::string why =
          row.skipped + (row.skipped == "dtype not modelled" ? " (" + row_dtypes(table, row) + ")" : "");
      ++missing[why];
      std::vector<std::string> fields = row.fields;
      if (phased) fields.push_back("");
      fields.insert(fields.end(), {"", "", "", "", why});
      out += csv_line(fields) + "\n";
      continue;
    }
    for (const MeasuredPoint& p : row.points) {
      const Prediction prediction = predict_point(p);
      FamilyScore& score = families[p.kernel];
      ++score.rows;
      std::vector<std::string> fields = row.fields;
      if (phased) fields.push_back(p.phase);
      fields.push_back(format_number(p.seconds * 1e6));
      if (prediction.seconds) {
        const double error = (*prediction.seconds - p.seconds) / p.seconds;
        ++score.predicted;
        if (prediction.in_profile)
          ++score.in_profile;
        else
          score.unseen_errors.push_back(std::abs(error));
        fields.insert(fields.end(), {format_number(*prediction.seconds * 1e6), format_number(error),
                                     prediction.in_profile ? "1" : "0", ""});
      } else {
        ++missing[prediction.missing];
        fields.insert(fields.end(), {"", "", "", prediction.missing});
      }
      out += csv_line(fields) + "\n";
    }
  }
  std::cout << out;
  print_prediction_summary(table_path, families, missing);
  return 0;
}

// The profile's residuals per family as CSV (results/calibration-measured/ collects them): n/a
// where a family has no such error (NCCL across shapes), never a 0 that reads as a perfect fit.
int residuals(const std::string& profile_arg, const std::string& device_name) {
  std::string out =
      csv_line({"device", "family", "within_shape_median", "within_shape_p95", "within_shape_rows",
                "across_shapes_median", "across_shapes_p95", "across_shapes_rows", "cross_shape_weight"}) +
      "\n";
  for (const LoadedProfile& loaded : load_profiles(profile_arg, device_name)) {
    for (const FamilyResiduals& r : loaded.profile.residuals) {
      auto if_measured = [](const FitResiduals& f, double value) {
        return f.samples > 0 ? format_number(value) : std::string("n/a");
      };
      // A kernel's per-backend families ("moe_experts:BACKEND:DTYPE") are pooled at its weight.
      const auto weight = loaded.profile.cross_shape_weights.find(r.family.substr(0, r.family.find(':')));
      out += csv_line(
                 {loaded.device.name, r.family, if_measured(r.within_shape, r.within_shape.median),
                  if_measured(r.within_shape, r.within_shape.p95), std::to_string(r.within_shape.samples),
                  if_measured(r.across_shapes, r.across_shapes.median),
                  if_measured(r.across_shapes, r.across_shapes.p95), std::to_string(r.across_shapes.samples),
                  // A family without a cross-shape model (NCCL) has no weight; a kernel family's
                  // absent weight is 0: its shapes are not pooled with their neighbours.
                  if_measured(r.across_shapes,
                              weight == loaded.profile.cross_shape_weights.end() ? 0.0 : weight->second)}) +
             "\n";
    }
  }
  std::cout << out;
  return 0;
}

// The MoE kernel's cross-shape model on each model's shapes left out whole, per backend and dtype, as
// CSV (results/calibration-measured/moe-leave-model-out.csv): n/a where it predicted no point.
int leave_model_out(const std::string& profile_arg, const std::string& device_name) {
  std::string out = csv_line({"device", "backend", "dtype", "held_out_model", "shapes", "points", "predicted",
                              "median", "p95"}) +
                    "\n";
  for (const LoadedProfile& loaded : load_profiles(profile_arg, device_name))
    for (const MoeModelHoldout& h : moe_leave_model_out(loaded.profile, loaded.device)) {
      const bool any = h.errors.samples > 0;
      out += csv_line({loaded.device.name, h.backend, h.dtype, h.model, std::to_string(h.shapes),
                       std::to_string(h.points), std::to_string(h.errors.samples),
                       any ? format_number(h.errors.median) : "n/a",
                       any ? format_number(h.errors.p95) : "n/a"}) +
             "\n";
    }
  std::cout << out;
  return 0;
}

int coverage(const std::string& profile_arg, const std::string& device_name) {
  for (const LoadedProfile& loaded : load_profiles(profile_arg, device_name)) {
    std::cout << fmt::format("profile {} on {}\n", loaded.profile.describe_source(), loaded.device.name);
    for (const std::string& name : preset_names(PresetKind::kModel)) {
      const MoeModel model = model_preset(name);
      // A dense model is served tensor-parallel: each TP size's shard has GEMM shapes of its own.
      for (const int tp : model.dense() ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1}) {
        const MoeModel shard = tp > 1 ? attention_tp_shard(model, tp) : model;
        // BF16, FP8, and on FP4 devices FP8 with FP4 routed experts, as Blackwell deployments serve.
        using F = WeightFormat;
        const std::vector<std::pair<F, F>> precisions{
            {F::kBf16, F::kBf16}, {F::kFp8, F::kFp8}, {F::kFp8, F::kNvfp4}, {F::kFp8, F::kMxfp4}};
        for (const auto& [weights, experts] : precisions) {
          if (weights == F::kFp8 && loaded.device.fp8_flops <= 0) continue;
          if (is_fp4(experts) && (loaded.device.fp4_flops <= 0 || model.dense())) continue;
          Precision precision;
          precision.weights = weights;
          precision.experts = experts;
          const CalibratedCostModel costs(shard, loaded.device, loaded.profile, precision, true);
          std::string experts_format = is_fp4(experts) ? name_of(kWeightFormatNames, experts) : "";
          for (char& c : experts_format) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          std::cout << fmt::format("\n{}{} ({} weights{})\n", name, tp > 1 ? fmt::format(" TP{}", tp) : "",
                                   weights == F::kFp8 ? "FP8" : "BF16",
                                   experts_format.empty() ? "" : ", " + experts_format + " experts");
          for (const OperatorCoverage& op : costs.coverage())
            std::cout << fmt::format("  {:<22} {:<12} {}\n", op.name, coverage_name(op.coverage), op.source);
        }
      }
    }
  }
  return 0;
}

}  // namespace

void add_calibrate_table_commands(CommandLine& cli, CLI::App* calibrate) {
  auto import = std::make_shared<ImportCommand>();
  CLI::App* import_command = cli.add(
      "import", "fit a profile from measured tables: a database's per-kernel latencies, or nccl-tests logs",
      [import] { return import_tables(*import); }, calibrate);
  import_command
      ->add_option("--from", import->from, "aiconfigurator (a folder of its tables) | nccl-tests (logs)")
      ->required()
      ->check(CLI::IsMember({"aiconfigurator", "nccl-tests"}));
  import_command->add_option("inputs", import->inputs, "the folder of tables, or nccl-tests log files")
      ->required();
  import_command->add_option("--device", import->device, "device preset the tables were measured on")
      ->required();
  import_command->add_option("--out", import->out, "profile YAML to write")->required();
  import_command->add_option("--name", import->options.name, "profile name (default: <device>-measured)");
  import_command->add_option("--database", import->options.database,
                             "where the tables came from, for provenance");
  import_command->add_option("--collected", import->options.collected,
                             "when the tables were measured, if known");
  import_command->add_flag(
      "--repeats", import->repeats,
      "accept rows repeating a measurement (a table collected twice): the fits average them");
  import_command->add_option("--folds", import->options.folds, "k of the k-fold residuals (default 5)")
      ->check(CLI::Range(2, 100));

  // PROFILE: a profile file, or `measured` / `datasheet` with --device as a scenario's calibration.
  const char* const profile_help = "profile YAML, or measured | datasheet (the embedded ones; see --device)";
  const char* const device_help =
      "the device of a measured | datasheet profile (default for measured: every device that has one)";
  struct PredictArguments {
    std::string profile, table, device;
    bool any_device = false;
  };
  auto predict_args = std::make_shared<PredictArguments>();
  CLI::App* predict_command = cli.add(
      "predict",
      "score a profile on a measured table: its rows as CSV with measured_us, predicted_us, relative_error, "
      "in_profile, no_prediction; a summary per kernel family on stderr",
      [predict_args] {
        return predict(predict_args->profile, predict_args->device, predict_args->table,
                       predict_args->any_device);
      },
      calibrate);
  predict_command->add_option("profile", predict_args->profile, profile_help)->required();
  predict_command->add_option("table", predict_args->table, "table (.csv[.gz]) or nccl-tests log")
      ->required();
  predict_command->add_option("--device", predict_args->device, device_help);
  predict_command->add_flag("--any-device", predict_args->any_device,
                            "score a table measured on another device than the profile's");

  struct ResidualsArguments {
    std::string profile, device;
    bool leave_model_out = false;
  };
  auto residuals_args = std::make_shared<ResidualsArguments>();
  CLI::App* residuals_command = cli.add(
      "residuals", "a profile's errors on rows its fits left out, per kernel family, as CSV",
      [residuals_args] {
        return residuals_args->leave_model_out
                   ? leave_model_out(residuals_args->profile, residuals_args->device)
                   : residuals(residuals_args->profile, residuals_args->device);
      },
      calibrate);
  residuals_command->add_option("profile", residuals_args->profile, profile_help)->required();
  residuals_command->add_option("--device", residuals_args->device, device_help);
  residuals_command->add_flag(
      "--leave-model-out", residuals_args->leave_model_out,
      "instead: the MoE kernel's cross-shape model on each model's shapes (hidden, experts, top-k: every FFN "
      "split and distribution) left out whole, fitted on the rest of its backend and dtype, per held-out "
      "model");

  auto coverage_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* coverage_command = cli.add(
      "coverage", "what each model preset's operators are priced from: measured, interpolated or roofline",
      [coverage_args] { return coverage(coverage_args->first, coverage_args->second); }, calibrate);
  coverage_command->add_option("profile", coverage_args->first, profile_help)->required();
  coverage_command->add_option("--device", coverage_args->second, device_help);
}

}  // namespace semsim
