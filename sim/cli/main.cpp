// semsim: the command-line entry point; the commands are in sim/cli/commands.hpp.
#include "models/interruption.hpp"
#include "sim/cli/commands.hpp"

int main(int argc, char** argv) {
  semsim::handle_interruptions();
  semsim::CommandLine cli;
  semsim::add_run_command(cli);
  semsim::add_check_command(cli);
  semsim::add_list_command(cli);
  semsim::add_calibrate_command(cli);
  semsim::add_sweep_commands(cli);
  semsim::add_plot_command(cli);
  semsim::add_validate_commands(cli);
  semsim::add_compare_command(cli);
  semsim::add_live_commands(cli);
  semsim::add_collective_command(cli);
  semsim::add_trace_commands(cli);
  semsim::add_place_commands(cli);
  return cli.run(argc, argv);
}
