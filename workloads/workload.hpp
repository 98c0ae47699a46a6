#pragma once
// A scenario's `workload:` section: how many requests, when they arrive, how long they are, and
// where their routing comes from.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/moe_model.hpp"
#include "workloads/arrival_process.hpp"
#include "workloads/length_distribution.hpp"
#include "workloads/request.hpp"
#include "workloads/routing_source.hpp"
#include "workloads/synthetic_routing.hpp"

namespace semsim {

struct WorkloadSpec {
  int requests = 0;
  std::uint64_t seed = 1;
  ArrivalProcess arrival;
  LengthDistribution input_len;
  LengthDistribution output_len;
  SyntheticRoutingParams synthetic;  // routing.source: synthetic (the only source so far)

  static WorkloadSpec from_yaml(const YamlInput& in, const std::string& base_dir);
};

// The request stream, ordered by arrival; identical for identical spec and seed.
std::vector<Request> generate_requests(const WorkloadSpec& spec);

std::unique_ptr<RoutingSource> make_routing_source(const WorkloadSpec& spec, const MoeModel& model);

}  // namespace semsim
