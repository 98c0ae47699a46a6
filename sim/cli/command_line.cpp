#include "sim/cli/command_line.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>

#include "models/input_error.hpp"
#include "models/interruption.hpp"
#include "models/presets.hpp"
#include "sim/outputs/version.hpp"
#include "sim/scenario.hpp"

namespace semsim {

CommandLine::CommandLine()
    : app_("semsim: simulate MoE serving with expert parallelism on GPU/NPU clusters (SimGrid)") {
  app_.set_version_flag("--version", std::string("semsim ") + semsim_version());
  app_.require_subcommand(1);
}

CLI::App* CommandLine::add(const std::string& name, const std::string& description,
                           std::function<int()> action, CLI::App* parent) {
  CLI::App* command = (parent != nullptr ? *parent : app_).add_subcommand(name, description);
  actions_.emplace_back(command, std::move(action));
  return command;
}

CLI::App* CommandLine::add_group(const std::string& name, const std::string& description) {
  CLI::App* group = app_.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

int CommandLine::run_command(int argc, char** argv) {
  // Anything but a registered command in first position is a typo worth naming.
  std::vector<std::string> commands;
  std::string command_list;
  for (const CLI::App* sub : app_.get_subcommands([](CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    command_list += (command_list.empty() ? "" : ", ") + sub->get_name();
  }
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(commands.begin(), commands.end(), argv[1]) == commands.end()) {
    std::cerr << "error: unknown command '" << argv[1] << "'" << did_you_mean(argv[1], commands)
              << "; commands: " << command_list << " (see --help)\n";
    return 2;
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    for (const auto& [command, action] : actions_)
      if (command->parsed() && command->get_subcommands().empty()) return action();
    throw std::logic_error("no command was chosen");  // require_subcommand makes this unreachable
  } catch (const InputError& e) {
    wait_if_interrupted();  // an interruption's removals are under way: it ends the process
    // One line, whatever text it quotes (a --set value, a file name with a line break).
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    wait_if_interrupted();
    std::cerr << "internal error: " << one_line(e.what()) << "\n";
    return 1;
  }
}

int CommandLine::run(int argc, char** argv) {
  const int code = run_command(argc, argv);
  wait_if_interrupted();
  // What went to stdout is an output too: a write that failed (a full disk, a closed pipe's
  // EPIPE) is reported, not dropped at exit.
  errno = 0;
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return code;
  std::cerr << "error: cannot write to standard output"
            << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
  return code == 0 ? 2 : code;
}

void add_scenario_arguments(CLI::App& command, ScenarioArguments& arguments) {
  command.add_option("scenario", arguments.scenario, "scenario YAML file, or 'default' for the embedded one")
      ->required();
  command.add_option("--set", arguments.overrides, "override a scenario value: key.path=value (repeatable)");
  command
      .add_option("--nodes", arguments.nodes,
                  "the cluster's node count (within its preset's range, semsim list clusters), after "
                  "every --set")
      ->each([&arguments](const std::string&) { arguments.nodes_given = true; });
  command
      .add_option(
          "--work-limit", arguments.work_limit,
          fmt::format("the most device-pair visits of the all-to-alls (MoE layers x 2 x EP size squared "
                      "per step, at least as many steps as a request has output tokens) a run is "
                      "started with (default {:g}, about a minute; 0: no limit)",
                      limits::kAllToAllPairVisits))
      ->check(real_range(0, 1e300));
}

Scenario ScenarioArguments::load(long long seed) const {
  Scenario s = load_scenario_file(scenario, overrides, seed,
                                  nodes_given ? std::optional<std::string>(nodes) : std::nullopt);
  s.work_limit = work_limit;
  if (s.disaggregation) {  // each pool is planned as a run of its own
    auto pools = std::make_shared<Disaggregation>(*s.disaggregation);
    for (std::shared_ptr<const Scenario>* pool : {&pools->prefill, &pools->decode}) {
      auto limited = std::make_shared<Scenario>(**pool);
      limited->work_limit = work_limit;
      *pool = std::move(limited);
    }
    s.disaggregation = std::move(pools);
  }
  return s;
}

CLI::Validator real_range(double min, double max) {
  const std::string range = fmt::format("[{}, {}]", min, max);
  return CLI::Validator(
      [min, max, range](const std::string& text) -> std::string {
        const auto value = parse_number(text);
        if (!value) return "'" + text + "' is not a finite number";
        if (*value < min || *value > max) return "'" + text + "' is not in " + range;
        return "";
      },
      "NUMBER in " + range);
}

void add_progress_option(CLI::App& command, ProgressMode& mode) {
  command
      .add_option_function<std::string>(
          "--progress",
          [&mode](const std::string& value) {
            mode = value == "always"  ? ProgressMode::kAlways
                   : value == "never" ? ProgressMode::kNever
                                      : ProgressMode::kAuto;
          },
          "progress line on stderr: auto (when stderr is a terminal; the default), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

Device device_option(const std::string& name) {
  return load_device(YamlInput(YAML::Node(name), std::make_shared<const std::string>("--device"), "device"),
                     "");
}

void refuse_dense_model(const MoeModel& model, const std::string& where, const std::string& command) {
  if (model.dense())
    throw InputError(fmt::format("{}: model '{}' is dense (no experts): semsim {} needs a MoE model", where,
                                 model.name, command));
}

MoeModel moe_model_option(const std::string& name, const std::string& command) {
  MoeModel model =
      load_model(YamlInput(YAML::Node(name), std::make_shared<const std::string>("--model"), "model"), "");
  refuse_dense_model(model, "--model " + name, command);
  return model;
}

RoutingTrace moe_trace(const std::string& path, const std::string& command) {
  RoutingTrace trace = load_trace(path);
  const std::string& model = trace.header().model;
  const std::vector<std::string> presets = preset_names(PresetKind::kModel);
  if (std::find(presets.begin(), presets.end(), model) != presets.end())
    refuse_dense_model(model_preset(model), path, command);
  return trace;
}

PolicyChoice policy_option(const std::string& option, PolicyKind kind, const std::string& name,
                           const std::string& param_option, const std::vector<std::string>& params) {
  PolicyChoice choice;
  try {
    choice = default_policy_choice(kind, name);
  } catch (const InputError& e) {
    throw InputError(option + ": " + e.what());
  }
  std::vector<std::string> keys;
  for (const auto& [key, value] : choice.params) keys.push_back(key);
  for (const std::string& param : params) {
    const auto eq = param.find('=');
    const std::string key = param.substr(0, eq);
    if (eq == std::string::npos)
      throw InputError(fmt::format("{} {}: expected key=value", param_option, param));
    if (!choice.params.contains(key))
      throw InputError(
          fmt::format("{} {}: policy '{}' has no parameter '{}'{}{}", param_option, param, name, key,
                      did_you_mean(key, keys),
                      keys.empty() ? "" : fmt::format("; its parameters: {}", fmt::join(keys, ", "))));
    const auto value = parse_number(param.substr(eq + 1));
    if (!value)
      throw InputError(fmt::format("{} {}: '{}' is not a number", param_option, param, param.substr(eq + 1)));
    choice.params[key] = *value;
  }
  return choice;
}

}  // namespace semsim
