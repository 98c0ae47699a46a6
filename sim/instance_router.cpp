#include "sim/instance_router.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <algorithm>
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

  void request_finished(double time) override { router_.finished(instance_, time); }

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
  if (policy_.affinity == AffinityInput::kSentPrefixes)
    sent_prefixes_.assign(scenario.deployment->instances,
                          PrefixCache(scenario.workload.prefix_block_tokens()));
}

InstanceRouter::~InstanceRouter() = default;

RequestFeed& InstanceRouter::feed(int instance) {
  return *feeds_.at(instance);
}

void InstanceRouter::start(sg4::Host* host) {
  sg4::Actor::create("router", host, [this] { run(); });
}

// Sends the requests the workload times: every one in an open loop, the first workload.concurrency
// in a closed loop (finished() sends the others, each the moment one finishes).
void InstanceRouter::run() {
  const double limit = scenario_.serving.time_limit > 0 ? scenario_.serving.time_limit
                                                        : std::numeric_limits<double>::infinity();
  const std::size_t concurrency = static_cast<std::size_t>(scenario_.workload.concurrency);
  const std::size_t timed = concurrency > 0 ? std::min(concurrency, requests_.size()) : requests_.size();
  for (; next_ < timed; ++next_) {
    const double arrival = requests_[next_].arrival;
    if (arrival >= limit) break;
    // The loops hear of the requests sent at one instant together: a loop woken by the first would
    // otherwise form its batch without the others (a notification lets other actors run).
    if (arrival > sg4::Engine::get_clock()) {
      sync_->changed->notify_all();
      sg4::this_actor::sleep_until(arrival);
    }
    route(static_cast<int>(next_), arrival);
  }
  if (next_ < timed || next_ == requests_.size())
    finish_sending();
  else
    sync_->changed->notify_all();
}

void InstanceRouter::finish_sending() {
  done_ = true;
  sync_->changed->notify_all();
}

void InstanceRouter::route(int index, double arrival) {
  affinity_.of(requests_[index], loads_);
  if (!sent_prefixes_.empty()) sent_prefix_shares(requests_[index]);
  const int instance = policy_.route({routed_++, loads_}, scenario_.deployment->router);
  if (!sent_prefixes_.empty()) remember_prefix(instance, requests_[index]);
  ++loads_[instance].in_flight;
  instance_of_[index] = instance;
  feeds_[instance]->send(index, arrival);
}

void InstanceRouter::sent_prefix_shares(const Request& request) {
  for (std::size_t i = 0; i < sent_prefixes_.size(); ++i)
    loads_[i].affinity =
        request.input_tokens > 0
            ? static_cast<double>(cached_prefix_tokens(sent_prefixes_[i], request)) / request.input_tokens
            : 0.0;
}

void InstanceRouter::remember_prefix(int instance, const Request& request) {
  PrefixCache& sent = sent_prefixes_[instance];
  const std::span<const std::uint64_t> blocks = full_prefix_blocks(request, sent.block_tokens());
  PrefixCache::Path path;
  sent.hold(blocks, sent.match(blocks), path);
  sent.insert(blocks, path);
  sent.release(path);
}

// In a closed loop the finishing instance's actor sends the next request itself, at once: the
// router's decision is a function of its state, whichever actor computes it, and a request sent so
// reaches its instance before that instance forms its next batch, as in a run of one server.
void InstanceRouter::finished(int instance, double time) {
  --loads_[instance].in_flight;
  if (scenario_.workload.concurrency == 0 || done_) return;
  if (scenario_.serving.time_limit > 0 && time >= scenario_.serving.time_limit) return;
  route(static_cast<int>(next_++), time);
  if (next_ == requests_.size())
    finish_sending();
  else
    sync_->changed->notify_all();
}

}  // namespace semsim
