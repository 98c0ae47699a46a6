#pragma once
// The routing-trace commands behind `semsim trace import|fit` and `semsim profile` (see README,
// "Routing traces"). Each returns the process exit code; bad input throws InputError.
#include <cstdint>
#include <string>

namespace semsim {

int trace_import_command(const std::string& format, const std::string& input, const std::string& model,
                         const std::string& out);
int trace_fit_command(const std::string& trace, double split, std::uint64_t seed, const std::string& out_dir);
int profile_command(const std::string& trace, double split, std::uint64_t seed, const std::string& out_dir);

}  // namespace semsim
