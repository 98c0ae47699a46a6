#include "sim/outputs/deployment_summary.hpp"

#include <algorithm>

#include "policies/routing_metrics.hpp"
#include "sim/outputs/summary_json.hpp"

namespace semsim {
namespace {

void shift_steps(RequestRecord& r, int offset) {
  if (r.first_token_step >= 0) r.first_token_step += offset;
  if (r.finish_step >= 0) r.finish_step += offset;
  for (RequestRecord::TokenGap& gap : r.token_gaps) {
    gap.after_step += offset;
    gap.at_step += offset;
  }
}

void add_acceptance(AcceptanceCounts& into, const AcceptanceCounts& from) {
  into.verifications += from.verifications;
  into.accepted += from.accepted;
  into.tokens += from.tokens;
  for (auto [to, add] :
       {std::pair{&into.reached, &from.reached}, std::pair{&into.accepted_at, &from.accepted_at}}) {
    if (to->size() < add->size()) to->resize(add->size(), 0);
    for (std::size_t k = 0; k < add->size(); ++k) (*to)[k] += (*add)[k];
  }
}

void add_prefix_cache(PrefixCacheCounts& into, const PrefixCacheCounts& from) {
  into.on = into.on || from.on;
  into.block_tokens = std::max(into.block_tokens, from.block_tokens);
  into.requests += from.requests;
  into.hit_requests += from.hit_requests;
  into.prompt_tokens += from.prompt_tokens;
  into.cached_tokens += from.cached_tokens;
  into.evicted_blocks += from.evicted_blocks;
}

nlohmann::ordered_json or_null(bool known, double value) {
  return known ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

// One instance's keys under deployment.instance.
nlohmann::ordered_json instance_json(const Summary& s) {
  const bool timed = s.simulated_seconds > 0;
  return {
      {"requests", s.requests},
      {"requests_completed", s.requests_completed},
      {"simulated_seconds", s.simulated_seconds},
      {"request_throughput", or_null(timed, timed ? s.requests_completed / s.simulated_seconds : 0)},
      {"good_requests",
       s.goodput_slos.any() ? nlohmann::ordered_json(s.good_requests) : nlohmann::ordered_json()},
      {"throughput_tok_s", {{"input", s.input_tok_s}, {"output", s.output_tok_s}}},
      {"lar", s.lar},
      {"prefix_cache_hit_rate", or_null(s.prefix_cache.on, s.prefix_cache.hit_rate())},
      {"ttft_s",
       {{"mean", or_null(s.ttft.count > 0, s.ttft.mean)}, {"p99", or_null(s.ttft.count > 0, s.ttft.p99)}}},
      {"tpot_s",
       {{"mean", or_null(s.tpot.count > 0, s.tpot.mean)}, {"p99", or_null(s.tpot.count > 0, s.tpot.p99)}}},
      {"saturated",
       {{"prefill_tok_s", or_null(s.saturated.has_value(), s.saturated ? s.saturated->prefill_tok_s : 0)},
        {"decode_tok_s", or_null(s.saturated.has_value(), s.saturated ? s.saturated->decode_tok_s : 0)}}}};
}

}  // namespace

RunResult merged_deployment(const DeploymentResult& run) {
  RunResult merged;
  std::vector<int> offset;
  for (std::size_t i = 0; i < run.instances.size(); ++i) {
    const RunResult& instance = run.instances[i];
    offset.push_back(static_cast<int>(merged.steps.size()));
    merged.steps.insert(merged.steps.end(), instance.steps.begin(), instance.steps.end());
    merged.step_instance.insert(merged.step_instance.end(), instance.steps.size(), static_cast<int>(i));
    if (merged.layers.empty()) {
      merged.layers = instance.layers;
    } else {
      for (std::size_t moe = 0; moe < merged.layers.size(); ++moe) {
        merged.layers[moe].phases += instance.layers[moe].phases;
        const std::vector<long long>& devices = instance.layers[moe].device_activations;
        merged.layers[moe].device_activations.insert(merged.layers[moe].device_activations.end(),
                                                     devices.begin(), devices.end());
      }
    }
    merged.end_time = std::max(merged.end_time, instance.end_time);
    merged.stopped_at_time_limit = merged.stopped_at_time_limit || instance.stopped_at_time_limit;
    merged.prefill_tokens += instance.prefill_tokens;
    merged.output_tokens += instance.output_tokens;
    add_acceptance(merged.acceptance, instance.acceptance);
    add_prefix_cache(merged.prefix_cache, instance.prefix_cache);
    merged.engine_host_work = instance.engine_host_work;
  }
  if (run.instances.empty()) return merged;
  merged.kv_capacity_tokens = run.instances.front().kv_capacity_tokens;
  merged.notes = run.instances.front().notes;
  const std::size_t requests = run.instances.front().requests.size();
  for (std::size_t r = 0; r < requests; ++r) {
    const int i = run.instance_of[r];
    RequestRecord record = run.instances[std::max(i, 0)].requests[r];
    if (i >= 0) {
      shift_steps(record, offset[i]);
    } else {
      merged.stopped_at_time_limit = true;  // the router never sent it: the time limit came first
    }
    merged.requests.push_back(std::move(record));
  }
  merged.request_instance = run.instance_of;
  return merged;
}

RunResult instance_run(const DeploymentResult& run, int i) {
  RunResult instance = run.instances[i];
  std::vector<RequestRecord> own;
  for (std::size_t r = 0; r < instance.requests.size(); ++r)
    if (run.instance_of[r] == i) {
      own.push_back(std::move(instance.requests[r]));
      own.back().previous_turn = -1;  // an index into every request: early turns are the totals'
    }
  instance.requests = std::move(own);
  return instance;
}

nlohmann::ordered_json deployment_summary_json(const Scenario& scenario, const MemoryPlan& memory,
                                               const DeploymentResult& run, const GoodputSlos& slos) {
  const Deployment& deployment = *scenario.deployment;
  // Disaggregated instances: their requests end to end over the decode pool's keys, as a
  // disaggregated run reports them.
  const Disaggregation* pools = deployment.instance.front()->disaggregation.get();
  nlohmann::ordered_json j =
      summary_json(pools ? *pools->decode : scenario, memory, summarize(merged_deployment(run), slos));
  if (pools) {
    j["scenario"] = scenario.name;
    j["cluster"] = scenario.cluster.name;
    j["pool"] = "disaggregated";
  }
  std::vector<Summary> instances;
  for (int i = 0; i < deployment.instances; ++i)
    instances.push_back(i < static_cast<int>(run.instances.size()) ? summarize(instance_run(run, i), slos)
                                                                   : Summary{});
  // The merged steps interleave the instances' in time: the saturated window is theirs, summed.
  const bool all_saturated = std::all_of(instances.begin(), instances.end(),
                                         [](const Summary& s) { return s.saturated.has_value(); });
  Summary::Window window;
  for (const Summary& s : instances)
    if (s.saturated) {
      window.steps += s.saturated->steps;
      window.seconds = std::max(window.seconds, s.saturated->seconds);
      window.prefill_tok_s += s.saturated->prefill_tok_s;
      window.decode_tok_s += s.saturated->decode_tok_s;
    }
  const double nodes = (pools ? ep_nodes(*pools->prefill) + ep_nodes(*pools->decode) : ep_nodes(scenario)) *
                       deployment.instances;
  j["ep_nodes"] = nodes;
  for (const char* kind : {"input", "output", "total"})
    j["throughput_tok_s_per_node"][kind] = j["throughput_tok_s"][kind].get<double>() / nodes;
  j["saturated"] = {{"steps", or_null(all_saturated, window.steps)},
                    {"seconds", or_null(all_saturated, window.seconds)},
                    {"prefill_tok_s", or_null(all_saturated, window.prefill_tok_s)},
                    {"decode_tok_s", or_null(all_saturated, window.decode_tok_s)},
                    {"prefill_tok_s_per_node", or_null(all_saturated, window.prefill_tok_s / nodes)},
                    {"decode_tok_s_per_node", or_null(all_saturated, window.decode_tok_s / nodes)}};
  nlohmann::ordered_json d;
  d["instances"] = deployment.instances;
  d["router"] = deployment.router.name;
  d["nodes_per_instance"] = deployment.instance_nodes();
  d["instances_saturated"] = std::count_if(instances.begin(), instances.end(),
                                           [](const Summary& s) { return s.saturated.has_value(); });
  for (int i = 0; i < deployment.instances; ++i)
    d["instance"][std::to_string(i)] = instance_json(instances[i]);
  j["deployment"] = std::move(d);
  return j;
}

}  // namespace semsim
