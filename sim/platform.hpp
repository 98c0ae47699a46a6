#pragma once
// The SimGrid side of a Topology: engine settings and the platform (hosts, links, routes) that the
// `flow` network fidelity runs its parallel tasks on.
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <vector>

#include "models/sanitizers.hpp"
#include "models/topology.hpp"

namespace semsim {

// Settings every semsim simulation uses; call right after constructing the Engine, before
// build_platform. Selects ptask_L07 (one parallel task per collective keeps SimGrid's linear
// activity scans cheap), disables cross-traffic, and silences SimGrid's logs below critical.
void configure_engine();

// The SimGrid engine every simulation (and every test of one) runs in, configured as above.
class SimulationEngine {
 public:
  SimulationEngine() : engine_(&argc_, argv_) { configure_engine(); }
  simgrid::s4u::Engine& get() { return engine_; }
  void run() { engine_.run(); }

 private:
  char name_[7] = "semsim";
  // AddressSanitizer cannot follow the stack switches of SimGrid's own contexts (Debian's SimGrid
  // does not announce them to it): under it, actors run as threads, a choice made as the engine
  // starts (quietly: its log is off before the option is read).
  char quiet_[27] = "--log=root.thresh:critical";
  char thread_contexts_[30] = "--cfg=contexts/factory:thread";
  char* argv_[4] = {name_, quiet_, thread_contexts_, nullptr};
  int argc_ = kAddressSanitizer ? 3 : 1;
  simgrid::s4u::Engine engine_;
};

// Creates and seals one full zone holding a host per device, a split-duplex link per topology
// link, and the topology's route for every ordered pair of devices. Returns the hosts by device.
std::vector<simgrid::s4u::Host*> build_platform(const Topology& topology);

// The hosts build_platform created for `topology`, by device; throws std::logic_error if the
// platform has not been built. With a `first_device`, `topology` is a part of the platform's (a
// disaggregated pool's, of the same node size) whose device d is the platform's first_device + d.
std::vector<simgrid::s4u::Host*> platform_hosts(const Topology& topology, int first_device = 0);

}  // namespace semsim
