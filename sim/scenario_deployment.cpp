#include "sim/scenario_deployment.hpp"

#include <fmt/format.h>

namespace semsim {
namespace {

// An instance's `set:` names keys of its own: its routing profile and policies (the placement its
// experts follow). The rest of the serving configuration is every instance's.
void check_instance_keys(const YamlInput& set) {
  for (const std::string& key : set.keys()) {
    const std::string section = key.substr(0, key.find('.'));
    if (section != "policies" && section != "profile")
      set.required(key).fail(fmt::format(
          "an instance sets only policies and profile keys; '{}' is every instance's (N copies of one "
          "serving configuration)",
          key));
  }
}

std::shared_ptr<const Scenario> load_instance(const YamlInput& in, const std::optional<YamlInput>& set,
                                              std::vector<ScenarioOverride> overrides, int nodes,
                                              const InstanceLoader& load,
                                              const std::optional<YamlInput>& disaggregation) {
  overrides.push_back({"cluster.nodes", YAML::Node(nodes), in.location()});
  if (set) {
    set->expect_map(set->keys());  // any key path: this only rejects duplicates
    check_instance_keys(*set);
    for (const std::string& key : set->keys())
      overrides.push_back({key, set->required(key).node(), set->required(key).location()});
  }
  try {
    auto instance = std::make_shared<Scenario>(load(overrides));
    if (disaggregation)
      instance->disaggregation = read_disaggregation(*disaggregation, *instance, overrides, load);
    return instance;
  } catch (const InputError& e) {
    // A value the instance sets is in the scenario file, at its origin: that location comes first.
    if (!e.origin().empty()) throw InputError(e.origin() + ": " + e.what(), e.key_path(), e.origin());
    throw;
  }
}

}  // namespace

std::shared_ptr<const Deployment> read_deployment(const YamlInput& in, const Scenario& whole,
                                                  const std::vector<ScenarioOverride>& overrides,
                                                  const InstanceLoader& load,
                                                  const std::optional<YamlInput>& disaggregation) {
  in.expect_map({"instances", "router", "set"});
  auto d = std::make_shared<Deployment>();
  const YamlInput instances = in.required("instances");
  d->instances = static_cast<int>(instances.as_int_in(1, 1 << 12));
  if (const auto router = in.optional("router")) {
    d->router = read_policy_choice(*router, PolicyKind::kRouter);
    const auto slack = d->router.params.find("load_slack");
    if (slack != d->router.params.end() && !(slack->second >= 0))
      router->required("load_slack").fail("load_slack must be >= 0 (the least loaded instance must qualify)");
    // Its attention mode here; the tables it reads on each instance's plan (build_deployment_run).
    check_requirements(policy_entry(PolicyKind::kRouter, d->router.name),
                       {whole.attention, true, true, whole.serving.prefix_cache}, *router);
  } else {
    d->router = default_policy_choice(PolicyKind::kRouter, policy_kind(PolicyKind::kRouter).default_name);
  }
  // Each instance's EP group on whole nodes of its own; a disaggregated instance's two pools.
  const int per_node = whole.cluster.gpus_per_node;
  const int nodes = whole.disaggregation
                        ? whole.disaggregation->prefill_nodes() + whole.disaggregation->decode->cluster.nodes
                        : (whole.ep + per_node - 1) / per_node;
  if (d->instances * nodes > whole.cluster.nodes)
    instances.fail(fmt::format(
        "{} instances of {} node{} each ({}) take {} nodes, more than the {} of cluster '{}'", d->instances,
        nodes, nodes == 1 ? "" : "s",
        whole.disaggregation ? "a prefill and a decode pool"
                             : fmt::format("parallelism's {} devices on nodes of {}", whole.ep, per_node),
        d->instances * nodes, whole.cluster.nodes, whole.cluster.name));
  std::vector<YamlInput> sets;
  if (const auto set = in.optional("set")) {
    if (!set->is_sequence()) set->fail("expected a list of one map of keys per instance");
    sets = set->items();
    if (static_cast<int>(sets.size()) != d->instances)
      set->fail(
          fmt::format("{} maps of keys for {} instances: give one per instance", sets.size(), d->instances));
  }
  for (int i = 0; i < d->instances; ++i)
    d->instance.push_back(load_instance(in, sets.empty() ? std::nullopt : std::optional<YamlInput>(sets[i]),
                                        overrides, nodes, load, disaggregation));
  return d;
}

}  // namespace semsim
