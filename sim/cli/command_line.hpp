#pragma once
// The semsim command line. Each command adds its own subcommand, options and action (one file per
// command, listed in commands.hpp); run() parses, runs the chosen command and turns what went wrong
// into the exit code: 0 ok, 2 bad input (InputError or a bad command line), 1 internal error, and
// kIncompleteExitCode when a command wrote a result it knows is incomplete. An output that cannot be
// written (a full disk, stdout included) exits 2 too: where to write is an input.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/device.hpp"
#include "models/input_limits.hpp"
#include "models/moe_model.hpp"
#include "policies/policy_registry.hpp"
#include "sim/runs/progress.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

// A result was written but is not whole (a sweep merge missing points): the output says what is missing.
inline constexpr int kIncompleteExitCode = 3;

class CommandLine {
 public:
  CommandLine();

  // Adds subcommand `name` of `parent` (the top level when null), run by `action` when it is the one
  // chosen (not one of its own subcommands). `action` returns the exit code.
  CLI::App* add(const std::string& name, const std::string& description, std::function<int()> action,
                CLI::App* parent = nullptr);
  // Adds a subcommand that only groups others: one of them must be chosen.
  CLI::App* add_group(const std::string& name, const std::string& description);

  // Runs the command chosen, then checks that its standard output was written.
  int run(int argc, char** argv);

 private:
  int run_command(int argc, char** argv);

  CLI::App app_;
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions_;
};

struct Scenario;

// The scenario argument ("default" or a file), its --set overrides, --nodes and --work-limit, as every
// command that loads a scenario takes them.
struct ScenarioArguments {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string nodes;  // as given: the scenario's cluster checks it like a cluster.nodes value
  bool nodes_given = false;
  double work_limit = limits::kAllToAllPairVisits;  // Scenario::work_limit

  // The scenario, --nodes applied after every --set; `seed` (if >= 0) replaces workload.seed.
  Scenario load(long long seed = -1) const;
};
void add_scenario_arguments(CLI::App& command, ScenarioArguments& arguments);

// CLI::Range for real numbers that also refuses NaN and infinities (NaN compares false with either
// bound, so CLI::Range lets it through).
CLI::Validator real_range(double min, double max);

// --progress auto|always|never on `command`.
void add_progress_option(CLI::App& command, ProgressMode& mode);

// The device preset a `--device NAME` option names; an unknown name is an InputError citing the option.
Device device_option(const std::string& name);
// MoE-only commands (`command`: "place", "trace import", ...) refuse a dense model: an InputError
// (exit 2) at `where` (the option or file that named it) naming the model.
void refuse_dense_model(const MoeModel& model, const std::string& where, const std::string& command);
// The model a `--model NAME` option of MoE-only `command` names, citing the option likewise.
MoeModel moe_model_option(const std::string& name, const std::string& command);
// The routing trace at `path` for MoE-only `command`; refused when its header names a dense preset.
RoutingTrace moe_trace(const std::string& path, const std::string& command);
// The `kind` policy an option names (`option`, "--policy") with its defaults, then each key=value of
// `param_option` ("--param") checked against its parameters.
PolicyChoice policy_option(const std::string& option, PolicyKind kind, const std::string& name,
                           const std::string& param_option, const std::vector<std::string>& params);

}  // namespace semsim
