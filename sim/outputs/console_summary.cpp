#include "sim/outputs/console_summary.hpp"

#include <fmt/format.h>

#include <utility>

#include "sim/outputs/run_notes.hpp"

namespace semsim {
namespace {

using Json = nlohmann::ordered_json;

// A line of bench_serving's layout: the label padded to 40 columns, then the value; a longer label
// is still followed by a space.
void line(std::string& out, const std::string& label, const std::string& value) {
  out += fmt::format("{:<39} {}\n", label, value);
}

void section(std::string& out, const std::string& title) {
  out += fmt::format("{:-^50}\n", title);
}

std::string num(double v, int digits = 2) {
  return fmt::format("{:.{}f}", v, digits);
}

std::string maybe(const Json& v, double scale = 1) {
  return v.is_null() ? std::string("n/a") : num(v.get<double>() * scale);
}

// bench_serving's block, in its order, with its labels: requests, tokens and throughput...
void add_bench_serving(std::string& out, const Json& j) {
  const double duration = j["simulated_seconds"];
  const int completed = j["requests_completed"];
  out += fmt::format("{:=^50}\n", " Serving Benchmark Result (simulated) ");
  line(out, "Backend:", "semsim");
  const auto& rate = j["request_rate"];
  line(out, "Traffic request rate:",
       rate.is_null()     ? std::string("arrival times from a file")
       : rate.is_string() ? rate.get<std::string>()
                          : fmt::format("{:g}", rate.get<double>()));
  line(out, "Max request concurrency:",
       j["max_concurrency"].is_null() ? std::string("not set") : j["max_concurrency"].dump());
  line(out, "Successful requests:", fmt::format("{} of {}", completed, j["requests"].get<int>()));
  if (j["stopped_at"] == "time_limit") {
    out += fmt::format("  stopped at the time limit: {} arrived, {} unfinished, {} never arrived\n",
                       j["requests_arrived"].get<int>(), j["requests_unfinished"].get<int>(),
                       j["requests"].get<int>() - j["requests_arrived"].get<int>());
    out += fmt::format("  tokens processed, completed or not (tok/s): {} input, {} output\n",
                       num(j["throughput_tok_s"]["input"]), num(j["throughput_tok_s"]["output"]));
  }
  line(out, "Benchmark duration (s):", num(duration));
  const long long input = j["completed_tokens"]["input"], output = j["completed_tokens"]["output"];
  line(out, "Total input tokens:", std::to_string(input));
  line(out, "Total generated tokens:", std::to_string(output));
  line(out, "Request throughput (req/s):", maybe(j["request_throughput"]));
  const auto& goodput = j["request_goodput"];
  if (!goodput["req_s"].is_null()) {
    line(out, "Request goodput (req/s):", maybe(goodput["req_s"]));
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
  line(out, "Input token throughput (tok/s):", per_second(input));
  line(out, "Output token throughput (tok/s):", per_second(output));
  line(out, "Total token throughput (tok/s):", per_second(input + output));
  const auto& e2e = j["e2e_s"];
  line(out, "Concurrency:",
       duration > 0 && !e2e["mean"].is_null()
           ? num(e2e["mean"].get<double>() * e2e["count"].get<double>() / duration)
           : std::string("n/a"));
}

// ...then its latency sections.
void add_latencies(std::string& out, const Json& j) {
  struct Metric {
    const char* key;
    const char* name;
    const char* title;
  };
  for (const Metric& m : {Metric{"ttft_s", "TTFT", "Time to First Token"},
                          Metric{"tpot_s", "TPOT", "Time per Output Token (excl. 1st token)"},
                          Metric{"itl_s", "ITL", "Inter-token Latency"},
                          Metric{"e2e_s", "E2E Latency", "End-to-End Latency"}}) {
    section(out, m.title);
    const auto& d = j[m.key];
    for (const auto& [stat, label] : {std::pair{"mean", "Mean"},
                                      {"p50", "Median"},
                                      {"std", "Std"},
                                      {"p90", "P90"},
                                      {"p95", "P95"},
                                      {"p99", "P99"}})
      line(out, fmt::format("{} {} (ms):", label, m.name), maybe(d[stat], 1e3));
    if (std::string(m.key) == "itl_s") line(out, "Max ITL (ms):", maybe(d["max"], 1e3));
  }
}

// A disaggregated run's KV transfers and pools (`d`: summary.json's `disaggregation`).
void add_disaggregation(std::string& out, const Json& d) {
  section(out, " Disaggregation ");
  line(out, "KV transfers / GB:",
       fmt::format("{} / {} ({})", d["kv_transfers"].get<long long>(), num(d["kv_bytes"].get<double>() / 1e9),
                   d["kv_transfer"].get<std::string>()));
  line(out, "KV transfer mean / p99 (ms):",
       maybe(d["kv_transfer_s"]["mean"], 1e3) + " / " + maybe(d["kv_transfer_s"]["p99"], 1e3));
  for (const char* name : {"prefill", "decode"}) {
    const auto& p = d["pools"][name];
    const auto& saturated = p["saturated"];
    line(out, fmt::format("{} pool: nodes / EP / busy:", name),
         fmt::format("{} (from node {}) / EP{} / {:.1f}%", p["nodes"].get<int>(), p["first_node"].get<int>(),
                     p["ep"].get<int>(), p["busy_share"].get<double>() * 100));
    line(out, fmt::format("{} pool: saturated tok/s per node:", name),
         saturated["steps"].is_null() ? std::string("never saturated")
                                      : maybe(saturated[std::string(name) + "_tok_s_per_node"]) +
                                            fmt::format(" over {} steps", saturated["steps"].get<int>()));
  }
  line(out, "Below:", "requests end to end; steps and MoE of the decode pool");
}

// A deployment's router and instances (`d`: summary.json's `deployment`).
void add_deployment(std::string& out, const Json& d) {
  section(out, " Deployment ");
  line(out, "Instances / nodes each / router:",
       fmt::format("{} / {} / {}", d["instances"].get<int>(), d["nodes_per_instance"].get<int>(),
                   d["router"].get<std::string>()));
  for (const auto& [i, instance] : d["instance"].items())
    line(out, fmt::format("instance {} requests/LAR/p99 TTFT ms:", i),
         fmt::format("{} / {} / {}", instance["requests"].get<int>(), num(instance["lar"].get<double>(), 4),
                     maybe(instance["ttft_s"]["p99"], 1e3)));
  line(out, "Below:", "the instances together; steps summed over them");
}

// What only a simulation says.
bool is_dense(const Json& j) {
  return j.value("model_kind", std::string("moe")) == "dense";
}

// A dense model's run has no expert group, placement, slots or dispatch to name.
void add_simulation(std::string& out, const Json& j) {
  const bool dense = is_dense(j);
  section(out, " Simulation ");
  line(out, "Scenario:", j["scenario"].get<std::string>());
  line(out, "Model / cluster:",
       j["model"].get<std::string>() + " on " + j["cluster"].get<std::string>() +
           fmt::format(" ({}{}, attention {})", dense ? "dense, devices " : "EP", j["ep"].get<int>(),
                       j["attention"].get<std::string>()));
  if (dense) {
    line(out, "Policies:", j["request_scheduling"].get<std::string>() + " scheduling");
  } else {
    line(out, "Policies:",
         j["placement"].get<std::string>() + " placement, " + j["request_scheduling"].get<std::string>() +
             " scheduling, " +
             (j["dispatch"] == "none" ? "no dispatch (experts split over every device)"
                                      : j["dispatch"].get<std::string>() + " dispatch"));
    const auto& slots = j["expert_slots"];
    line(out, "Expert slots:",
         fmt::format("{} per MoE layer ({} redundant), at most {} per device",
                     slots["physical_per_layer"].get<int>(), slots["redundant"].get<int>(),
                     slots["most_per_device"].get<int>()));
  }
  line(out, "Network fidelity / calibration:",
       j["fidelity"].get<std::string>() + " / " + j["calibration"].get<std::string>());
  if (!dense) line(out, "Dispatch and combine timed by:", j.value("dispatch_kernel", std::string("-")));
  if (j["pool"] == "prefill" || j["pool"] == "decode")
    line(out, "Serving pool:",
         j["pool"] == "prefill" ? "prefill only (requests end at their first token)"
                                : "decode only (prompts arrive in the KV cache)");
  const auto& saturated = j["saturated"];
  line(out, "Saturated steps / seconds:",
       saturated["steps"].is_null()
           ? std::string("none (no batch limit held work back)")
           : fmt::format("{} / {}", saturated["steps"].get<int>(), num(saturated["seconds"])));
  if (!saturated["steps"].is_null())
    line(out, "Saturated prefill / decode tok/s per node:",
         num(saturated["prefill_tok_s_per_node"]) + " / " + num(saturated["decode_tok_s_per_node"]) +
             fmt::format(" ({} nodes)", num(j["ep_nodes"])));
  if (!j.value("tp_collectives", std::string()).empty())
    line(out, "Attention-TP collectives timed by:", j["tp_collectives"].get<std::string>());
  const auto& log = j["requests_from"];
  if (!log["file"].get<std::string>().empty()) {
    line(out, "Requests from:",
         fmt::format("{} ({}): {} of its {} requests ({} unusable)", log["file"].get<std::string>(),
                     log["format"].get<std::string>(), log["used"].get<int>(), log["rows"].get<int>(),
                     log["skipped"].get<int>()));
    line(out, "Arrival times:", log["arrivals"].get<std::string>());
    if (!log["note"].get<std::string>().empty()) line(out, "Not simulated:", log["note"].get<std::string>());
  }
  out += routing_drift_text(j["routing_drift"]);
  out += token_table_text(j["token_table"]);
  out += profile_overlap_text(j["profile_overlap"]);
  out += group_limit_text(j["group_limit"]);
  if (!j.value("scheduling_fallback", std::string()).empty())
    out +=
        fmt::format("Scheduling without token identities: {}\n", j["scheduling_fallback"].get<std::string>());
}

void add_routing(std::string& out, const Json& j) {
  line(out, "Local activation rate:", num(j["lar"], 4));
  line(out, "A2A bytes scale-up / scale-out (GB):",
       num(j["a2a_bytes"]["scale_up"].get<double>() / 1e9) + " / " +
           num(j["a2a_bytes"]["scale_out"].get<double>() / 1e9));
  const auto& expert_time = j["experts_device_seconds"];
  line(out, "Expert load imbalance (max/mean):",
       num(j["imbalance"], 3) +
           (expert_time["mean"].get<double>() > 0
                ? fmt::format(" (expert time: slowest device {:.3f}x the mean)",
                              expert_time["slowest"].get<double>() / expert_time["mean"].get<double>())
                : std::string()));
}

// What the speculative verifications realised, per verification and per draft position.
void add_speculative(std::string& out, const Json& spec) {
  auto rate = [](const Json& v) { return v.is_null() ? std::string("n/a") : num(v.get<double>(), 3); };
  std::string positions;
  for (const Json& position : spec["position_acceptance"])
    positions += (positions.empty() ? "" : ", ") + rate(position);
  line(
      out, "Speculative decoding (" + spec["method"].get<std::string>() + "):",
      fmt::format("{} drafts; {} verifications, {} accepted, {} tokens each; per position {}",
                  spec["tokens"].get<int>(), spec["verifications"].get<long long>(),
                  rate(spec["accepted_per_verification"]), rate(spec["tokens_per_verification"]), positions));
}

// A dense model's steps are its dense layers and LM head ("other") and, under Attention-TP, their
// all-reduces: no routing, dispatch or experts to report.
void add_moe(std::string& out, const Json& j) {
  const bool dense = is_dense(j);
  section(out, dense ? " Dense model " : " MoE ");
  if (dense)
    line(out, "MoE layers:", "none (no routing, dispatch or experts)");
  else
    add_routing(out, j);
  line(out, "Steps / mean step (ms):",
       fmt::format("{} / {}", j["steps"].get<int>(), num(j["mean_step_seconds"].get<double>() * 1e3, 3)));
  const auto& share = j["phase_share"];
  line(out, "Step time attn/disp/expert/comb/other:",
       fmt::format("{:.1f}% / {:.1f}% / {:.1f}% / {:.1f}% / {:.1f}%", share["attention"].get<double>() * 100,
                   share["dispatch"].get<double>() * 100, share["experts"].get<double>() * 100,
                   share["combine"].get<double>() * 100, share["other"].get<double>() * 100));
  if (j["attention"] == "tp")
    line(out, "Step time RS / AG / permute:",
         fmt::format("{:.1f}% / {:.1f}% / {:.1f}%", share["reduce_scatter"].get<double>() * 100,
                     share["all_gather"].get<double>() * 100, share["permute"].get<double>() * 100));
  if (j.contains("engine"))
    line(out, "Engine host work exposed / total (s):",
         fmt::format("{:.3f} / {:.3f} ({:.1f}% of step time; {} eager steps)",
                     j["engine"]["exposed_seconds"].get<double>(), j["engine"]["host_seconds"].get<double>(),
                     share["engine"].get<double>() * 100, j["engine"]["eager_steps"].get<int>()));
  if (j.contains("speculative")) add_speculative(out, j["speculative"]);
  if (j.contains("prefix_cache") && !j["prefix_cache"]["hit_rate"].is_null()) {
    const Json& cache = j["prefix_cache"];
    line(out, "Prefix cache hit rate:",
         fmt::format("{:.1f}% of {} prompt tokens ({} of {} requests hit); {} blocks of {} evicted",
                     cache["hit_rate"].get<double>() * 100, cache["prompt_tokens"].get<long long>(),
                     cache["hit_requests"].get<long long>(), cache["requests"].get<long long>(),
                     cache["evicted_blocks"].get<long long>(), cache["block_tokens"].get<int>()));
  }
  if (const Json& sessions = j["workload"]["sessions"]; !sessions.is_null()) {
    const long long later =
        j["workload"]["requests"].get<long long>() - sessions["sessions"].get<long long>();
    line(out, "Sessions / early later turns:",
         fmt::format("{} / {} of {} (arrived before the turn before them finished)",
                     sessions["sessions"].get<long long>(), sessions["early_turns"].get<long long>(), later));
  }
  if (j["overlap"] != "none")
    line(out, "Communication exposed / hidden (s):",
         fmt::format("{:.3f} / {:.3f}", j["comm_exposed_seconds"].get<double>(),
                     j["comm_hidden_seconds"].get<double>()));
  if (!dense)
    line(out, "All-to-all share of MoE-layer time:",
         fmt::format("{:.1f}%", j["a2a_share_of_moe_time"].get<double>() * 100));
  const auto& limits = j["batch_limits"];
  line(out, "Steps held back by KV/tokens/requests:",
       fmt::format("{:.1f}% / {:.1f}% / {:.1f}% (KV reserved: peak {:.1f}%, mean {:.1f}%)",
                   limits["kv_wait_step_share"].get<double>() * 100,
                   limits["token_budget_step_share"].get<double>() * 100,
                   limits["request_cap_step_share"].get<double>() * 100,
                   limits["kv_use_peak"].get<double>() * 100, limits["kv_use_mean"].get<double>() * 100));
  line(out, "Wall time (s):", num(j["wall_seconds"], 3));
}

}  // namespace

std::string summary_text(const Json& j) {
  std::string out;
  add_bench_serving(out, j);
  add_latencies(out, j);
  if (j.contains("disaggregation")) add_disaggregation(out, j["disaggregation"]);
  if (j.contains("deployment")) add_deployment(out, j["deployment"]);
  add_simulation(out, j);
  add_moe(out, j);
  out += std::string(50, '=') + "\n";
  return out;
}

}  // namespace semsim
