#pragma once
// The routing-trace commands behind `semsim trace import|fit|synth` and `semsim profile` (see
// README, "Routing traces"). Each returns the process exit code; bad input throws InputError.
#include <cstdint>
#include <string>
#include <vector>

namespace semsim {

int trace_import_command(const std::string& format, const std::string& input, const std::string& model,
                         const std::string& out);
int trace_fit_command(const std::string& trace, double split, std::uint64_t seed, const std::string& out_dir);
// Records the prompts of requests first_request .. first_request + requests - 1 of a scenario with
// synthetic routing (lengths, topics and routing exactly as a run of that scenario draws them) as a
// trace, so that synthetic routing goes through the same profile → place → replay pipeline as a
// real trace. A first_request beyond a run's request count profiles requests that run never sees.
int trace_synth_command(const std::string& scenario, const std::vector<std::string>& overrides, int requests,
                        int first_request, const std::string& out);
int profile_command(const std::string& trace, double split, std::uint64_t seed, const std::string& out_dir);

}  // namespace semsim
