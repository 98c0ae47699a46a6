#include "sim/instance_router.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <cmath>
#include <limits>
#include <mutex>

#include "policies/policy_registry.hpp"

namespace semsim {
namespace sg4 = simgrid::s4u;

struct InstanceRouter::Sync {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr changed = sg4::ConditionVariable::create();  // a send, a finish, the end
};

class InstanceRouter::Feed final : public RequestFeed {
 public:
  Feed(InstanceRouter& router, int instance) : router_(router), instance_(instance) {}

  void take_routed(std::vector<RoutedRequest>& routed) override {
    routed.insert(routed.end(), inbox_.begin(), inbox_.end());
    inbox_.clear();
  }

  bool wait_for_routed(double until) override {
    std::unique_lock lock(*router_.sync_->mutex);
    while (inbox_.empty()) {
      if (router_.done_) return false;
      if (std::isinf(until))
        router_.sync_->changed->wait(lock);
      else if (router_.sync_->changed->wait_until(lock, until) == std::cv_status::timeout)
        return !inbox_.empty();
    }
    return true;
  }

  void request_finished(int, double time) override { router_.finished(instance_, time); }

  void send(int index, double arrival) { inbox_.push_back({index, arrival}); }

 private:
  InstanceRouter& router_;
  int instance_;
  std::vector<RoutedRequest> inbox_;
};

InstanceRouter::InstanceRouter(const Scenario& scenario, const std::vector<Request>& requests,
                               InstanceAffinity affinity)
    : scenario_(scenario),
      requests_(requests),
      policy_(router_of(scenario.deployment->router)),
      affinity_(std::move(affinity)),
      sync_(std::make_unique<Sync>()),
      loads_(scenario.deployment->instances),
      instance_of_(requests.size(), -1) {
  for (int i = 0; i < scenario.deployment->instances; ++i) feeds_.push_back(std::make_unique<Feed>(*this, i));
}

InstanceRouter::~InstanceRouter() = default;

RequestFeed& InstanceRouter::feed(int instance) {
  return *feeds_.at(instance);
}

void InstanceRouter::start(sg4::Host* host) {
  sg4::Actor::create("router", host, [this] { run(); });
}

void InstanceRouter::run() {
  const double limit = scenario_.serving.time_limit > 0 ? scenario_.serving.time_limit
                                                        : std::numeric_limits<double>::infinity();
  const std::size_t concurrency = static_cast<std::size_t>(scenario_.workload.concurrency);
  for (std::size_t next = 0; next < requests_.size(); ++next) {
    double arrival = requests_[next].arrival;
    if (concurrency > 0 && next >= concurrency) {  // a closed loop's next request waits for a finish
      std::unique_lock lock(*sync_->mutex);
      while (finish_times_.empty())
        if (std::isinf(limit))
          sync_->changed->wait(lock);
        else if (sync_->changed->wait_until(lock, limit) == std::cv_status::timeout)
          break;
      if (finish_times_.empty()) break;
      arrival = finish_times_.front();
      finish_times_.erase(finish_times_.begin());
    }
    if (arrival >= limit) break;
    if (arrival > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(arrival);
    route(static_cast<int>(next), arrival);
  }
  done_ = true;
  sync_->changed->notify_all();
}

void InstanceRouter::route(int index, double arrival) {
  affinity_.of(requests_[index], loads_);
  const int instance = policy_.route({routed_++, loads_}, scenario_.deployment->router);
  ++loads_[instance].in_flight;
  instance_of_[index] = instance;
  feeds_[instance]->send(index, arrival);
  sync_->changed->notify_all();
}

void InstanceRouter::finished(int instance, double time) {
  --loads_[instance].in_flight;
  if (scenario_.workload.concurrency > 0) finish_times_.push_back(time);
  sync_->changed->notify_all();
}

}  // namespace semsim
