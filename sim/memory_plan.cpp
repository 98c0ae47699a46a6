#include "sim/memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "models/memory_budget.hpp"
#include "models/operator_costs.hpp"
#include "models/topology.hpp"
#include "policies/dispatch.hpp"
#include "sim/run_result.hpp"

namespace semsim {

namespace {

// Speculative decoding's draft on each device: DeepSeek's MTP module is one more layer shaped like the
// model's last (its experts spread as that layer's slots) and a projection of [embedding; hidden
// state] (2 hidden x hidden); a draft model is held whole by every rank.
double draft_weight_bytes(const SpeculativeDecoding& spec, const MoeModel& model, long long slots_per_layer,
                          const Precision& p) {
  if (!spec.on()) return 0;
  if (spec.draft_model) return weight_bytes_per_device(*spec.draft_model, 0, p);
  const long long ffn = model.dense()
                            ? dense_ffn_params(model)
                            : gate_params(model) + model.shared_experts * shared_expert_params(model);
  const long long routed = model.dense() ? 0 : slots_per_layer * expert_params(model);
  const long long projection = 2LL * model.hidden * model.hidden;
  return static_cast<double>(attention_params_per_layer(model) + ffn + projection) * p.weight_bytes() +
         static_cast<double>(routed) * p.expert_weight_bytes();
}

// The draft's own KV cache per token: the MTP layer's, or every layer of the draft model's.
double draft_kv_bytes_per_token(const SpeculativeDecoding& spec, const MoeModel& model, const Precision& p) {
  if (!spec.on()) return 0;
  if (spec.draft_model) return kv_bytes_per_token(*spec.draft_model, p);
  return static_cast<double>(model.kv_elements_per_token_per_layer()) * p.kv_bytes;
}

}  // namespace

// Under Attention-TP every rank holds its shard of the attention, dense FFN and vocabulary weights
// and of every token's KV cache (attention_tp_shard: GQA/MHA KV split by min(tp, kv_heads), MLA's
// latent KV replicated), so the group's token capacity is what one rank's share allows. With experts
// split by tensor parallelism each device holds a slice of every expert of the placement's one rank.
MemoryPlan plan_memory(const YamlInput& root, const Scenario& s, const Placement& placement) {
  const MoeModel rank_model = experts_tp_shard(
      s.attention == AttentionMode::kTensorParallel ? attention_tp_shard(s.model, s.tp) : s.model, s.moe_tp);
  MemoryPlan m;
  m.weight_bytes_per_device =
      weight_bytes_per_device(rank_model, placement.max_slots_per_device(), s.precision);
  m.physical_slots_per_layer = placement.most_slots_per_layer();
  m.redundant_experts = m.physical_slots_per_layer - placement.experts;
  for (const auto& layer : placement.slots)
    for (const auto& device : layer)
      m.most_slots_per_device = std::max(m.most_slots_per_device, static_cast<int>(device.size()));
  // An engine sizes its static pool (SGLang's mem_fraction_static) by the memory the driver reports.
  const double memory_bytes =
      s.engine.on() ? s.cluster.device.driver_memory_mib() * Device::kMib : s.cluster.device.hbm_bytes;
  const double usable = memory_bytes * s.serving.memory_fraction;
  const SpeculativeDecoding& spec = s.serving.speculative;
  const long long slots_per_layer = s.model.dense() ? 0 : m.most_slots_per_device;
  m.draft_weight_bytes_per_device = draft_weight_bytes(spec, rank_model, slots_per_layer, s.precision);
  m.weight_bytes_per_device += m.draft_weight_bytes_per_device;
  const double kv_per_token =
      kv_bytes_per_token(rank_model, s.precision) + draft_kv_bytes_per_token(spec, rank_model, s.precision);
  const long long longest =
      kv_reservation(s.serving.pool, s.workload.longest_prompt(), s.workload.output_len.upper_bound()) +
      (s.serving.pool == ServingPool::kPrefill ? 0 : spec.tokens);
  if (s.low_latency_buffer_tokens > 0 &&
      !s.model.dense())  // DeepEP's experts are the group's slots, replicas included
    m.dispatch_buffer_bytes_per_device = low_latency_buffer_bytes(s.low_latency_buffer_tokens, s.model.hidden,
                                                                  m.physical_slots_per_layer, s.ep);
  const double fixed = m.weight_bytes_per_device + m.dispatch_buffer_bytes_per_device;
  m.kv_capacity_tokens = static_cast<long long>((usable - fixed) / kv_per_token);
  if (m.kv_capacity_tokens < longest) {
    std::ostringstream msg;
    msg.precision(3);
    msg << "model '" << s.model.name << "' does not fit: " << m.weight_bytes_per_device / 1e9
        << " GB of weights per device "
        << (s.model.dense()
                ? fmt::format("with attention {} over {} devices", attention_name(s.attention), s.ep)
                : fmt::format("at EP{}", s.ep))
        << (m.dispatch_buffer_bytes_per_device > 0
                ? fmt::format(" and {:.3g} GB of DeepEP low-latency buffers",
                              m.dispatch_buffer_bytes_per_device / 1e9)
                : "")
        << " plus the KV cache of one longest request (" << longest << " tokens, "
        << longest * kv_per_token / 1e9 << " GB) exceed " << usable / 1e9 << " GB usable ("
        << (s.engine.on() ? "SGLang's mem_fraction_static " : "") << s.serving.memory_fraction << " of "
        << memory_bytes / 1e9 << " GB" << (s.engine.on() ? " the driver reports" : "") << " on "
        << s.cluster.device.name << ")";
    (root.has("model") ? root.required("model") : root).fail(msg.str());
  }
  return m;
}

namespace {

// Fewer steps than any run of the scenario's requests takes: their output tokens at full batches on
// every rank, and a mean request's output tokens one step after another.
double least_steps(const Scenario& s) {
  const double output_len = s.workload.output_len.mean();
  const double output_tokens = static_cast<double>(s.workload.requests) * output_len;
  return std::max(output_tokens / (static_cast<double>(s.dp) * s.serving.max_running_requests), output_len);
}

// Where errors about the EP group's size are reported.
YamlInput ep_key(const YamlInput& root) {
  const YamlInput parallelism = root.has("parallelism") ? root.required("parallelism") : root;
  return parallelism.has("ep") ? parallelism.required("ep") : parallelism;
}

}  // namespace

// The least a run holds in memory: per request its arrival, its prefix identity, its record and its
// latencies (with the copy a percentile sorts); per step its record and inter-token gap, with every rank's
// batch as full as serving.max_running_requests allows (fewer steps than any run of these requests can take).
// Refused at workload.requests when even that exceeds the machine's memory; what grows with the
// square of the EP group is refused at parallelism.ep.
void check_run_memory(const YamlInput& root, const Scenario& s) {
  const auto requests = static_cast<double>(s.workload.requests);
  const double output_tokens = requests * s.workload.output_len.mean();
  const double steps = least_steps(s);
  double bytes =
      requests * static_cast<double>(sizeof(Request) + sizeof(RequestRecord) + 8 * sizeof(double)) +
      steps * static_cast<double>(sizeof(StepRecord) + 3 * sizeof(long long));
  if (const int block_tokens = s.workload.prefix_block_tokens(); block_tokens > 0)
    bytes += requests * s.workload.mean_prompt() / block_tokens * sizeof(std::uint64_t);
  const YamlInput workload = root.required("workload");
  try {
    check_memory_need(bytes,
                      fmt::format("a run of {} requests (~{:.3g} output tokens, at least {:.3g} steps)",
                                  s.workload.requests, output_tokens, steps));
  } catch (const InputError& e) {
    (workload.has("requests") ? workload.required("requests") : workload).fail(e.what());
  }
  // What grows with the square of the EP group whatever the workload: the route between every two
  // devices, and each MoE layer's matrix of dispatch copies that a step keeps for its executor.
  const double pairs = static_cast<double>(s.ep) * s.ep;
  const double layers = s.model.moe_layers();
  try {
    check_memory_need(pairs * (Topology::kBytesPerRoute + (layers + 1) * sizeof(long long)),
                      fmt::format("an EP group of {} devices ({:.4g} device pairs: their routes and the "
                                  "dispatch copies of each of {} MoE layers)",
                                  s.ep, pairs, layers));
  } catch (const InputError& e) {
    ep_key(root).fail(e.what());
  }
}

void check_run_work(const YamlInput& root, const Scenario& s) {
  if (s.model.dense() || s.work_limit <= 0) return;
  const double pairs = static_cast<double>(s.ep) * s.ep;
  const double layers = s.model.moe_layers();
  const double steps = least_steps(s);
  const double visits = steps * layers * 2 * pairs;
  if (visits <= s.work_limit) return;
  constexpr double kSecondsPerVisit = 6e-9;  // measured: EP288 and EP576 on GB200 racks, 6-9 ns each
  const double seconds = visits * kSecondsPerVisit;
  const std::string duration =
      seconds < 120 ? fmt::format("{:.0f} s", seconds) : fmt::format("{:.0f} min", seconds / 60);
  ep_key(root).fail(fmt::format(
      "EP{} prices each step's dispatch and combine over {:.3g} device pairs in each of {} MoE layers: at "
      "least {:.3g} steps make {:.3g} pair visits, about {} of work, beyond --work-limit {:.3g}; lower the "
      "EP "
      "size, the requests or their output tokens, or pass --work-limit 0 (no limit) to run it",
      s.ep, pairs, static_cast<int>(layers), steps, visits, duration, s.work_limit));
}

}  // namespace semsim
