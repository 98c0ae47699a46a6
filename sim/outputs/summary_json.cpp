#include "sim/outputs/summary_json.hpp"

#include <cmath>

#include "sim/outputs/run_notes.hpp"
#include "sim/outputs/version.hpp"

namespace semsim {

// null statistics over an empty set (a run stopped before any request got there), never 0.
nlohmann::ordered_json distribution_json(const Distribution& d) {
  auto value = [&](double v) { return d.count > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  return {{"count", d.count},    {"mean", value(d.mean)}, {"std", value(d.std)}, {"p50", value(d.p50)},
          {"p90", value(d.p90)}, {"p95", value(d.p95)},   {"p99", value(d.p99)}, {"max", value(d.max)}};
}

// The scenario's request rate; null for arrival times read from a file (no rate is set), "inf" (as
// vLLM writes it) for a request log whose requests were all sent at once and for a closed loop
// (bench_serving's --request-rate inf --max-concurrency N).
nlohmann::ordered_json request_rate_json(const Scenario& scenario) {
  const WorkloadSpec& workload = scenario.workload;
  if (workload.concurrency > 0) return "inf";
  if (workload.request_log) {
    const auto& drawn = workload.request_log->drawn;
    if (!drawn) return nullptr;
    return std::isinf(drawn->rate) ? nlohmann::ordered_json("inf") : nlohmann::ordered_json(drawn->rate);
  }
  return workload.arrival.kind == ArrivalProcess::Kind::kTrace
             ? nlohmann::ordered_json()
             : nlohmann::ordered_json(workload.arrival.rate);
}

nlohmann::ordered_json max_concurrency_json(const WorkloadSpec& workload) {
  return workload.concurrency > 0 ? nlohmann::ordered_json(workload.concurrency) : nlohmann::ordered_json();
}

double ep_nodes(const Scenario& scenario) {
  return static_cast<double>(scenario.ep) / scenario.cluster.gpus_per_node;
}

namespace {

// What a request log records that the run does not use: the log's own note, and its hash_ids when
// no prefix cache reads them.
std::string unused_log_records(const RequestLog& log, bool prefix_cache) {
  if (!log.has_hash_ids || prefix_cache) return log.note;
  const std::string unused =
      "hash_ids not used: every prompt is prefilled in full (serving.prefix_cache is off)";
  return log.note.empty() ? unused : log.note + "; " + unused;
}

// Where the requests came from: a request log's file, format, rows and arrivals ("" and null for
// generated requests, so every summary has these keys).
nlohmann::ordered_json requests_from_json(const WorkloadSpec& workload, bool prefix_cache) {
  const RequestLog* log = workload.request_log.get();
  auto count = [&](int value) { return log ? nlohmann::ordered_json(value) : nlohmann::ordered_json(); };
  return {{"file", log ? log->file : ""},
          {"format", log ? log->format_name() : ""},
          {"rows", count(log ? log->rows : 0)},
          {"skipped", count(log ? log->skipped : 0)},
          {"used", count(workload.requests)},
          {"arrivals", log ? log->arrivals_description() : ""},
          {"note", log ? unused_log_records(*log, prefix_cache) : ""}};
}

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

nlohmann::ordered_json length_json(const LengthDistribution& d) {
  switch (d.kind) {
    case LengthDistribution::Kind::kFixed:
      return {{"dist", "fixed"}, {"value", d.value}};
    case LengthDistribution::Kind::kUniform:
      return {{"dist", "uniform"}, {"min", d.min}, {"max", d.max}};
    case LengthDistribution::Kind::kLognormal:
      return {
          {"dist", "lognormal"}, {"median", d.median}, {"sigma", d.sigma}, {"min", d.min}, {"max", d.max}};
    case LengthDistribution::Kind::kFile:
      break;
  }
  return {{"dist", "file"}, {"samples", d.samples.size()}, {"max", d.upper_bound()}};
}

// The workload's key facts: what was offered, beside what the run completed.
nlohmann::ordered_json workload_json(const WorkloadSpec& w, const Summary& s) {
  static const char* const kProcesses[] = {"poisson", "gamma", "fixed", "trace"};
  const bool generated =
      !w.request_log && w.concurrency == 0 && w.arrival.kind != ArrivalProcess::Kind::kTrace;
  nlohmann::ordered_json j;
  j["requests"] = w.requests;
  j["arrival"] = {{"process", w.request_log       ? "requests_from"
                              : w.concurrency > 0 ? "closed_loop"
                                                  : kProcesses[static_cast<int>(w.arrival.kind)]},
                  {"rate", generated ? nlohmann::ordered_json(w.arrival.rate) : nullptr},
                  {"cv", generated && w.arrival.kind == ArrivalProcess::Kind::kGamma
                             ? nlohmann::ordered_json(w.arrival.cv)
                             : nullptr}};
  // Replayed trace lengths (or a request log's) are the file's: no distribution to name.
  j["input_len"] =
      w.input_len_from_trace ? nlohmann::ordered_json{{"dist", "trace"}} : length_json(w.input_len);
  j["output_len"] =
      w.output_len_from_trace ? nlohmann::ordered_json{{"dist", "trace"}} : length_json(w.output_len);
  j["offered_tokens"] = {{"input", s.offered_input_tokens}, {"output", s.offered_output_tokens}};
  j["offered_request_rate"] = s.requests > 1 && s.last_arrival > 0
                                  ? nlohmann::ordered_json((s.requests - 1) / s.last_arrival)
                                  : nullptr;
  j["sessions"] = nullptr;
  if (w.sessions.on)
    j["sessions"] = {
        {"turns", length_json(w.sessions.turns)},
        {"think_time",
         {{"dist", w.sessions.think == Sessions::Think::kFixed ? "fixed" : "exponential"},
          {w.sessions.think == Sessions::Think::kFixed ? "seconds" : "mean", w.sessions.think_seconds}}},
        {"sessions", s.sessions},
        {"early_turns", s.early_turns}};
  return j;
}

// What ran: the scenario, its parallelism and policies, what its plan noted, the network's fidelity
// and calibration, and where the requests came from.
void add_setup(nlohmann::ordered_json& j, const Scenario& scenario, const Summary& s) {
  j["scenario"] = scenario.name;
  j["model"] = scenario.model.name;
  j["cluster"] = scenario.cluster.name;
  j["ep"] = scenario.ep;
  j["attention"] = attention_name(scenario.attention);
  // Every summary has the same keys in the same order (points.csv columns): what does not apply is "".
  const bool tensor_parallel = scenario.attention == AttentionMode::kTensorParallel;
  j["placement"] = scenario.placement.name;
  j["placement_file"] = scenario.placement_file_as_written;
  j["request_scheduling"] = scenario.request_scheduling.name;
  j["tp"] = scenario.tp;
  j["moe_tp"] = scenario.moe_tp;
  j["token_scheduling"] = tensor_parallel ? scenario.token_scheduling.name : "";
  j["dispatch"] = scenario.experts_tensor_parallel() ? "none" : scenario.dispatch_name;  // nothing dispatched
  j["dispatch_kernel"] = s.notes.dispatch_kernel;
  j["tp_collectives"] = s.notes.tp_collectives;
  j["scheduling_fallback"] = s.notes.scheduling_fallback;
  j["routing_drift"] = routing_drift_json(s.notes.routing_drift);
  j["token_table"] = token_table_json(s.notes.token_table);
  j["profile_overlap"] = profile_overlap_json(s.notes.profile_overlap);
  j["group_limit"] = group_limit_json(s.notes.group_limit);
  j["replica_choice"] = scenario.replica_choice_name;
  j["fidelity"] = name_of(kNetworkFidelityNames, scenario.fidelity);
  j["calibration"] = scenario.calibration->name;
  const CalibrationLinks& links = scenario.calibration_links;
  j["calibration_links"] = {{"scaleup", links.scaleup}, {"scaleout", links.scaleout}, {"note", links.note}};
  j["seed"] = scenario.workload.seed;
  j["routing"] = scenario.workload.routing_description();
  j["requests_from"] = requests_from_json(scenario.workload, scenario.serving.prefix_cache);
}

// How far the run got, and at what rate: requests, tokens, throughput (per node too) and the
// saturated window.
void add_throughput(nlohmann::ordered_json& j, const Scenario& scenario, const Summary& s) {
  j["simulated_seconds"] = s.simulated_seconds;
  j["wall_seconds"] = 0.0;  // filled in by the process that timed the run
  j["requests"] = s.requests;
  j["requests_arrived"] = s.requests_arrived;
  j["requests_completed"] = s.requests_completed;
  j["requests_unfinished"] = s.requests_unfinished;
  j["stopped_at"] = s.stopped_at_time_limit ? "time_limit" : "";
  // bench_serving's traffic settings: the arrival rate, and the client-side concurrency cap, a closed
  // loop's (none in an open loop: requests queue at their rank once they arrive;
  // serving.max_running_requests caps the server's batch).
  j["request_rate"] = request_rate_json(scenario);
  j["max_concurrency"] = max_concurrency_json(scenario.workload);
  j["completed_tokens"] = {{"input", s.completed_input_tokens}, {"output", s.completed_output_tokens}};
  const bool timed = s.simulated_seconds > 0;
  auto per_second = [&](double count) {
    return timed ? nlohmann::ordered_json(count / s.simulated_seconds) : nlohmann::ordered_json();
  };
  j["request_throughput"] = per_second(s.requests_completed);
  const GoodputSlos& slos = s.goodput_slos;
  j["request_goodput"] = {
      {"req_s", slos.any() ? per_second(s.good_requests) : nlohmann::ordered_json()},
      {"good_requests", slos.any() ? nlohmann::ordered_json(s.good_requests) : nlohmann::ordered_json()},
      {"slo_ms",
       {{"ttft", optional_json(slos.ttft_ms)},
        {"tpot", optional_json(slos.tpot_ms)},
        {"e2el", optional_json(slos.e2el_ms)}}}};
  j["throughput_tok_s"] = {{"input", s.input_tok_s}, {"output", s.output_tok_s}, {"total", s.total_tok_s}};
  // Per node of the EP group (a fraction when the group is part of a node), as deployments report it.
  const double nodes = ep_nodes(scenario);
  j["pool"] = serving_pool_name(scenario.serving.pool);
  j["ep_nodes"] = nodes;
  j["throughput_tok_s_per_node"] = {
      {"input", s.input_tok_s / nodes}, {"output", s.output_tok_s / nodes}, {"total", s.total_tok_s / nodes}};
  const auto saturated = [&](auto value) {
    return s.saturated ? nlohmann::ordered_json(value(*s.saturated)) : nlohmann::ordered_json();
  };
  j["saturated"] = {
      {"steps", saturated([](const Summary::Window& w) { return w.steps; })},
      {"seconds", saturated([](const Summary::Window& w) { return w.seconds; })},
      {"prefill_tok_s", saturated([](const Summary::Window& w) { return w.prefill_tok_s; })},
      {"decode_tok_s", saturated([](const Summary::Window& w) { return w.decode_tok_s; })},
      {"prefill_tok_s_per_node",
       saturated([&](const Summary::Window& w) { return w.prefill_tok_s / nodes; })},
      {"decode_tok_s_per_node", saturated([&](const Summary::Window& w) { return w.decode_tok_s / nodes; })}};
}

// The engine whose host work the steps paid, its settings and costs, and what that work took.
nlohmann::ordered_json engine_json(const Scenario& scenario, const Summary& s) {
  const EngineSettings& e = scenario.engine;
  const EngineCosts& costs = scenario.calibration->engine;
  return {{"name", name_of(kEngineNames, e.name)},
          {"cuda_graph_max_bs", e.cuda_graph_max_bs},
          {"overlap_schedule", e.overlap_schedule},
          {"mem_fraction_static", scenario.serving.memory_fraction},
          {"costs",
           {{"step_seconds", costs.step_seconds},
            {"request_step_seconds", costs.request_step_seconds},
            {"eager_layer_seconds", costs.eager_layer_seconds},
            {"graph_step_seconds", costs.graph_step_seconds},
            {"request_seconds", costs.request_seconds}}},
          {"host_seconds", s.engine_host_seconds},
          {"exposed_seconds", s.phase_totals[Phase::kEngine]},
          {"eager_steps", s.eager_steps}};
}

// Speculative decoding: what drafted and what the verifications realised. Per verification, the drafts
// accepted and the tokens kept (accepted + the target model's own, fewer when the request needed
// fewer: SGLang's accept length); per draft position, accepted ÷ reached (every draft before it
// accepted), the conditional rate the acceptance model draws with. Null where nothing verified.
nlohmann::ordered_json speculative_json(const Scenario& scenario, const MemoryPlan& memory,
                                        const AcceptanceCounts& counts) {
  using Json = nlohmann::ordered_json;
  const SpeculativeDecoding& spec = scenario.serving.speculative;
  const AcceptanceModel& model = spec.acceptance;
  Json acceptance = {{"dist", name_of(kAcceptanceKindNames, model.kind)}};
  if (model.kind == AcceptanceKind::kTrace)
    acceptance["trace"] = model.trace_file;
  else
    acceptance["rates"] = model.rates;
  acceptance["source"] = model.source;
  const auto verifications = static_cast<double>(counts.verifications);
  auto per_verification = [&](long long total) {
    return counts.verifications > 0 ? Json(static_cast<double>(total) / verifications) : Json();
  };
  Json positions = Json::array();
  for (std::size_t i = 0; i < static_cast<std::size_t>(spec.tokens); ++i) {
    const long long reached = i < counts.reached.size() ? counts.reached[i] : 0;
    positions.push_back(reached > 0
                            ? Json(static_cast<double>(counts.accepted_at[i]) / static_cast<double>(reached))
                            : Json());
  }
  return {{"method", name_of(kSpeculativeMethodNames, spec.method)},
          {"tokens", spec.tokens},
          {"draft_model", spec.draft_model ? Json(spec.draft_model->name) : Json()},
          {"acceptance", std::move(acceptance)},
          {"verifications", counts.verifications},
          {"accepted_per_verification", per_verification(counts.accepted)},
          {"tokens_per_verification", per_verification(counts.tokens)},
          {"position_acceptance", std::move(positions)},
          {"draft_weight_bytes_per_device", memory.draft_weight_bytes_per_device}};
}

// The prefix caches' work: prompt tokens found cached (the hit rate is their share of the prompt
// tokens of the requests admitted with a cache), requests with a hit, blocks evicted. Null figures
// where no rank kept a cache (a disaggregated run's decode pool).
nlohmann::ordered_json prefix_cache_json(const PrefixCacheCounts& counts) {
  using Json = nlohmann::ordered_json;
  auto kept = [&](auto value) { return counts.on ? Json(value) : Json(); };
  return {{"block_tokens", kept(counts.block_tokens)},
          {"requests", kept(counts.requests)},
          {"hit_requests", kept(counts.hit_requests)},
          {"prompt_tokens", kept(counts.prompt_tokens)},
          {"cached_tokens", kept(counts.cached_tokens)},
          {"hit_rate", kept(counts.hit_rate())},
          {"evicted_blocks", kept(counts.evicted_blocks)},
          {"evicted_tokens", kept(counts.evicted_blocks * counts.block_tokens)}};
}

// Latencies, then what the steps spent their time on: MoE traffic and balance, phases, overlap,
// memory and the batch limits.
void add_steps(nlohmann::ordered_json& j, const Scenario& scenario, const MemoryPlan& memory,
               const Summary& s) {
  const double phases = s.phase_totals.total();
  auto share = [&](double part) { return phases > 0 ? part / phases : 0.0; };
  const PhaseSeconds& t = s.phase_totals;
  // Every phase of the kernels but the dense layers and LM head.
  double moe = 0;
  for (const Phase p : kPhases)
    if (p != Phase::kOther && p != Phase::kEngine) moe += t[p];
  // The engine phase only where an engine ran: the summaries of runs without one keep their keys.
  const auto reported = [&](Phase p) { return p != Phase::kEngine || scenario.engine.on(); };
  j["ttft_s"] = distribution_json(s.ttft);
  j["tpot_s"] = distribution_json(s.tpot);
  j["itl_s"] = distribution_json(s.itl);
  j["e2e_s"] = distribution_json(s.e2e);
  // A dense model routes nothing: its routing figures do not apply (null, as statistics of nothing).
  const bool routed = !scenario.model.dense();
  auto if_routed = [&](double value) {
    return routed ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };
  j["lar"] = if_routed(s.lar);
  j["a2a_bytes"] = {{"scale_up", s.a2a_scale_up_bytes},
                    {"scale_out", s.a2a_scale_out_bytes},
                    {"forwarded", s.a2a_forwarded_bytes}};
  j["imbalance"] = if_routed(s.imbalance);
  j["steps"] = s.steps;
  j["mean_step_seconds"] = s.mean_step_seconds;
  for (const Phase p : kPhases)
    if (reported(p)) j["phase_seconds"][std::string(phase_name(p).key)] = t[p];
  for (const Phase p : kPhases)
    if (reported(p)) j["phase_share"][std::string(phase_name(p).key)] = share(t[p]);
  j["a2a_share_of_moe_time"] = if_routed(moe > 0 ? (t[Phase::kDispatch] + t[Phase::kCombine]) / moe : 0.0);
  j["tp_collective_bytes"] = s.tp_collective_bytes;
  j["overlap"] = name_of(kOverlapNames, scenario.serving.overlap);
  j["comm_exposed_seconds"] = s.comm_exposed_seconds;
  j["comm_hidden_seconds"] = s.comm_hidden_seconds;
  if (scenario.engine.on()) j["engine"] = engine_json(scenario, s);
  j["kv_capacity_tokens_per_rank"] = memory.kv_capacity_tokens;
  j["weight_bytes_per_device"] = memory.weight_bytes_per_device;
  j["dispatch_buffer_bytes_per_device"] = memory.dispatch_buffer_bytes_per_device;
  // Runs with and without replicas differ in weights and routing: say which this was.
  j["expert_slots"] = {{"physical_per_layer", memory.physical_slots_per_layer},
                       {"redundant", memory.redundant_experts},
                       {"most_per_device", memory.most_slots_per_device}};
  j["experts_device_seconds"] = {{"slowest", s.experts_slowest_seconds}, {"mean", s.experts_mean_seconds}};
  j["batch_limits"] = {{"kv_wait_step_share", s.kv_wait_step_share},
                       {"token_budget_step_share", s.token_budget_step_share},
                       {"request_cap_step_share", s.request_cap_step_share},
                       {"kv_use_peak", s.kv_use_peak},
                       {"kv_use_mean", s.kv_use_mean}};
}

}  // namespace

nlohmann::ordered_json summary_json(const Scenario& scenario, const MemoryPlan& memory, const Summary& s) {
  nlohmann::ordered_json j;
  add_setup(j, scenario, s);
  add_throughput(j, scenario, s);
  add_steps(j, scenario, memory, s);
  j["workload"] = workload_json(scenario.workload, s);
  j["semsim_version"] = semsim_version();
  // Appended after the keys that predate dense models (points.csv columns keep their places).
  j["model_kind"] = scenario.model.dense() ? "dense" : "moe";
  if (scenario.serving.speculative.on()) j["speculative"] = speculative_json(scenario, memory, s.acceptance);
  if (scenario.serving.prefix_cache) j["prefix_cache"] = prefix_cache_json(s.prefix_cache);
  return j;
}

namespace {

void flatten_into(std::vector<std::pair<std::string, nlohmann::ordered_json>>& out,
                  const nlohmann::ordered_json& j, const std::string& prefix) {
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (path == "wall_seconds") continue;
    if (value.is_object())
      flatten_into(out, value, path);
    else
      out.emplace_back(path, value);
  }
}

}  // namespace

std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_summary(
    const nlohmann::ordered_json& summary) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out;
  flatten_into(out, summary, "");
  return out;
}

}  // namespace semsim
