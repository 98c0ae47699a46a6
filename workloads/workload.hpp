#pragma once
// A scenario's `workload:` section: how many requests, when they arrive, how long they are, and
// where their routing comes from.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/moe_model.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/request.hpp"
#include "workloads/request_log.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/sessions.hpp"
#include "workloads/shared_prefixes.hpp"
#include "workloads/synthetic_routing.hpp"
#include "workloads/trace_routing.hpp"

namespace semsim {

struct WorkloadSpec {
  int requests = 0;
  std::uint64_t seed = 1;
  // requests_from: request i takes the log's request i (arrival order): its arrival time and lengths.
  // `arrival` is then unused and the length distributions hold the simulated requests' lengths.
  std::shared_ptr<const RequestLog> request_log;
  ArrivalProcess arrival;
  // workload.concurrency (> 0): a closed loop, bench_serving's --max-concurrency N: N requests are
  // sent at time 0 and each later one the moment an earlier one finishes (its last token), so the
  // serving loop, not `arrival`, gives their send times. 0: an open loop (`arrival` or requests_from).
  int concurrency = 0;
  LengthDistribution input_len;
  LengthDistribution output_len;
  SyntheticRoutingParams synthetic;  // routing.source: synthetic
  // routing.source: trace. Request i replays trace request i mod N; its input and output lengths come
  // from the trace unless the scenario gives input_len / output_len (see trace_routing.hpp).
  std::shared_ptr<const RoutingTrace> trace;
  std::string trace_file;             // resolved
  std::string trace_file_as_written;  // as the scenario gives it (what outputs name)
  double held_out_split = 0;          // > 0: only the requests `semsim profile --split F --seed S` held out
  std::uint64_t held_out_seed = 1;
  // The file's whole trace, held out or not: what a profile of it names (ProfileSource), and which of
  // its requests are replayed (empty: all).
  std::string trace_hash;
  std::size_t trace_requests = 0;
  std::vector<bool> replayed;
  TraceDecodeModel decode_model = TraceDecodeModel::kResamplePrompt;
  bool input_len_from_trace = false;
  bool output_len_from_trace = false;
  SharedPrefixes prefix;  // workload.prefix (synthetic prefix identities)
  // workload.sessions: `arrival` starts sessions, `input_len` is each turn's new message.
  Sessions sessions;
  // The tokens of one prefix_blocks id: workload.prefix's block_tokens (its default with sessions
  // alone), or the request log's when it has hash_ids; 0 when requests carry no prefix identity.
  int prefix_block_tokens() const {
    if (prefix.on() || sessions.on) return prefix.block_tokens;
    return request_log && request_log->has_hash_ids ? request_log->block_tokens : 0;
  }
  // A request's longest prompt and its mean (a session's later turns carry the conversation so far).
  long long longest_prompt() const {
    return sessions.on ? sessions.longest_prompt(input_len, output_len) : input_len.upper_bound();
  }
  double mean_prompt() const {
    return sessions.on ? sessions.mean_prompt(input_len, output_len) : input_len.mean();
  }

  static WorkloadSpec from_yaml(const YamlInput& in, const std::string& base_dir);
  std::string routing_description() const;  // "synthetic" or "trace FILE (decode: MODEL)"
};

// A trace must route like the model: same MoE layers, experts and top-k (`workload` names the
// scenario section in errors).
void check_routing_matches(const WorkloadSpec& spec, const MoeModel& model, const YamlInput& workload);

// The request stream, ordered by arrival; identical for identical spec and seed. In a closed loop every
// arrival is 0: the serving loop sends request i >= concurrency when an earlier one finishes.
std::vector<Request> generate_requests(const WorkloadSpec& spec);

std::unique_ptr<RoutingSource> make_routing_source(const WorkloadSpec& spec, const MoeModel& model);
// The synthetic generator a run of `spec` routes with (`semsim trace synth` records it).
SyntheticRouting make_synthetic_routing(const WorkloadSpec& spec, const MoeModel& model);

}  // namespace semsim
