#include "sim/scenario_disaggregation.hpp"

#include <fmt/format.h>

namespace semsim {
namespace {

// A pool's `set:` names keys of the sections a pool may have of its own.
void check_pool_keys(const YamlInput& set) {
  for (const std::string& key : set.keys()) {
    const std::string section = key.substr(0, key.find('.'));
    if (key == "serving.pool")
      set.required(key).fail("a pool's role is its own: disaggregation sets serving.pool");
    if (section != "parallelism" && section != "serving" && section != "engine" && section != "policies" &&
        section != "profile")
      set.required(key).fail(fmt::format(
          "a pool sets only parallelism, serving, engine, policies and profile keys; '{}' is shared by "
          "both pools (the model, cluster, workload, precision, network and calibration)",
          key));
  }
}

std::shared_ptr<const Scenario> load_pool(const YamlInput& in, std::vector<ScenarioOverride> overrides,
                                          const PoolLoader& load, ServingPool role) {
  in.expect_map({"nodes", "set"});
  const YamlInput nodes = in.required("nodes");
  overrides.push_back({"cluster.nodes", nodes.node(), nodes.location()});
  overrides.push_back({"serving.pool", YAML::Node(serving_pool_name(role)), in.location()});
  if (const auto set = in.optional("set")) {
    set->expect_map(set->keys());  // any key path: this only rejects duplicates
    check_pool_keys(*set);
    for (const std::string& key : set->keys())
      overrides.push_back({key, set->required(key).node(), set->required(key).location()});
  }
  std::shared_ptr<Scenario> pool;
  try {
    pool = std::make_shared<Scenario>(load(overrides));
  } catch (const InputError& e) {
    // A value the pool sets is in the scenario file, at its origin: that location comes first.
    if (!e.origin().empty()) throw InputError(e.origin() + ": " + e.what(), e.key_path(), e.origin());
    throw;
  }
  return pool;
}

}  // namespace

std::shared_ptr<const Disaggregation> read_disaggregation(const YamlInput& in, const Scenario& whole,
                                                          const std::vector<ScenarioOverride>& overrides,
                                                          const PoolLoader& load) {
  in.expect_map({"prefill", "decode", "kv_transfer", "decode_kv"});
  if (whole.serving.pool != ServingPool::kColocated)
    in.fail("a disaggregated scenario gives each pool its role: leave serving.pool out");
  auto d = std::make_shared<Disaggregation>();
  if (const auto mode = in.optional("kv_transfer")) d->kv_transfer = read_choice(*mode, kKvTransferModeNames);
  if (const auto kv = in.optional("decode_kv")) d->decode_kv = read_choice(*kv, kDecodeKvNames);
  d->prefill = load_pool(in.required("prefill"), overrides, load, ServingPool::kPrefill);
  d->decode = load_pool(in.required("decode"), overrides, load, ServingPool::kDecode);
  const int nodes = d->prefill->cluster.nodes + d->decode->cluster.nodes;
  if (nodes > whole.cluster.nodes)
    in.fail(fmt::format("the pools take {} + {} nodes, more than the {} of cluster '{}'",
                        d->prefill->cluster.nodes, d->decode->cluster.nodes, whole.cluster.nodes,
                        whole.cluster.name));
  return d;
}

}  // namespace semsim
