// The `flow` fidelity: each collective is one SimGrid parallel task (ptask_L07) whose bytes matrix
// is the traffic matrix, so SimGrid shares every link direction max-min among the pairs crossing it.
#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include <stdexcept>
#include <utility>

#include "sim/network.hpp"
#include "sim/platform.hpp"

namespace semsim {
namespace sg4 = simgrid::s4u;
namespace {

class FlowNetwork final : public CollectiveNetwork {
 public:
  FlowNetwork(const Topology& topology, BandwidthFactors factors)
      : hosts_(platform_hosts(topology)), no_flops_(hosts_.size(), 0.0), factors_(std::move(factors)) {}

  double run(const TrafficMatrix& traffic, StepClock& clock) override {
    const int devices = static_cast<int>(hosts_.size());
    if (traffic.devices != devices)
      throw std::invalid_argument(
          fmt::format("traffic matrix of {} devices on a platform of {}", traffic.devices, devices));
    bytes_ = factors_.apply(traffic).bytes;
    bool any_traffic = false;
    for (int device = 0; device < devices; ++device) bytes_[device * devices + device] = 0;
    for (double& bytes : bytes_) {
      if (!(bytes > 0)) bytes = 0;
      any_traffic = any_traffic || bytes > 0;
    }
    if (!any_traffic) return 0;

    clock.sync();  // the collective starts when the step's analytic work is done
    const double start = sg4::Engine::get_clock();
    const sg4::ExecPtr collective =
        sg4::Exec::init()->set_hosts(hosts_)->set_flops_amounts(no_flops_)->set_bytes_amounts(bytes_);
    collective->start();
    collective->wait();
    return sg4::Engine::get_clock() - start;
  }

 private:
  std::vector<sg4::Host*> hosts_;
  std::vector<double> no_flops_;
  std::vector<double> bytes_;  // reused between calls
  BandwidthFactors factors_;
};

}  // namespace

std::unique_ptr<CollectiveNetwork> make_flow_network(const Topology& topology, BandwidthFactors factors) {
  return std::make_unique<FlowNetwork>(topology, std::move(factors));
}

}  // namespace semsim
