// `semsim place export|import`: a placement file as a serving engine's expert-location file and
// back (policies/sglang_expert_location.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"
#include "models/output_files.hpp"
#include "policies/placement_file.hpp"
#include "policies/placement_plan.hpp"
#include "policies/sglang_expert_location.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"

namespace semsim {
namespace {

// `semsim place export`: a placement file as an engine's expert-location file.
struct PlaceExportOptions {
  std::string plan;  // placement file
  std::string format;
  std::string model;  // preset: where the dense layers are, which the engine's file has rows for
  std::string out;
};

// `semsim place import`: an engine's expert-location file as a placement file.
struct PlaceImportOptions {
  std::string file;
  std::string format;
  std::string model;
  int ep = 0;
  int devices_per_node = 0;  // 0: one node
  std::string out;           // "": check and describe only
};

// The engine formats `place export` and `place import` know.
void check_exchange_format(const std::string& format) {
  static const std::vector<std::string> formats{"sglang"};
  if (std::find(formats.begin(), formats.end(), format) == formats.end())
    throw InputError(fmt::format("--format '{}': unknown expert-location format{}; formats: {}", format,
                                 did_you_mean(format, formats), fmt::join(formats, ", ")));
}

int place_export_command(const PlaceExportOptions& options) {
  check_exchange_format(options.format);
  // SGLang reads --init-expert-location as a JSON file only when its name ends in .json (.pt is
  // torch.load, anything else is parsed as inline JSON).
  if (!options.out.ends_with(".json"))
    throw InputError(
        fmt::format("--out {}: SGLang reads an expert-location file as JSON only when its name "
                    "ends in .json",
                    options.out));
  OutputStaging staging({options.plan});
  const std::string out = staging.staged_at("--out", options.out);
  const PlacementPlan plan = read_placement_file(options.plan);
  const MoeModel model = moe_model_option(options.model, "place export");
  SglangExpertLocation location;
  try {
    location = sglang_expert_location(plan.placement, model);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", options.plan, e.what()));
  }
  write_text_file(out, location.json);
  staging.commit();

  const Placement& p = plan.placement;
  const int dense = model.layers - model.moe_layers();
  std::cout << fmt::format(
      "{}: {} as SGLang expert locations for {}: {} layers ({} MoE{}) x {} physical experts ({} GPUs x {} "
      "slots, {} redundant)\n",
      options.out, options.plan, model.name, model.layers, p.moe_layers,
      dense > 0 ? fmt::format(", {} dense with SGLang's trivial map", dense) : "",
      p.devices * location.slots_per_gpu, p.devices, location.slots_per_gpu, location.redundant_experts);
  std::cout << fmt::format(
      "start SGLang with: --ep-size {} --ep-num-redundant-experts {}{} --init-expert-location {}\n",
      p.devices, location.redundant_experts,
      p.devices_per_node < p.devices ? fmt::format(" --nnodes {}", p.devices / p.devices_per_node) : "",
      options.out);
  std::vector<std::string> left_out;
  if (!plan.token_devices.empty()) left_out.push_back("the token->device table T/T_p");
  if (!plan.inter_layer.empty()) left_out.push_back("the inter-layer table A/A_p");
  if (!left_out.empty())
    std::cout << fmt::format(
        "not exported: {} (Sem-MoE's online scheduling; SGLang's format holds the expert slots only, and "
        "SGLang picks among replicas by its --ep-dispatch-algorithm)\n",
        fmt::join(left_out, " and "));
  return 0;
}

int place_import_command(const PlaceImportOptions& options) {
  check_exchange_format(options.format);
  if (options.file.ends_with(".pt"))
    throw InputError(options.file + ": SGLang's .pt form (torch.save) is not read; save the map as JSON");
  const MoeModel model = moe_model_option(options.model, "place import");
  const int per_node = options.devices_per_node > 0 ? options.devices_per_node : options.ep;
  if (options.ep % per_node != 0)
    throw InputError(fmt::format("--devices-per-node {}: must divide --ep {}", per_node, options.ep));
  OutputStaging staging({options.file});
  const std::string out = options.out.empty() ? "" : staging.staged_at("--out", options.out);
  PlacementPlan plan;
  plan.policy.name = "sglang_import";
  plan.placement =
      placement_from_sglang(read_text_file(options.file), options.file, model, options.ep, per_node);
  if (!out.empty()) {
    write_placement_file(plan, out);
    staging.commit();
  }

  const Placement& p = plan.placement;
  const auto slots = static_cast<int>(p.slots[0][0].size());
  const int dense = model.layers - model.moe_layers();
  std::cout << fmt::format(
      "{}: SGLang expert locations for {}: {} MoE layers x {} experts on {} GPUs ({} slots each, {} "
      "redundant){}\n",
      options.file, model.name, p.moe_layers, p.experts, p.devices, slots, p.devices * slots - p.experts,
      dense == 0 ? ""
      : dense == 1
          ? "; the row of its dense layer is no placement and was only checked"
          : fmt::format("; the rows of its {} dense layers are no placements and were only checked", dense));
  std::cout << (options.out.empty() ? "checked only: --out writes it as a placement file\n"
                                    : fmt::format("wrote {} (policy sglang_import)\n", options.out));
  return 0;
}

}  // namespace

void add_place_exchange_commands(CommandLine& cli, CLI::App* place_app) {
  auto exported = std::make_shared<PlaceExportOptions>();
  CLI::App* export_app = cli.add(
      "export",
      "a placement file as a serving engine's expert-location file (SGLang's --init-expert-location)",
      [exported] { return place_export_command(*exported); }, place_app);
  export_app->add_option("placement", exported->plan, "placement file (semsim place)")->required();
  export_app->add_option("--format", exported->format, "expert-location format: sglang")->required();
  export_app->add_option("--model", exported->model, "model preset (the engine's file has a row per layer)")
      ->required();
  export_app->add_option("--out", exported->out, "expert-location file to write (.json)")->required();

  auto imported = std::make_shared<PlaceImportOptions>();
  CLI::App* import_app = cli.add(
      "import", "a serving engine's expert-location file as a placement file (checked against the model)",
      [imported] { return place_import_command(*imported); }, place_app);
  import_app->add_option("file", imported->file, "expert-location file (SGLang: .json)")->required();
  import_app->add_option("--format", imported->format, "expert-location format: sglang")->required();
  import_app->add_option("--model", imported->model, "model preset the file is for")->required();
  import_app->add_option("--ep", imported->ep, "GPUs (SGLang's --ep-size)")
      ->required()
      ->check(CLI::Range(1, 32768));
  import_app
      ->add_option("--devices-per-node", imported->devices_per_node, "GPUs per node (default: all in one)")
      ->check(CLI::Range(1, 32768));
  import_app->add_option("--out", imported->out,
                         "placement file to write (.gz: compressed); without it, only checks");
}

}  // namespace semsim
