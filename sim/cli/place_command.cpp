// `semsim place`: runs a placement policy on a routing profile and writes a placement file; its
// subcommands evaluate placement files (place_eval_command.cpp) and exchange them with serving
// engines (place_exchange_command.cpp). The logic is in policies/ and policies/analysis/; this is the
// command line.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <optional>

#include "models/input_error.hpp"
#include "policies/placement_file.hpp"
#include "policies/placement_plan.hpp"
#include "policies/policy_registry.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"
#include "workloads/routing_profile.hpp"

namespace semsim {
namespace {

// The options of `semsim place`.
struct PlaceOptions {
  std::string policy;
  std::string profile;  // routing profile folder (semsim profile)
  int ep = 0;
  int devices_per_node = 0;         // 0: one node
  std::string model;                // optional preset: the model's expert groups (EPLB)
  std::vector<std::string> params;  // key=value
  int lookback = 2;
  double balance = 1.10;  // token load tolerance of the T table
  std::string out;
  ProgressMode progress = ProgressMode::kAuto;
};

// The rule a scenario keeps (policies/placement_policies.hpp), told as the options that fix it.
void check_expert_slots(const PlaceOptions& options, const PolicyChoice& choice, int experts) {
  const PhysicalSlotsCheck slots = check_physical_slots(choice, experts, options.ep, "");
  if (slots.problem.empty()) return;
  if (slots.redundant_that_fits < 0) throw InputError(fmt::format("--ep {}: {}", options.ep, slots.problem));
  throw InputError(fmt::format(
      "--ep {}: {}, {}--param redundant={}", options.ep, slots.problem,
      choice.params.contains("redundant") && !slots.another_policy ? "as " : "e.g. --policy contiguous ",
      slots.redundant_that_fits));
}

int place_command(const PlaceOptions& options) {
  for (const auto& [missing, option] :
       {std::pair{options.policy.empty(), "--policy"}, std::pair{options.profile.empty(), "--profile"},
        std::pair{options.ep == 0, "--ep"}, std::pair{options.out.empty(), "--out"}})
    if (missing) throw InputError(std::string("place: ") + option + " is required (see semsim place --help)");
  OutputStaging staging({options.profile});
  const std::string out = staging.staged_at("--out", options.out);
  // A dense --model is refused before the profile is read.
  const std::optional<MoeModel> model =
      options.model.empty() ? std::nullopt : std::optional(moe_model_option(options.model, "place"));
  const PolicyChoice choice =
      policy_option("--policy", PolicyKind::kPlacement, options.policy, "--param", options.params);
  const RoutingProfile profile = RoutingProfile::load(options.profile);
  check_expert_slots(options, choice, profile.experts());
  const int per_node = options.devices_per_node > 0 ? options.devices_per_node : options.ep;
  if (options.ep % per_node != 0)
    throw InputError(fmt::format("--devices-per-node {}: must divide --ep {}", per_node, options.ep));
  PlacementInput input{profile.moe_layers(), profile.experts(), options.ep, per_node, 1, &profile};
  if (model) {
    if (model->moe_layers() != profile.moe_layers() || model->routed_experts != profile.experts())
      throw InputError(fmt::format("--model {}: {} MoE layers of {} experts, the profile {} of {}",
                                   options.model, model->moe_layers(), model->routed_experts,
                                   profile.moe_layers(), profile.experts()));
    input.expert_groups = model->expert_groups;
  }
  ProgressLine progress("place " + choice.name, options.progress);
  input.progress = progress.callback();
  const PlacementPlan plan = make_placement_plan(input, choice, {options.lookback, options.balance});
  write_placement_file(plan, out);
  staging.commit();
  progress.finish();
  std::cout << fmt::format(
      "{}: policy {} on {} devices ({} per node), {} MoE layers x {} experts; solver {:.3f} s\n", options.out,
      choice.name, options.ep, per_node, profile.moe_layers(), profile.experts(), plan.solver_seconds);
  for (const auto& [key, value] : plan.solver) std::cout << fmt::format("  {}: {:.6g}\n", key, value);
  return 0;
}

}  // namespace

void add_place_commands(CommandLine& cli) {
  auto place = std::make_shared<PlaceOptions>();
  CLI::App* place_app =
      cli.add("place", "run a placement policy on a routing profile; write a placement file",
              [place] { return place_command(*place); });
  // Not required by CLI11: `place eval` and `place bound` take none of them (checked by place_command).
  place_app->add_option("--policy", place->policy, "placement policy (semsim list policies)");
  place_app->add_option("--profile", place->profile, "routing profile folder (semsim profile)");
  place_app->add_option("--ep", place->ep, "devices (EP size)")->check(CLI::Range(1, 32768));
  place_app
      ->add_option("--devices-per-node", place->devices_per_node, "devices per node (default: all in one)")
      ->check(CLI::Range(1, 32768));
  place_app->add_option("--model", place->model, "model preset: its expert groups (EPLB) and shape check");
  place_app->add_option("--param", place->params, "policy parameter key=value (repeatable)");
  place_app
      ->add_option("--lookback", place->lookback, "inter-layer table: previous layers per key (default 2)")
      ->check(CLI::Range(1, 4));
  place_app->add_option("--balance", place->balance, "token load tolerance of the token table (default 1.10)")
      ->check(real_range(1.0, 100.0));
  place_app->add_option("--out", place->out, "placement file to write (.gz: compressed)");
  add_progress_option(*place_app, place->progress);
  add_place_eval_commands(cli, place_app);
  add_place_exchange_commands(cli, place_app);
}

}  // namespace semsim
