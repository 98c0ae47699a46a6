#include "sim/outputs/run_csvs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>

#include "policies/routing_metrics.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/serving_metrics.hpp"

namespace semsim {

void write_requests_csv(const std::string& path, const RunResult& run) {
  // A deployment's requests name their instance after their rank (a rank of that instance).
  const bool deployment = !run.request_instance.empty();
  // workload.sessions: each request's session and turn, last.
  const bool sessions = !run.requests.empty() && run.requests.front().session >= 0;
  std::string text = fmt::format(
      "id,arrival_s,rank,{}input_tokens,output_tokens,ttft_s,tpot_s,e2e_s,completed,cached_tokens{}\n",
      deployment ? "instance," : "", sessions ? ",session,turn" : "");
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const RequestRecord& r = run.requests[i];
    if (!r.arrived()) continue;  // the run stopped before it arrived: nothing to say about it
    const bool done = r.completed();
    const double tpot = time_per_output_token(r);
    text += fmt::format(
        "{},{:.9g},{},{}{},{},{},{},{},{},{}{}\n", r.id, r.arrival, r.rank,
        deployment ? fmt::format("{},", run.request_instance[i]) : "", r.input_tokens, r.output_tokens,
        r.first_token >= 0 ? fmt::format("{:.9g}", r.first_token - r.arrival) : "",
        tpot >= 0 ? fmt::format("{:.9g}", tpot) : "", done ? fmt::format("{:.9g}", r.finish - r.arrival) : "",
        done ? 1 : 0, r.cached_tokens, sessions ? fmt::format(",{},{}", r.session, r.turn) : "");
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
  // A run with an engine appends its host work's columns (StepEngineRecord): the others keep theirs.
  const bool engine = run.engine_host_work;
  // A deployment's steps are each instance's in turn, each row naming its instance.
  const bool deployment = !run.step_instance.empty();
  std::string text = fmt::format(
      "step,{}start_s,duration_s,{},prefill_tokens,decode_tokens,a2a_scale_up_bytes,a2a_scale_out_bytes,lar,"
      "imbalance,{},tp_collective_bytes,comm_exposed_s,comm_hidden_s{}\n",
      deployment ? "instance," : "", phase_columns(Phase::kAttention, Phase::kOther),
      phase_columns(Phase::kReduceScatter, Phase::kPermute),
      engine ? fmt::format(",{},host_s,batch_requests,eager,graph_batch,overlapped",
                           phase_columns(Phase::kEngine, Phase::kEngine))
             : std::string());
  // Formatted in place: a run writes a row per step, hundreds of thousands behind a router.
  auto out = std::back_inserter(text);
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const StepRecord& s = run.steps[i];
    if (deployment)
      fmt::format_to(out, "{},{},", i, run.step_instance[i]);
    else
      fmt::format_to(out, "{},", i);
    fmt::format_to(out, "{:.9g},{:.9g},{:.9g},{},{},{:.9g},{:.9g},{:.6f},{:.6f},{:.9g},{:.9g},{:.9g},{:.9g}",
                   s.start, s.phases.total(), phase_values(s.phases, Phase::kAttention, Phase::kOther),
                   s.prefill_tokens, s.decode_tokens, s.a2a_scale_up_bytes, s.a2a_scale_out_bytes,
                   local_activation_rate(s.local_activations, s.activations), s.imbalance,
                   phase_values(s.phases, Phase::kReduceScatter, Phase::kPermute), s.tp_collective_bytes,
                   s.comm_exposed, s.comm_hidden);
    if (engine)
      fmt::format_to(out, ",{:.9g},{:.9g},{},{},{},{}", s.phases[Phase::kEngine], s.host_seconds,
                     s.batch_requests, s.eager ? 1 : 0, s.graph_batch, s.overlapped ? 1 : 0);
    text += '\n';
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

void write_kv_transfers_csv(const std::string& path, const DisaggregatedResult& run) {
  std::string text = "id,prefill_rank,decode_rank,bytes,start_s,end_s,seconds\n";
  for (const KvTransferRecord& t : run.transfers)
    text += fmt::format("{},{},{},{:.9g},{:.9g},{:.9g},{:.9g}\n", run.decode.requests[t.index].id,
                        t.prefill_rank, t.decode_rank, t.bytes, t.start, t.end, t.end - t.start);
  write_text_file(path, text);
}

}  // namespace semsim
