#include "sim/shared_links.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <xbt/config.hpp>

#include <cmath>
#include <mutex>
#include <stdexcept>

namespace semsim {
namespace sg4 = simgrid::s4u;

struct SharedLinks::Sync {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr changed = sg4::ConditionVariable::create();
};

SharingSettings simgrid_sharing_settings() {
  return {simgrid::config::get_value<double>("network/TCP-gamma"),
          simgrid::config::get_value<double>("maxmin/precision"),
          simgrid::config::get_value<double>("surf/precision")};
}

std::vector<char> crossed_channels(const Topology& platform, DeviceRange from, DeviceRange to) {
  std::vector<char> crossed(platform.links.size() * 2, 0);
  for (int src = from.first; src < from.first + from.count; ++src)
    for (int dst = to.first; dst < to.first + to.count; ++dst)
      for (const RouteHop& hop : platform.route(src, dst)) crossed[channel(hop)] = 1;
  return crossed;
}

bool any_crossed_by_both(const std::vector<char>& a, const std::vector<char>& b) {
  for (std::size_t c = 0; c < a.size(); ++c)
    if (a[c] && b[c]) return true;
  return false;
}

SharedLinks::SharedLinks(const Topology& topology)
    : links_(topology, simgrid_sharing_settings()), sync_(std::make_unique<Sync>()) {}

SharedLinks::~SharedLinks() = default;

int SharedLinks::join() {
  int party = static_cast<int>(parties_.size());
  if (free_parties_.empty()) {
    parties_.emplace_back();
  } else {
    party = free_parties_.back();
    free_parties_.pop_back();
  }
  parties_[party].joined = true;
  return party;
}

void SharedLinks::leave(int party) {
  Party& p = parties_[party];
  if (p.in_flight > 0) throw std::logic_error("shared links: a party leaves with transfers in flight");
  p = Party{};
  free_parties_.push_back(party);
}

double SharedLinks::others_idle_until(int party) const {
  double idle = std::numeric_limits<double>::infinity();
  for (std::size_t q = 0; q < parties_.size(); ++q)
    if (parties_[q].joined && static_cast<int>(q) != party) idle = std::min(idle, parties_[q].idle_until);
  return idle;
}

// SimGrid's actors take turns: between two SimGrid calls an actor has the sharing to itself, so it
// takes the mutex only to wait on the condition variable.
void SharedLinks::start(int party, int id, const TrafficMatrix& bytes, double now, int first_device) {
  sleep_until(party, now);
  advance_to(now);
  links_.start(take_transfer(party, id), bytes, links_.clock(), first_device);
  changed();
}

void SharedLinks::start_pair(int party, int id, int src, int dst, double bytes, double now) {
  sleep_until(party, now);
  advance_to(now);
  links_.start_pair(take_transfer(party, id), src, dst, bytes, links_.clock());
  changed();
}

LinkSharing::End SharedLinks::wait_end(int party, double until) {
  for (;;) {
    Party& p = parties_[party];  // looked up again after each wait: join() may move the parties
    if (!p.ended.empty() && p.ended.front().time <= until) {
      const LinkSharing::End ended = p.ended.front();
      p.ended.pop_front();
      return ended;
    }
    if (p.in_flight == 0 || until <= links_.clock()) return {until, -1, 0.0};
    // No other actor acts on the links before `idle`: what comes first is the party's to do.
    const double next = links_.next_event();
    const double idle = others_idle_until(party);
    if (until < next && until < idle) return {until, -1, 0.0};
    if (next <= until && next < idle) {
      advance_to(next);
      continue;
    }
    const double wake = std::min(next, until);
    if (std::isinf(wake)) throw std::logic_error("shared links: transfers that never end");
    const unsigned long long seen = changes_;
    p.idle_until = until;  // already while taking the mutex: other actors run meanwhile
    {
      std::unique_lock lock(*sync_->mutex);
      if (changes_ == seen) sync_->changed->wait_until(lock, wake);
    }
    parties_[party].idle_until = -std::numeric_limits<double>::infinity();
    // Timed out: the sharing moves on to `wake`. The others waiting need no word: their deadlines
    // come no later than the sharing's next event (each start tells them), so none sleeps past one.
    if (changes_ == seen) advance_to(wake);
  }
}

void SharedLinks::sleep_until(int party, double now) {
  if (sg4::Engine::get_clock() >= now) return;
  parties_[party].idle_until = now;
  sg4::this_actor::sleep_until(now);
  parties_[party].idle_until = -std::numeric_limits<double>::infinity();
}

int SharedLinks::take_transfer(int party, int id) {
  ++parties_[party].in_flight;
  if (free_transfers_.empty()) {
    owner_.emplace_back(party, id);
    return static_cast<int>(owner_.size()) - 1;
  }
  const int transfer = free_transfers_.back();
  free_transfers_.pop_back();
  owner_[transfer] = {party, id};
  return transfer;
}

void SharedLinks::advance_to(double now) {
  if (now < links_.clock()) return;
  for (LinkSharing::End ended = links_.next_end(now); ended.id >= 0; ended = links_.next_end(now)) {
    const auto [party, id] = owner_[ended.id];
    free_transfers_.push_back(ended.id);
    Party& p = parties_[party];
    --p.in_flight;
    p.ended.push_back({ended.time, id, ended.seconds});
    p.idle_until = std::min(p.idle_until, ended.time);  // it acts on its end
  }
}

void SharedLinks::changed() {
  ++changes_;
  sync_->changed->notify_all();
}

}  // namespace semsim
