#pragma once
// Upper bounds on the local activation rate (LAR: routed activations served on the device that holds
// the token ÷ all routed activations) that ANY placement with exactly N/D experts per device and no
// replicas, combined with ANY token assignment, reaches on a given routing data set:
// - TP style: each (token occurrence, layer) on any device, at most balance × mean tokens per device
//   per layer;
// - DP style: each request on one device for all its tokens and layers, at most balance × mean
//   request tokens per device.
//
// Proof sketch. Fix a layer. An "item" i is a multiset of experts with multiplicities h_i[e] that
// must sit on one device: a TP token (h = 1 on its k experts) or a DP request (h = how many of its
// tokens route to e). Put u_ab = 1 when experts a and b share a device. Any placement satisfies
//   (1) Σ_b u_ab = N/D − 1 for every a,   (2) u_ab + u_ac − u_bc <= 1 (co-location is transitive).
// Let B be the experts on the item's device, W_i = Σ_{e∈B} h[e] its local activations, g_i = max h,
// q_i = Σ_{a<b} h[a]h[b]·u_ab. Then q_i >= Σ_{a<b∈B} h[a]h[b] = (W² − Σ_{e∈B} h[e]²)/2 >= (W² − g·W)/2
// =: ψ(W), i.e. W <= φ(q) = (g + √(g² + 8q))/2 (for a TP token: m experts local need m(m−1)/2
// co-located pairs). φ is concave and W is an integer, so every secant of φ through (ψ(w), w) and
// (ψ(w+1), w+1), w >= g integer, bounds W from above: W <= w + (q − ψ(w))/(ψ(w+1) − ψ(w)). Also
// W_i <= the sum of the N/D largest h_i[e]. Balance: expert e's local activations come from tokens on
// its device, at most balance × tokens / D of them, so Σ_i W_i <= Σ_e min(load_e, balance × tokens/D).
// Every placement and assignment gives a point (u, q, W) satisfying all of these, so the linear
// programme "maximise Σ_i W_i over u ∈ [0,1]" over (1), the secants, the caps and any subset of (2)
// is a valid upper bound; CLP solves it, triangle inequalities (2) and secants are added where the
// solution violates them. DP: a DP solution is a TP solution with the same per-layer token loads,
// so each layer's DP bound is also at most its TP bound; the bound takes the smaller, and relaxes
// the coupling of a request's device across layers.
#include <vector>

#include "workloads/routing_trace.hpp"

namespace semsim {

struct LarUpperBound {
  double tp = 0, dp = 0;                   // bounds on LAR over all layers
  std::vector<double> tp_layer, dp_layer;  // per MoE layer
};

// Bounds for the requests of `trace` with use[r] true (empty: all), on `devices` devices (dividing
// the expert count) with load tolerance `balance` (>= 1). Deterministic.
LarUpperBound lar_upper_bound(const RoutingTrace& trace, const std::vector<bool>& use, int devices,
                              double balance);

}  // namespace semsim
