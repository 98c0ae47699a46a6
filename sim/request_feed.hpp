#pragma once
// What a serving loop behind a router (a deployment's instance, sim/instance_router.hpp) takes its
// requests from instead of the workload's arrivals, and tells of each finish: the router decides
// from the instances' requests in flight at each arrival.
#include <vector>

namespace semsim {

struct RoutedRequest {
  int index = 0;       // into the request list
  double arrival = 0;  // when it left the client (a closed loop's: a finish elsewhere)
};

class RequestFeed {
 public:
  virtual ~RequestFeed() = default;
  // Appends the requests routed to this instance since the last call, in arrival order.
  virtual void take_routed(std::vector<RoutedRequest>& routed) = 0;
  // Blocks the loop (simulated time passes) until a request is routed here or `until`; false when
  // none is.
  virtual bool wait_for_routed(double until) = 0;
  // One of its requests finished at `time` (the loop's clock synchronised).
  virtual void request_finished(double time) = 0;
};

}  // namespace semsim
