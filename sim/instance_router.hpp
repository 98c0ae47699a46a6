#pragma once
// A deployment's router (scenario `deployment:`): one SimGrid actor that sends each request, at its
// arrival, to the instance its router policy picks from the instances' requests in flight then (and
// the request's affinity to each, sim/instance_affinity.hpp). Each instance's serving loop takes
// its requests through its RequestFeed and tells it of each finish; in a closed loop
// (workload.concurrency) each finish sends the next request.
#include <memory>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "policies/policy_params.hpp"
#include "policies/routing_to_instances.hpp"
#include "sim/instance_affinity.hpp"
#include "sim/prefix_cache.hpp"
#include "sim/request_feed.hpp"
#include "sim/scenario.hpp"
#include "workloads/request.hpp"

namespace semsim {

class InstanceRouter {
 public:
  // Call from the engine's set-up, before its actors run.
  InstanceRouter(const Scenario& scenario, const std::vector<Request>& requests, InstanceAffinity affinity);
  ~InstanceRouter();

  RequestFeed& feed(int instance);
  // Starts the router's actor on `host`.
  void start(simgrid::s4u::Host* host);

  // Per request: the instance it was sent to (-1: never sent, the run stopped first).
  const std::vector<int>& instance_of() const { return instance_of_; }

 private:
  class Feed;
  struct Sync;  // SimGrid's mutex and condition variable
  void run();
  void route(int index, double arrival);
  // kSentPrefixes: each instance's affinity, the share of the request's prompt that the prompts sent
  // there before start with; and the record of the request sent to `instance`.
  void sent_prefix_shares(const Request& request);
  void remember_prefix(int instance, const Request& request);
  void finished(int instance, double time);
  void finish_sending();  // the last request is sent: loops waiting for one stop waiting

  const Scenario& scenario_;
  const std::vector<Request>& requests_;
  RouterPolicy policy_;
  InstanceAffinity affinity_;
  std::unique_ptr<Sync> sync_;
  std::vector<std::unique_ptr<Feed>> feeds_;
  std::vector<InstanceLoad> loads_;
  std::vector<PrefixCache> sent_prefixes_;  // per instance, with kSentPrefixes: never evicted
  std::vector<int> instance_of_;
  std::size_t next_ = 0;  // the next request to send
  long long routed_ = 0;
  bool done_ = false;  // the last request is sent (or the time limit passed)
};

}  // namespace semsim
