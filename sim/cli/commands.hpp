#pragma once
// The commands of `semsim`, in the order --help lists them; each file adds its command's options and
// what runs it (see command_line.hpp).
#include "sim/cli/command_line.hpp"

namespace semsim {

void add_run_command(CommandLine& cli);        // run_command.cpp
void add_check_command(CommandLine& cli);      // check_command.cpp
void add_list_command(CommandLine& cli);       // list_command.cpp
void add_calibrate_command(CommandLine& cli);  // calibrate_command.cpp
// calibrate_tables_command.cpp: calibrate import | predict | coverage, under `calibrate`
void add_calibrate_table_commands(CommandLine& cli, CLI::App* calibrate);
// calibrate_engine_command.cpp: calibrate engine, under `calibrate`
void add_calibrate_engine_command(CommandLine& cli, CLI::App* calibrate);
void add_sweep_commands(CommandLine& cli);      // sweep_command.cpp: sweep, sweep merge
void add_plot_command(CommandLine& cli);        // plot_command.cpp
void add_validate_commands(CommandLine& cli);   // validate_command.cpp: validate serving-runs
void add_compare_command(CommandLine& cli);     // compare_command.cpp
void add_live_commands(CommandLine& cli);       // live_command.cpp: live, compare-live
void add_collective_command(CommandLine& cli);  // collective_command.cpp
void add_trace_commands(CommandLine& cli);      // trace_commands.cpp: trace import|fit|synth, profile
void add_place_commands(CommandLine& cli);      // place_command.cpp
// place_eval_command.cpp: place eval | bound, under `place`
void add_place_eval_commands(CommandLine& cli, CLI::App* place);
// place_exchange_command.cpp: place export | import, under `place`
void add_place_exchange_commands(CommandLine& cli, CLI::App* place);

}  // namespace semsim
