// `semsim calibrate import | predict | residuals | coverage`: profiles from measured tables (a public
// database's per-kernel latencies, nccl-tests logs), scored on any table of the same format, and
// what each model's operators are priced from.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "calibrate/fit/fit.hpp"
#include "calibrate/fit/kernel_library.hpp"
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
  const Device device = device_option(c.device);
  OutputStaging staging(c.inputs);
  const std::string out = staging.staged_at("--out", c.out);
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
  write_text_file(out, profile.to_yaml());
  staging.commit();
  std::cout << fmt::format("profile {} for {}: {} kernel tables, {} collective fits from {} tables\n",
                           profile.name, device.name, profile.kernels.size(), profile.collectives.size(),
                           tables.size());
  print_residuals(profile);
  std::cout << "Wrote " << c.out << "\n";
  return 0;
}

// A profile file and the device preset it names.
struct LoadedProfile {
  Device device;
  CalibrationProfile profile;
};

LoadedProfile load_profile(const std::string& path) {
  const YamlInput in = YamlInput::load_file(path);
  const Device device = load_device(in.required("device"), "");
  return {device, CalibrationProfile::from_yaml(in, device)};
}

std::string format_number(double value) {
  return fmt::format("{:.6g}", value);
}

int predict(const std::string& profile_path, const std::string& table_path) {
  const LoadedProfile loaded = load_profile(profile_path);
  const MeasuredTable table = table_path.ends_with(".log") || table_path.ends_with(".txt")
                                  ? read_nccl_tests_log(table_path)
                                  : read_aiconfigurator_table(table_path, /*allow_repeats=*/true);
  const KernelLibrary library(loaded.profile, loaded.device, /*allow_extrapolation=*/true);
  bool phased = false;
  for (const MeasuredRow& row : table.rows)
    for (const MeasuredPoint& p : row.points) phased = phased || !p.phase.empty();
  std::vector<std::string> header = table.columns;
  if (phased) header.push_back("phase");
  header.insert(header.end(), {"measured_us", "predicted_us", "relative_error"});
  std::string out = csv_line(header) + "\n";
  std::map<std::tuple<std::string, std::string, std::string>, std::shared_ptr<KernelCurve>> curves;
  for (const MeasuredRow& row : table.rows) {
    std::vector<const MeasuredPoint*> points;
    for (const MeasuredPoint& p : row.points) points.push_back(&p);
    if (points.empty()) points.push_back(nullptr);  // a row the simulator does not model: no prediction
    for (const MeasuredPoint* p : points) {
      std::vector<std::string> fields = row.fields;
      if (phased) fields.push_back(p ? p->phase : "");
      std::optional<double> predicted;
      if (p && p->kernel.starts_with("nccl_")) {
        const std::string collective = p->kernel.substr(5);
        for (const CollectiveFit& fit : loaded.profile.collectives)
          if (fit.collective == collective && fit.ranks == p->ranks && fit.level == "scaleup")
            predicted = collective_seconds(fit, nccl_bus_bytes(collective, p->ranks, p->x),
                                           nccl_message_bytes(collective, p->ranks, p->x));
      } else if (p) {
        auto& curve = curves[{p->kernel, p->shape, p->dtype}];
        if (!curve) curve = library.curve(p->kernel, p->shape, p->dtype);
        if (curve) predicted = curve->seconds(p->x, p->y);
      }
      fields.push_back(p ? format_number(p->seconds * 1e6) : "");
      fields.push_back(predicted ? format_number(*predicted * 1e6) : "");
      fields.push_back(predicted ? format_number((*predicted - p->seconds) / p->seconds) : "");
      out += csv_line(fields) + "\n";
    }
  }
  std::cout << out;
  return 0;
}

// The profile's residuals per family as CSV (results/calibration-measured/ collects them).
int residuals(const std::string& profile_path) {
  const LoadedProfile loaded = load_profile(profile_path);
  std::string out =
      csv_line({"device", "family", "within_shape_median", "within_shape_p95", "within_shape_rows",
                "across_shapes_median", "across_shapes_p95", "across_shapes_rows", "cross_shape_weight"}) +
      "\n";
  for (const FamilyResiduals& r : loaded.profile.residuals) {
    const auto weight = loaded.profile.cross_shape_weights.find(r.family);
    out +=
        csv_line({loaded.device.name, r.family, format_number(r.within_shape.median),
                  format_number(r.within_shape.p95), std::to_string(r.within_shape.samples),
                  format_number(r.across_shapes.median), format_number(r.across_shapes.p95),
                  std::to_string(r.across_shapes.samples),
                  format_number(weight == loaded.profile.cross_shape_weights.end() ? 0.0 : weight->second)}) +
        "\n";
  }
  std::cout << out;
  return 0;
}

int coverage(const std::string& profile_path) {
  const LoadedProfile loaded = load_profile(profile_path);
  std::cout << fmt::format("profile {} on {}\n", loaded.profile.describe_source(), loaded.device.name);
  for (const std::string& name : preset_names(PresetKind::kModel)) {
    const MoeModel model = model_preset(name);
    // A dense model is served tensor-parallel: each TP size's shard has GEMM shapes of its own.
    for (const int tp : model.dense() ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1}) {
      const MoeModel shard = tp > 1 ? attention_tp_shard(model, tp) : model;
      for (const bool fp8 : {false, true}) {
        if (fp8 && loaded.device.fp8_flops <= 0) continue;
        Precision precision;
        precision.weight_bytes = fp8 ? 1.0 : 2.0;
        const CalibratedCostModel costs(shard, loaded.device, loaded.profile, precision, true);
        std::cout << fmt::format("\n{}{} ({} weights)\n", name, tp > 1 ? fmt::format(" TP{}", tp) : "",
                                 fp8 ? "FP8" : "BF16");
        for (const OperatorCoverage& op : costs.coverage())
          std::cout << fmt::format("  {:<22} {:<12} {}\n", op.name, coverage_name(op.coverage), op.source);
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

  auto predict_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* predict_command = cli.add(
      "predict",
      "score a profile on a measured table: its rows as CSV with measured_us, predicted_us, relative_error",
      [predict_args] { return predict(predict_args->first, predict_args->second); }, calibrate);
  predict_command->add_option("profile", predict_args->first, "profile YAML")->required();
  predict_command->add_option("table", predict_args->second, "table (.csv[.gz]) or nccl-tests log")
      ->required();

  auto residuals_profile = std::make_shared<std::string>();
  CLI::App* residuals_command = cli.add(
      "residuals", "a profile's errors on rows its fits left out, per kernel family, as CSV",
      [residuals_profile] { return residuals(*residuals_profile); }, calibrate);
  residuals_command->add_option("profile", *residuals_profile, "profile YAML")->required();

  auto coverage_profile = std::make_shared<std::string>();
  CLI::App* coverage_command = cli.add(
      "coverage", "what each model preset's operators are priced from: measured, interpolated or roofline",
      [coverage_profile] { return coverage(*coverage_profile); }, calibrate);
  coverage_command->add_option("profile", *coverage_profile, "profile YAML")->required();
}

}  // namespace semsim
