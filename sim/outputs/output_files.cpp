#include "sim/outputs/output_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "models/compressed_file.hpp"
#include "models/input_error.hpp"

#include "policies/routing_metrics.hpp"
#include "sim/outputs/version.hpp"

namespace semsim {
namespace fs = std::filesystem;

namespace {

// null statistics over an empty set (a run stopped before any request got there), never 0.
nlohmann::ordered_json distribution_json(const Distribution& d) {
  auto value = [&](double v) { return d.count > 0 ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
  return {{"count", d.count},    {"mean", value(d.mean)}, {"std", value(d.std)}, {"p50", value(d.p50)},
          {"p90", value(d.p90)}, {"p95", value(d.p95)},   {"p99", value(d.p99)}, {"max", value(d.max)}};
}

// The scenario's request rate; null for arrival times read from a file (no rate is set), "inf" (as
// vLLM writes it) for a request log whose requests were all sent at once.
nlohmann::ordered_json request_rate_json(const Scenario& scenario) {
  const WorkloadSpec& workload = scenario.workload;
  if (workload.request_log) {
    const auto& drawn = workload.request_log->drawn;
    if (!drawn) return nullptr;
    return std::isinf(drawn->rate) ? nlohmann::ordered_json("inf") : nlohmann::ordered_json(drawn->rate);
  }
  return workload.arrival.kind == ArrivalProcess::Kind::kTrace
             ? nlohmann::ordered_json()
             : nlohmann::ordered_json(workload.arrival.rate);
}

// vLLM's burstiness, the gamma shape of the inter-arrival times: 1 / cv^2 (1 for Poisson); null
// where the gaps are not gamma-distributed (fixed, or arrival times read from a file).
nlohmann::ordered_json burstiness_json(const WorkloadSpec& workload) {
  using Json = nlohmann::ordered_json;
  if (workload.request_log) {
    const auto& drawn = workload.request_log->drawn;
    return drawn && std::isfinite(drawn->burstiness) ? Json(drawn->burstiness) : Json();
  }
  const ArrivalProcess& arrival = workload.arrival;
  return arrival.kind == ArrivalProcess::Kind::kPoisson ? Json(1.0)
         : arrival.kind == ArrivalProcess::Kind::kGamma ? Json(1.0 / (arrival.cv * arrival.cv))
                                                        : Json();
}

// Where the requests came from: a request log's file, format, rows and arrivals ("" and null for
// generated requests, so every summary has these keys).
nlohmann::ordered_json requests_from_json(const WorkloadSpec& workload) {
  const RequestLog* log = workload.request_log.get();
  auto count = [&](int value) { return log ? nlohmann::ordered_json(value) : nlohmann::ordered_json(); };
  return {{"file", log ? log->file : ""},       {"format", log ? log->format_name() : ""},
          {"rows", count(log ? log->rows : 0)}, {"skipped", count(log ? log->skipped : 0)},
          {"used", count(workload.requests)},   {"arrivals", log ? log->arrivals_description() : ""},
          {"note", log ? log->note : ""}};
}

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

std::string attention_name(AttentionMode mode) {
  return mode == AttentionMode::kDataParallel ? "dp" : "tp";
}

}  // namespace

nlohmann::ordered_json routing_drift_json(const std::optional<RoutingDrift>& drift) {
  nlohmann::ordered_json j;
  auto value = [](const std::optional<double>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  j["popularity_mean"] = drift ? value(drift->popularity_mean) : nullptr;
  j["popularity_max"] = drift ? value(drift->popularity_max) : nullptr;
  j["popularity_max_layer"] = drift ? nlohmann::ordered_json(drift->popularity_max_layer) : nullptr;
  j["coactivation_mean"] = drift ? value(drift->coactivation_mean) : nullptr;
  j["coactivation_max"] = drift ? value(drift->coactivation_max) : nullptr;
  j["popularity_noise"] = drift ? value(drift->popularity_noise) : nullptr;
  j["coactivation_noise"] = drift ? value(drift->coactivation_noise) : nullptr;
  j["stale"] = drift ? nlohmann::ordered_json(drift->stale()) : nullptr;
  return j;
}

std::string routing_drift_text(const nlohmann::ordered_json& drift) {
  if (drift["popularity_mean"].is_null()) return "";
  std::string out = fmt::format(
      "Routing drift from the profile: expert popularity JS divergence {:.4f} bits (max {:.4f}, MoE "
      "layer {})",
      drift["popularity_mean"].get<double>(), drift["popularity_max"].get<double>(),
      drift["popularity_max_layer"].get<int>());
  if (!drift["coactivation_mean"].is_null())
    out += fmt::format(", co-activation spectrum distance {:.3f} (max {:.3f})",
                       drift["coactivation_mean"].get<double>(), drift["coactivation_max"].get<double>());
  if (!drift["popularity_noise"].is_null())
    out += fmt::format("; halves of these requests differ by {:.4f} bits{}",
                       drift["popularity_noise"].get<double>(),
                       drift["coactivation_noise"].is_null()
                           ? std::string()
                           : fmt::format(" and {:.3f}", drift["coactivation_noise"].get<double>()));
  out += "\n";
  if (drift["stale"].get<bool>())
    out +=
        "Warning: the requests route unlike the profiled ones, beyond sampling noise: the placement may be "
        "stale\n";
  return out;
}

nlohmann::ordered_json token_table_json(const std::optional<TokenTableMatch>& match) {
  nlohmann::ordered_json j;
  j["vocabulary"] = match ? nlohmann::ordered_json(match->vocabulary) : nullptr;
  j["by_text"] = match ? nlohmann::ordered_json(match->by_text) : nullptr;
  j["by_normalized_text"] = match ? nlohmann::ordered_json(match->by_normalized_text) : nullptr;
  j["unmatched"] = match ? nlohmann::ordered_json(match->unmatched()) : nullptr;
  j["same_vocabulary"] = match ? nlohmann::ordered_json(match->same_vocabulary) : nullptr;
  return j;
}

std::string token_table_text(const nlohmann::ordered_json& table) {
  if (table["same_vocabulary"].is_null() || table["same_vocabulary"].get<bool>()) return "";
  return fmt::format(
      "Token table matched to these tokens: {} of {} by text, {} by normalized text, {} unknown to it\n",
      table["by_text"].get<long long>(), table["vocabulary"].get<long long>(),
      table["by_normalized_text"].get<long long>(), table["unmatched"].get<long long>());
}

namespace {

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
  const bool generated = !w.request_log && w.arrival.kind != ArrivalProcess::Kind::kTrace;
  nlohmann::ordered_json j;
  j["requests"] = w.requests;
  j["arrival"] = {{"process", w.request_log ? "requests_from" : kProcesses[static_cast<int>(w.arrival.kind)]},
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
  return j;
}

}  // namespace

nlohmann::ordered_json profile_overlap_json(const std::optional<ProfileOverlap>& overlap) {
  nlohmann::ordered_json j;
  j["profiled_trace"] = overlap ? nlohmann::ordered_json(overlap->source.trace) : nullptr;
  j["same_trace"] = overlap ? nlohmann::ordered_json(overlap->same_trace) : nullptr;
  j["split"] = overlap ? nlohmann::ordered_json(overlap->source.split) : nullptr;
  j["seed"] = overlap ? nlohmann::ordered_json(overlap->source.seed) : nullptr;
  j["evaluated_requests"] = overlap ? nlohmann::ordered_json(overlap->evaluated) : nullptr;
  j["profiled_requests"] = overlap ? nlohmann::ordered_json(overlap->profiled) : nullptr;
  return j;
}

std::string profile_overlap_text(const nlohmann::ordered_json& overlap) {
  if (overlap["same_trace"].is_null()) return "";
  if (!overlap["same_trace"].get<bool>())
    return fmt::format("Profiled on another trace: {}\n", overlap["profiled_trace"].get<std::string>());
  const auto profiled = overlap["profiled_requests"].get<long long>();
  if (profiled == 0)
    return fmt::format("Profiled on other requests of this trace (split {}, seed {}): none of these\n",
                       overlap["split"].get<double>(), overlap["seed"].get<std::uint64_t>());
  return fmt::format(
      "Warning: {} of the {} requests were profiled (split {}, seed {} of this trace): their LAR is "
      "in-sample; replay or evaluate the held-out ones (split {}, seed {}) for unseen requests only\n",
      profiled, overlap["evaluated_requests"].get<long long>(), overlap["split"].get<double>(),
      overlap["seed"].get<std::uint64_t>(), overlap["split"].get<double>(),
      overlap["seed"].get<std::uint64_t>());
}

nlohmann::ordered_json group_limit_json(const std::optional<GroupLimitCheck>& check) {
  nlohmann::ordered_json j;
  auto count = [&](long long value) {
    return check ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };
  j["groups"] = count(check ? check->limit.groups : 0);
  j["topk_groups"] = count(check ? check->limit.per_token : 0);
  j["routings"] = count(check ? check->routings : 0);
  j["violating_routings"] = count(check ? check->violating_routings : 0);
  j["tokens"] = count(check ? check->tokens : 0);
  j["violating_tokens"] = count(check ? check->violating_tokens : 0);
  j["most_groups"] = count(check ? check->most_groups : 0);
  return j;
}

std::string group_limit_text(const nlohmann::ordered_json& j) {
  if (j["groups"].is_null()) return "";
  GroupLimitCheck check;
  check.limit = {0, j["groups"].get<int>(), j["topk_groups"].get<int>()};
  check.routings = j["routings"].get<long long>();
  check.violating_routings = j["violating_routings"].get<long long>();
  check.tokens = j["tokens"].get<long long>();
  check.violating_tokens = j["violating_tokens"].get<long long>();
  check.most_groups = j["most_groups"].get<int>();
  std::string out = "Replayed trace against the group limit: " + group_limit_counts(check) + "\n";
  const std::string warning = group_limit_warning(check, "the replayed trace");
  if (!warning.empty()) out += "Warning: " + warning + "\n";
  return out;
}

nlohmann::ordered_json summary_json(const Scenario& scenario, const MemoryPlan& memory, const Summary& s) {
  const double phases = s.phase_totals.total();
  auto share = [&](double part) { return phases > 0 ? part / phases : 0.0; };
  const PhaseSeconds& t = s.phase_totals;
  // Every phase but the dense layers and LM head.
  double moe = 0;
  for (const Phase p : kPhases)
    if (p != Phase::kOther) moe += t[p];
  nlohmann::ordered_json j;
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
  j["token_scheduling"] = tensor_parallel ? scenario.token_scheduling.name : "";
  j["dispatch"] = scenario.dispatch_name;
  j["dispatch_kernel"] = s.notes.dispatch_kernel;
  j["tp_collectives"] = s.notes.tp_collectives;
  j["scheduling_fallback"] = s.notes.scheduling_fallback;
  j["routing_drift"] = routing_drift_json(s.notes.routing_drift);
  j["token_table"] = token_table_json(s.notes.token_table);
  j["profile_overlap"] = profile_overlap_json(s.notes.profile_overlap);
  j["group_limit"] = group_limit_json(s.notes.group_limit);
  j["replica_choice"] = scenario.replica_choice_name;
  j["fidelity"] = scenario.fidelity == NetworkFidelity::kFlow ? "flow" : "bottleneck";
  j["calibration"] = scenario.calibration->name;
  const CalibrationLinks& links = scenario.calibration_links;
  j["calibration_links"] = {{"scaleup", links.scaleup}, {"scaleout", links.scaleout}, {"note", links.note}};
  j["seed"] = scenario.workload.seed;
  j["routing"] = scenario.workload.routing_description();
  j["requests_from"] = requests_from_json(scenario.workload);
  j["simulated_seconds"] = s.simulated_seconds;
  j["wall_seconds"] = 0.0;  // filled in by the process that timed the run
  j["requests"] = s.requests;
  j["requests_arrived"] = s.requests_arrived;
  j["requests_completed"] = s.requests_completed;
  j["requests_unfinished"] = s.requests_unfinished;
  j["stopped_at"] = s.stopped_at_time_limit ? "time_limit" : "";
  // bench_serving's traffic settings: the arrival rate, and no client-side concurrency cap (requests
  // queue at their rank once they arrive; serving.max_running_requests caps the server's batch).
  j["request_rate"] = request_rate_json(scenario);
  j["max_concurrency"] = nullptr;
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
  const double nodes = static_cast<double>(scenario.ep) / scenario.cluster.gpus_per_node;
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
  j["ttft_s"] = distribution_json(s.ttft);
  j["tpot_s"] = distribution_json(s.tpot);
  j["itl_s"] = distribution_json(s.itl);
  j["e2e_s"] = distribution_json(s.e2e);
  j["lar"] = s.lar;
  j["a2a_bytes"] = {{"scale_up", s.a2a_scale_up_bytes},
                    {"scale_out", s.a2a_scale_out_bytes},
                    {"forwarded", s.a2a_forwarded_bytes}};
  j["imbalance"] = s.imbalance;
  j["steps"] = s.steps;
  j["mean_step_seconds"] = s.mean_step_seconds;
  for (const Phase p : kPhases) j["phase_seconds"][std::string(phase_name(p).key)] = t[p];
  for (const Phase p : kPhases) j["phase_share"][std::string(phase_name(p).key)] = share(t[p]);
  j["a2a_share_of_moe_time"] = moe > 0 ? (t[Phase::kDispatch] + t[Phase::kCombine]) / moe : 0.0;
  j["tp_collective_bytes"] = s.tp_collective_bytes;
  j["overlap"] = scenario.serving.overlap == Overlap::kTwoBatch ? "two_batch" : "none";
  j["comm_exposed_seconds"] = s.comm_exposed_seconds;
  j["comm_hidden_seconds"] = s.comm_hidden_seconds;
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
  j["workload"] = workload_json(scenario.workload, s);
  j["semsim_version"] = semsim_version();
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

std::string summary_text(const nlohmann::ordered_json& j) {
  std::string out;
  auto line = [&](const std::string& label, const std::string& value) {
    out += fmt::format("{:<40}{}\n", label, value);
  };
  auto num = [](double v, int digits = 2) { return fmt::format("{:.{}f}", v, digits); };
  auto maybe = [&](const nlohmann::ordered_json& v, double scale = 1) {
    return v.is_null() ? std::string("n/a") : num(v.get<double>() * scale);
  };
  auto section = [&](const std::string& title) { out += fmt::format("{:-^50}\n", title); };
  const double duration = j["simulated_seconds"];
  const int completed = j["requests_completed"];
  // bench_serving's block, in its order, with its labels.
  out += fmt::format("{:=^50}\n", " Serving Benchmark Result (simulated) ");
  line("Backend:", "semsim");
  const auto& rate = j["request_rate"];
  line("Traffic request rate:", rate.is_null()     ? std::string("arrival times from a file")
                                : rate.is_string() ? rate.get<std::string>()
                                                   : fmt::format("{:g}", rate.get<double>()));
  line("Max request concurrency:",
       j["max_concurrency"].is_null() ? std::string("not set") : j["max_concurrency"].dump());
  line("Successful requests:", fmt::format("{} of {}", completed, j["requests"].get<int>()));
  if (j["stopped_at"] == "time_limit") {
    out += fmt::format("  stopped at the time limit: {} arrived, {} unfinished, {} never arrived\n",
                       j["requests_arrived"].get<int>(), j["requests_unfinished"].get<int>(),
                       j["requests"].get<int>() - j["requests_arrived"].get<int>());
    out += fmt::format("  tokens processed, completed or not (tok/s): {} input, {} output\n",
                       num(j["throughput_tok_s"]["input"]), num(j["throughput_tok_s"]["output"]));
  }
  line("Benchmark duration (s):", num(duration));
  const long long input = j["completed_tokens"]["input"], output = j["completed_tokens"]["output"];
  line("Total input tokens:", std::to_string(input));
  line("Total generated tokens:", std::to_string(output));
  line("Request throughput (req/s):", maybe(j["request_throughput"]));
  const auto& goodput = j["request_goodput"];
  if (!goodput["req_s"].is_null()) {
    line("Request goodput (req/s):", maybe(goodput["req_s"]));
    std::string slos;
    for (const auto& [metric, ms] : goodput["slo_ms"].items())
      if (!ms.is_null())
        slos += fmt::format("{}{} <= {:g} ms", slos.empty() ? "" : ", ", metric, ms.get<double>());
    out += fmt::format("  {} of {} completed requests meet {}\n", goodput["good_requests"].get<int>(),
                       completed, slos);
  }
  auto per_second = [&](long long tokens) {
    return duration > 0 ? num(static_cast<double>(tokens) / duration) : std::string("n/a");
  };
  line("Input token throughput (tok/s):", per_second(input));
  line("Output token throughput (tok/s):", per_second(output));
  line("Total token throughput (tok/s):", per_second(input + output));
  const auto& e2e = j["e2e_s"];
  line("Concurrency:", duration > 0 && !e2e["mean"].is_null()
                           ? num(e2e["mean"].get<double>() * e2e["count"].get<double>() / duration)
                           : std::string("n/a"));
  struct Metric {
    const char* key;
    const char* name;
    const char* title;
  };
  for (const Metric& m : {Metric{"ttft_s", "TTFT", "Time to First Token"},
                          Metric{"tpot_s", "TPOT", "Time per Output Token (excl. 1st token)"},
                          Metric{"itl_s", "ITL", "Inter-token Latency"},
                          Metric{"e2e_s", "E2E Latency", "End-to-End Latency"}}) {
    section(m.title);
    const auto& d = j[m.key];
    for (const auto& [stat, label] : {std::pair{"mean", "Mean"},
                                      {"p50", "Median"},
                                      {"std", "Std"},
                                      {"p90", "P90"},
                                      {"p95", "P95"},
                                      {"p99", "P99"}})
      line(fmt::format("{} {} (ms):", label, m.name), maybe(d[stat], 1e3));
    if (std::string(m.key) == "itl_s") line("Max ITL (ms):", maybe(d["max"], 1e3));
  }
  if (j.contains("disaggregation")) {
    const auto& d = j["disaggregation"];
    section(" Disaggregation ");
    line("KV transfers / GB:",
         fmt::format("{} / {} ({})", d["kv_transfers"].get<long long>(),
                     num(d["kv_bytes"].get<double>() / 1e9), d["kv_transfer"].get<std::string>()));
    line("KV transfer mean / p99 (ms):",
         maybe(d["kv_transfer_s"]["mean"], 1e3) + " / " + maybe(d["kv_transfer_s"]["p99"], 1e3));
    for (const char* name : {"prefill", "decode"}) {
      const auto& p = d["pools"][name];
      const auto& saturated = p["saturated"];
      line(fmt::format("{} pool: nodes / EP / busy:", name),
           fmt::format("{} (from node {}) / EP{} / {:.1f}%", p["nodes"].get<int>(),
                       p["first_node"].get<int>(), p["ep"].get<int>(), p["busy_share"].get<double>() * 100));
      line(fmt::format("{} pool: saturated tok/s per node:", name),
           saturated["steps"].is_null() ? std::string("never saturated")
                                        : maybe(saturated[std::string(name) + "_tok_s_per_node"]) +
                                              fmt::format(" over {} steps", saturated["steps"].get<int>()));
    }
    line("Below:", "requests end to end; steps and MoE of the decode pool");
  }
  // What only a simulation says.
  section(" Simulation ");
  line("Scenario:", j["scenario"].get<std::string>());
  line("Model / cluster:",
       j["model"].get<std::string>() + " on " + j["cluster"].get<std::string>() +
           fmt::format(" (EP{}, attention {})", j["ep"].get<int>(), j["attention"].get<std::string>()));
  line("Policies:", j["placement"].get<std::string>() + " placement, " +
                        j["request_scheduling"].get<std::string>() + " scheduling, " +
                        j["dispatch"].get<std::string>() + " dispatch");
  const auto& slots = j["expert_slots"];
  line("Expert slots:", fmt::format("{} per MoE layer ({} redundant), at most {} per device",
                                    slots["physical_per_layer"].get<int>(), slots["redundant"].get<int>(),
                                    slots["most_per_device"].get<int>()));
  line("Network fidelity / calibration:",
       j["fidelity"].get<std::string>() + " / " + j["calibration"].get<std::string>());
  line("Dispatch and combine timed by:", j.value("dispatch_kernel", std::string("-")));
  if (j["pool"] == "prefill" || j["pool"] == "decode")
    line("Serving pool:", j["pool"] == "prefill" ? "prefill only (requests end at their first token)"
                                                 : "decode only (prompts arrive in the KV cache)");
  const auto& saturated = j["saturated"];
  line("Saturated steps / seconds:",
       saturated["steps"].is_null()
           ? std::string("none (no batch limit held work back)")
           : fmt::format("{} / {}", saturated["steps"].get<int>(), num(saturated["seconds"])));
  if (!saturated["steps"].is_null())
    line("Saturated prefill / decode tok/s per node:", num(saturated["prefill_tok_s_per_node"]) + " / " +
                                                           num(saturated["decode_tok_s_per_node"]) +
                                                           fmt::format(" ({} nodes)", num(j["ep_nodes"])));
  if (!j.value("tp_collectives", std::string()).empty())
    line("Attention-TP collectives timed by:", j["tp_collectives"].get<std::string>());
  const auto& log = j["requests_from"];
  if (!log["file"].get<std::string>().empty()) {
    line("Requests from:",
         fmt::format("{} ({}): {} of its {} requests ({} unusable)", log["file"].get<std::string>(),
                     log["format"].get<std::string>(), log["used"].get<int>(), log["rows"].get<int>(),
                     log["skipped"].get<int>()));
    line("Arrival times:", log["arrivals"].get<std::string>());
    if (!log["note"].get<std::string>().empty()) line("Not simulated:", log["note"].get<std::string>());
  }
  out += routing_drift_text(j["routing_drift"]);
  out += token_table_text(j["token_table"]);
  out += profile_overlap_text(j["profile_overlap"]);
  out += group_limit_text(j["group_limit"]);
  if (!j.value("scheduling_fallback", std::string()).empty())
    out +=
        fmt::format("Scheduling without token identities: {}\n", j["scheduling_fallback"].get<std::string>());
  section(" MoE ");
  line("Local activation rate:", num(j["lar"], 4));
  line("A2A bytes scale-up / scale-out (GB):", num(j["a2a_bytes"]["scale_up"].get<double>() / 1e9) + " / " +
                                                   num(j["a2a_bytes"]["scale_out"].get<double>() / 1e9));
  const auto& expert_time = j["experts_device_seconds"];
  line("Expert load imbalance (max/mean):",
       num(j["imbalance"], 3) +
           (expert_time["mean"].get<double>() > 0
                ? fmt::format(" (expert time: slowest device {:.3f}x the mean)",
                              expert_time["slowest"].get<double>() / expert_time["mean"].get<double>())
                : std::string()));
  line("Steps / mean step (ms):",
       fmt::format("{} / {}", j["steps"].get<int>(), num(j["mean_step_seconds"].get<double>() * 1e3, 3)));
  const auto& share = j["phase_share"];
  line("Step time attn/disp/expert/comb/other:",
       fmt::format("{:.1f}% / {:.1f}% / {:.1f}% / {:.1f}% / {:.1f}%", share["attention"].get<double>() * 100,
                   share["dispatch"].get<double>() * 100, share["experts"].get<double>() * 100,
                   share["combine"].get<double>() * 100, share["other"].get<double>() * 100));
  if (j["attention"] == "tp")
    line("Step time RS / AG / permute:",
         fmt::format("{:.1f}% / {:.1f}% / {:.1f}%", share["reduce_scatter"].get<double>() * 100,
                     share["all_gather"].get<double>() * 100, share["permute"].get<double>() * 100));
  if (j["overlap"] != "none")
    line("Communication exposed / hidden (s):",
         fmt::format("{:.3f} / {:.3f}", j["comm_exposed_seconds"].get<double>(),
                     j["comm_hidden_seconds"].get<double>()));
  line("All-to-all share of MoE-layer time:",
       fmt::format("{:.1f}%", j["a2a_share_of_moe_time"].get<double>() * 100));
  const auto& limits = j["batch_limits"];
  line("Steps held back by KV/tokens/requests:",
       fmt::format("{:.1f}% / {:.1f}% / {:.1f}% (KV reserved: peak {:.1f}%, mean {:.1f}%)",
                   limits["kv_wait_step_share"].get<double>() * 100,
                   limits["token_budget_step_share"].get<double>() * 100,
                   limits["request_cap_step_share"].get<double>() * 100,
                   limits["kv_use_peak"].get<double>() * 100, limits["kv_use_mean"].get<double>() * 100));
  line("Wall time (s):", num(j["wall_seconds"], 3));
  out += std::string(50, '=') + "\n";
  return out;
}

RunResult end_to_end(const DisaggregatedResult& run) {
  RunResult e2e = run.decode;
  e2e.prefill_tokens = run.prefill.prefill_tokens;
  e2e.output_tokens += run.prefill.output_tokens;  // the first tokens
  e2e.end_time = std::max(run.prefill.end_time, run.decode.end_time);
  e2e.stopped_at_time_limit = run.prefill.stopped_at_time_limit || run.decode.stopped_at_time_limit;
  return e2e;
}

nlohmann::ordered_json disaggregated_summary_json(const Scenario& scenario, const DisaggregatedPlan& plan,
                                                  const DisaggregatedResult& run, const GoodputSlos& slos) {
  const Disaggregation& pools = *scenario.disaggregation;
  nlohmann::ordered_json j =
      summary_json(*pools.decode, plan.decode.memory, summarize(end_to_end(run), slos));
  j["scenario"] = scenario.name;
  j["cluster"] = scenario.cluster.name;
  j["pool"] = "disaggregated";
  const double nodes = pools.prefill->cluster.nodes + pools.decode->cluster.nodes;
  j["ep_nodes"] = nodes;
  for (const char* key : {"input", "output", "total"})
    j["throughput_tok_s_per_node"][key] = j["throughput_tok_s"][key].get<double>() / nodes;
  std::vector<double> seconds;
  double bytes = 0;
  for (const KvTransferRecord& t : run.transfers) {
    seconds.push_back(t.end - t.start);
    bytes += t.bytes;
  }
  auto& d = j["disaggregation"];
  d["kv_transfer"] = pools.kv_transfer == KvTransferMode::kWhole ? "whole" : "layerwise";
  d["kv_transfers"] = run.transfers.size();
  d["kv_bytes"] = bytes;
  d["kv_transfer_s"] = distribution_json(distribution_of(seconds));
  struct Pool {
    const char* name;
    const Scenario& scenario;
    const RunPlan& plan;
    const RunResult& result;
  };
  const Pool each[] = {{"prefill", *pools.prefill, plan.prefill, run.prefill},
                       {"decode", *pools.decode, plan.decode, run.decode}};
  const double elapsed = std::max(run.prefill.end_time, run.decode.end_time);
  int first_node = 0;
  for (const Pool& pool : each) {
    const Summary summary = summarize(pool.result);
    nlohmann::ordered_json& p = d["pools"][pool.name];
    p = summary_json(pool.scenario, pool.plan.memory, summary);
    p["first_node"] = first_node;
    p["nodes"] = pool.scenario.cluster.nodes;
    // The share of the run's time the pool spent in steps (it idles waiting for work otherwise).
    p["busy_share"] = elapsed > 0 ? summary.phase_totals.total() / elapsed : 0.0;
    first_node += pool.scenario.cluster.nodes;
  }
  return j;
}

void write_kv_transfers_csv(const std::string& path, const DisaggregatedResult& run) {
  std::string text = "id,prefill_rank,decode_rank,bytes,start_s,end_s,seconds\n";
  for (const KvTransferRecord& t : run.transfers)
    text += fmt::format("{},{},{},{:.9g},{:.9g},{:.9g},{:.9g}\n", run.decode.requests[t.index].id,
                        t.prefill_rank, t.decode_rank, t.bytes, t.start, t.end, t.end - t.start);
  write_text_file(path, text);
}

nlohmann::ordered_json bench_serving_json(const Scenario& scenario, const RunResult& run, const Summary& s) {
  using Json = nlohmann::ordered_json;
  const double duration = s.simulated_seconds;
  auto per_second = [&](double count) { return duration > 0 ? Json(count / duration) : Json(); };
  Json j;
  // The run's settings, under bench_serving's names where it has one.
  j["backend"] = "semsim";
  j["model_id"] = scenario.model.name;
  j["scenario"] = scenario.name;
  j["seed"] = scenario.workload.seed;
  j["num_prompts"] = s.requests;
  j["request_rate"] = request_rate_json(scenario);
  j["burstiness"] = burstiness_json(scenario.workload);
  j["max_concurrency"] = nullptr;
  // Results: completed requests only, as bench_serving counts them.
  j["duration"] = duration;
  j["completed"] = s.requests_completed;
  j["failed"] = s.requests - s.requests_completed;
  j["total_input_tokens"] = s.completed_input_tokens;
  j["total_output_tokens"] = s.completed_output_tokens;
  j["request_throughput"] = per_second(s.requests_completed);
  j["request_goodput"] = s.goodput_slos.any() ? per_second(s.good_requests) : Json();
  j["input_throughput"] = per_second(static_cast<double>(s.completed_input_tokens));
  j["output_throughput"] = per_second(static_cast<double>(s.completed_output_tokens));
  const auto tokens = static_cast<double>(s.completed_input_tokens + s.completed_output_tokens);
  j["total_throughput"] = per_second(tokens);
  j["total_token_throughput"] = per_second(tokens);  // vLLM's name
  j["concurrency"] = s.e2e.count > 0 ? per_second(s.e2e.mean * static_cast<double>(s.e2e.count)) : Json();
  auto statistics = [&](const std::string& metric, const Distribution& d, bool with_max) {
    auto ms = [&](double seconds) { return d.count > 0 ? Json(seconds * 1e3) : Json(); };
    j["mean_" + metric + "_ms"] = ms(d.mean);
    j["median_" + metric + "_ms"] = ms(d.p50);
    j["std_" + metric + "_ms"] = ms(d.std);
    j["p90_" + metric + "_ms"] = ms(d.p90);
    j["p95_" + metric + "_ms"] = ms(d.p95);
    j["p99_" + metric + "_ms"] = ms(d.p99);
    if (with_max) j["max_" + metric + "_ms"] = ms(d.max);
  };
  statistics("ttft", s.ttft, false);
  statistics("tpot", s.tpot, false);
  statistics("itl", s.itl, true);
  statistics("e2e_latency", s.e2e, false);  // SGLang's name
  statistics("e2el", s.e2e, false);         // vLLM's name
  // The per-request details bench_serving saves, in arrival order (not `itls`: one value per token).
  Json input_lens = Json::array(), output_lens = Json::array(), ttfts = Json::array(), errors = Json::array();
  for (const RequestRecord& r : run.requests) {
    input_lens.push_back(r.input_tokens);
    output_lens.push_back(r.completed() ? r.output_tokens : 0);
    ttfts.push_back(r.first_token >= 0 ? Json(r.first_token - r.arrival) : Json());
    errors.push_back(r.completed() ? ""
                     : r.arrived() ? "unfinished when the run stopped at its time limit"
                                   : "not arrived when the run stopped at its time limit");
  }
  j["input_lens"] = std::move(input_lens);
  j["output_lens"] = std::move(output_lens);
  j["ttfts"] = std::move(ttfts);
  j["errors"] = std::move(errors);
  return j;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

void write_requests_csv(const std::string& path, const RunResult& run) {
  std::string text = "id,arrival_s,rank,input_tokens,output_tokens,ttft_s,tpot_s,e2e_s,completed\n";
  for (const RequestRecord& r : run.requests) {
    if (!r.arrived()) continue;  // the run stopped before it arrived: nothing to say about it
    const bool done = r.completed();
    const double tpot = time_per_output_token(r);
    text += fmt::format("{},{:.9g},{},{},{},{},{},{},{}\n", r.id, r.arrival, r.rank, r.input_tokens,
                        r.output_tokens,
                        r.first_token >= 0 ? fmt::format("{:.9g}", r.first_token - r.arrival) : "",
                        tpot >= 0 ? fmt::format("{:.9g}", tpot) : "",
                        done ? fmt::format("{:.9g}", r.finish - r.arrival) : "", done ? 1 : 0);
  }
  write_text_file(path, text);
}

namespace {

// Phase columns of steps.csv and layers.csv: the phases [first, last] as "KEY_s".
std::string phase_columns(Phase first, Phase last) {
  std::string header;
  for (int p = static_cast<int>(first); p <= static_cast<int>(last); ++p)
    fmt::format_to(std::back_inserter(header), "{}{}_s", header.empty() ? "" : ",",
                   phase_name(static_cast<Phase>(p)).key);
  return header;
}

// The seconds of phases [first, last], comma-separated.
auto phase_values(const PhaseSeconds& phases, Phase first, Phase last) {
  return fmt::join(phases.seconds.begin() + static_cast<int>(first),
                   phases.seconds.begin() + static_cast<int>(last) + 1, ",");
}

}  // namespace

void write_steps_csv(const std::string& path, const RunResult& run) {
  std::string text = fmt::format(
      "step,start_s,duration_s,{},prefill_tokens,decode_tokens,a2a_scale_up_bytes,a2a_scale_out_bytes,lar,"
      "imbalance,{},tp_collective_bytes,comm_exposed_s,comm_hidden_s\n",
      phase_columns(Phase::kAttention, Phase::kOther), phase_columns(Phase::kReduceScatter, Phase::kPermute));
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const StepRecord& s = run.steps[i];
    text +=
        fmt::format("{},{:.9g},{:.9g},{:.9g},{},{},{:.9g},{:.9g},{:.6f},{:.6f},{:.9g},{:.9g},{:.9g},{:.9g}\n",
                    i, s.start, s.phases.total(), phase_values(s.phases, Phase::kAttention, Phase::kOther),
                    s.prefill_tokens, s.decode_tokens, s.a2a_scale_up_bytes, s.a2a_scale_out_bytes,
                    local_activation_rate(s.local_activations, s.activations), s.imbalance,
                    phase_values(s.phases, Phase::kReduceScatter, Phase::kPermute), s.tp_collective_bytes,
                    s.comm_exposed, s.comm_hidden);
  }
  write_text_file(path, text);
}

void write_layers_csv(const std::string& path, const RunResult& run) {
  const std::size_t devices = run.layers.empty() ? 0 : run.layers.front().device_activations.size();
  std::string text =
      fmt::format("moe_layer,layer,{},imbalance", phase_columns(Phase::kAttention, Phase::kCombine));
  for (std::size_t d = 0; d < devices; ++d) text += fmt::format(",activations_device_{}", d);
  text += fmt::format(",{}\n", phase_columns(Phase::kReduceScatter, Phase::kPermute));
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    const LayerTotals& l = run.layers[i];
    text += fmt::format("{},{},{:.9g},{:.6f}", i, l.layer,
                        phase_values(l.phases, Phase::kAttention, Phase::kCombine),
                        load_imbalance(l.device_activations));
    for (const long long served : l.device_activations) text += fmt::format(",{}", served);
    text += fmt::format(",{:.9g}\n", phase_values(l.phases, Phase::kReduceScatter, Phase::kPermute));
  }
  write_text_file(path, text);
}

namespace {

// A folder that holds anything but an earlier run's outputs (or a killed run's staging folder) is
// someone else's: refuse it rather than mix or delete.
void check_out_dir_is_ours(const std::string& out_dir, const IsOutputFile& is_output) {
  std::error_code error;
  if (!fs::is_directory(out_dir, error)) return;
  for (const auto& entry : fs::directory_iterator(out_dir, error)) {
    const std::string name = entry.path().filename().string();
    if ((!entry.is_directory() && is_output(name)) || (entry.is_directory() && name.starts_with(".staging-")))
      continue;
    throw InputError(fmt::format(
        "--out '{}': holds '{}', which semsim did not write; semsim writes only into an empty folder or "
        "one holding an earlier run's outputs (which it replaces)",
        out_dir, name));
  }
}

}  // namespace

bool is_run_file(const std::string& file_name) {
  static const char* const kRunFiles[] = {
      "summary.json", "scenario.resolved.yaml", "requests.csv",       "steps.csv",
      "layers.csv",   "prefill_steps.csv",      "prefill_layers.csv", "kv_transfers.csv"};
  return std::find(std::begin(kRunFiles), std::end(kRunFiles), file_name) != std::end(kRunFiles);
}

OutputStaging::OutputStaging(const std::string& out_dir, IsOutputFile is_output)
    : out_dir_(out_dir), is_output_(std::move(is_output)) {
  staging_dir_ = (fs::path(out_dir_) / fmt::format(".staging-{}", ::getpid())).string();
  check_out_dir_is_ours(out_dir_, is_output_);
  try {
    fs::create_directories(out_dir_);
    remove_leftovers_of_dead_processes(out_dir_, ".staging-");
    fs::remove_all(staging_dir_);
    fs::create_directories(staging_dir_);
  } catch (const fs::filesystem_error& e) {
    throw InputError("--out '" + out_dir_ + "': cannot create the output folder (" + e.code().message() +
                     ")");
  }
}

OutputStaging::~OutputStaging() {
  std::error_code ignored;
  fs::remove_all(staging_dir_, ignored);
  for (const auto& [staged, destination] : outside_) fs::remove(staged, ignored);
}

std::string OutputStaging::staged(const std::string& file_name) {
  files_.push_back(file_name);
  return (fs::path(staging_dir_) / file_name).string();
}

std::string OutputStaging::staged_at(const std::string& destination) {
  const fs::path target(destination);
  remove_leftovers_of_dead_processes(target.parent_path().empty() ? fs::path(".") : target.parent_path(),
                                     target.filename().string() + ".partial-");
  outside_.emplace_back(fmt::format("{}.partial-{}", destination, ::getpid()), destination);
  return outside_.back().first;
}

void OutputStaging::commit() {
  for (const auto& name : files_) fs::rename(fs::path(staging_dir_) / name, fs::path(out_dir_) / name);
  // An earlier run's file this run does not write (its outputs switched off, fewer clusters) would
  // be stale beside the new ones.
  std::vector<fs::path> stale;
  for (const auto& entry : fs::directory_iterator(out_dir_)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() && is_output_(name) &&
        std::find(files_.begin(), files_.end(), name) == files_.end())
      stale.push_back(entry.path());
  }
  for (const fs::path& path : stale) fs::remove(path);
  for (const auto& [staged, destination] : outside_) fs::rename(staged, destination);
  outside_.clear();
}

}  // namespace semsim
