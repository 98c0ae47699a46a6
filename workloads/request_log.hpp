#pragma once
// A workload read from a log of real requests (scenario `workload.requests_from`): each request's
// arrival time, prompt length and output length, from a CSV trace (Azure LLM inference traces or
// plain seconds), a Mooncake-style JSONL trace, or a bench_serving result file with per-request
// details. Formats and checks: workloads/REQUEST_LOG_FORMAT.md.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "models/yaml_input.hpp"

namespace semsim {

// Mooncake's traces hash their prompts in blocks of 512 tokens (requests_from.block_tokens).
inline constexpr int kMooncakeBlockTokens = 512;

enum class RequestLogFormat { kCsv, kMooncake, kBenchServing };

const std::vector<std::string>& request_log_format_names();  // as the scenario spells them

struct LoggedRequest {
  double arrival = 0;  // seconds after the first usable request (before time_scale)
  int input_tokens = 0;
  int output_tokens = 0;
  std::vector<std::uint64_t> hash_ids;  // Mooncake: its prompt's prefix-cache block ids (may be empty)
};

// A bench_serving file without per-request times: its requests were sent as its `request_rate` and
// `burstiness` say, so the arrivals are drawn that way (and the outputs say they were).
struct DrawnArrivals {
  double rate = 0;        // requests per second; infinite: all at once
  double burstiness = 1;  // gamma shape of the gaps (1: Poisson; infinite: evenly spaced)
};

struct RequestLog {
  std::string file;  // as the scenario gives it (what outputs name); the path read otherwise
  RequestLogFormat format = RequestLogFormat::kCsv;
  int rows = 0;                         // requests the file records
  int skipped = 0;                      // of which unusable: no prompt or output token, or failed
  std::vector<LoggedRequest> requests;  // the usable ones, in arrival order (stable for ties)
  std::optional<DrawnArrivals> drawn;   // set when the file holds no per-request arrival times
  std::string arrival_column;           // the times' source in the file, when it has them
  double time_scale = 1;                // arrival times are multiplied by this
  std::string note;  // what the file records that the simulation does not use ("" when nothing)
  // Mooncake: the tokens each hash_ids block covers (requests_from.block_tokens); whether any
  // request has hash_ids.
  int block_tokens = 0;
  bool has_hash_ids = false;

  // Arrival times of the first `count` requests, from 0; `rng` draws them for `drawn` logs only.
  std::vector<double> arrival_times(int count, std::mt19937_64& rng) const;
  std::string format_name() const;
  // Where the arrival times come from, in words ("the file's timestamps", "drawn: Poisson at ...").
  std::string arrivals_description() const;
};

// Reads `path` (plain or gzip); errors name it with the line (and column) at fault. `result_line`
// picks one result of a bench_serving file holding several (the 1-based line it starts on).
// `block_tokens`: a Mooncake file's hash_ids block size (a request holds at most
// ceil(input_length / block_tokens) ids).
RequestLog read_request_log(const std::string& path, RequestLogFormat format,
                            std::optional<int> result_line = std::nullopt, double time_scale = 1,
                            int block_tokens = kMooncakeBlockTokens);

// The scenario's `workload.requests_from` map: {file, format, time_scale, line, block_tokens}.
RequestLog load_request_log(const YamlInput& in, const std::string& base_dir);

}  // namespace semsim
