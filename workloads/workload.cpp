#include "workloads/workload.hpp"

#include <random>

#include "workloads/counter_rng.hpp"

namespace semsim {

WorkloadSpec WorkloadSpec::from_yaml(const YamlInput& in, const std::string& base_dir) {
  in.expect_map({"requests", "seed", "arrival", "input_len", "output_len", "routing"});
  WorkloadSpec w;
  w.requests = static_cast<int>(in.required("requests").as_int_in(1, 100'000'000));
  w.seed = static_cast<std::uint64_t>(in.get_int_in("seed", 1, 0, (1LL << 62)));
  w.arrival = ArrivalProcess::from_yaml(in.required("arrival"), base_dir);
  w.input_len = LengthDistribution::from_yaml(in.required("input_len"), base_dir);
  w.output_len = LengthDistribution::from_yaml(in.required("output_len"), base_dir);
  if (const auto routing = in.optional("routing")) {
    routing->required("source").as_choice({"synthetic"});
    w.synthetic = SyntheticRoutingParams::from_yaml(*routing);
  }
  return w;
}

std::vector<Request> generate_requests(const WorkloadSpec& spec) {
  // Separate streams so that changing, say, the output lengths leaves arrivals untouched.
  std::mt19937_64 arrival_rng(hash_keys(spec.seed, 1));
  std::mt19937_64 input_rng(hash_keys(spec.seed, 2));
  std::mt19937_64 output_rng(hash_keys(spec.seed, 3));
  std::mt19937_64 topic_rng(hash_keys(spec.seed, 4));
  const std::vector<double> arrivals = spec.arrival.arrival_times(spec.requests, arrival_rng);
  std::uniform_int_distribution<int> topic(0, spec.synthetic.topics - 1);
  std::vector<Request> requests(arrivals.size());
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    requests[i].id = static_cast<int>(i);
    requests[i].arrival = arrivals[i];
    requests[i].input_tokens = spec.input_len.draw(input_rng);
    requests[i].output_tokens = spec.output_len.draw(output_rng);
    requests[i].topic = topic(topic_rng);
  }
  return requests;
}

std::unique_ptr<RoutingSource> make_routing_source(const WorkloadSpec& spec, const MoeModel& model) {
  return std::make_unique<SyntheticRouting>(spec.synthetic, model.moe_layers(), model.routed_experts, model.top_k,
                                            hash_keys(spec.seed, 5));
}

}  // namespace semsim
