#include "sim/outputs/bench_serving_json.hpp"

#include <cmath>

#include "sim/outputs/summary_json.hpp"

namespace semsim {
namespace {

// vLLM's burstiness, the gamma shape of the inter-arrival times: 1 / cv^2 (1 for Poisson); null
// where the gaps are not gamma-distributed (fixed, or arrival times read from a file).
nlohmann::ordered_json burstiness_json(const WorkloadSpec& workload) {
  using Json = nlohmann::ordered_json;
  if (workload.concurrency > 0) return Json();  // no inter-arrival process: sends follow finishes
  if (workload.request_log) {
    const auto& drawn = workload.request_log->drawn;
    return drawn && std::isfinite(drawn->burstiness) ? Json(drawn->burstiness) : Json();
  }
  const ArrivalProcess& arrival = workload.arrival;
  return arrival.kind == ArrivalProcess::Kind::kPoisson ? Json(1.0)
         : arrival.kind == ArrivalProcess::Kind::kGamma ? Json(1.0 / (arrival.cv * arrival.cv))
                                                        : Json();
}

}  // namespace

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
  j["max_concurrency"] = max_concurrency_json(scenario.workload);
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
  // SGLang's mean tokens per speculative verification (only with serving.speculative).
  if (scenario.serving.speculative.on())
    j["accept_length"] =
        s.acceptance.verifications > 0
            ? Json(static_cast<double>(s.acceptance.tokens) / static_cast<double>(s.acceptance.verifications))
            : Json();
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

}  // namespace semsim
