#include "sim/outputs/disaggregated_summary.hpp"

#include <algorithm>

#include "sim/outputs/summary_json.hpp"

namespace semsim {

nlohmann::ordered_json disaggregated_summary_json(const Scenario& scenario, const DisaggregatedPlan& plan,
                                                  const DisaggregatedResult& run, const GoodputSlos& slos) {
  const Disaggregation& pools = *scenario.disaggregation;
  nlohmann::ordered_json j =
      summary_json(*pools.decode, plan.decode.memory, summarize(end_to_end(run), slos));
  j["scenario"] = scenario.name;
  j["cluster"] = scenario.cluster.name;
  j["pool"] = "disaggregated";
  // The nodes in use: each pool's serving group over its devices per node (idle nodes not counted).
  const double nodes = ep_nodes(*pools.prefill) + ep_nodes(*pools.decode);
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
  d["kv_transfer"] = name_of(kKvTransferModeNames, pools.kv_transfer);
  d["decode_kv"] = name_of(kDecodeKvNames, pools.decode_kv);
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

}  // namespace semsim
