#pragma once
// The SimGrid side of a Topology: engine settings and the platform (hosts, links, routes) that the
// `flow` network fidelity runs its parallel tasks on.
#include <simgrid/s4u/Host.hpp>

#include <vector>

#include "models/topology.hpp"

namespace semsim {

// Settings every semsim simulation uses; call right after constructing the Engine, before
// build_platform. Selects ptask_L07 (one parallel task per collective keeps SimGrid's linear
// activity scans cheap), disables cross-traffic, and silences SimGrid's logs below critical.
void configure_engine();

// Creates and seals one full zone holding a host per device, a split-duplex link per topology
// link, and the topology's route for every ordered pair of devices. Returns the hosts by device.
std::vector<simgrid::s4u::Host*> build_platform(const Topology& topology);

// The hosts build_platform created for `topology`, by device; throws std::logic_error if the
// platform has not been built. With a `first_device`, `topology` is a part of the platform's (a
// disaggregated pool's, of the same node size) whose device d is the platform's first_device + d.
std::vector<simgrid::s4u::Host*> platform_hosts(const Topology& topology, int first_device = 0);

}  // namespace semsim
