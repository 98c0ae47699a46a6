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
// q_i = Σ_{a<b} h[a]h[b]·u_ab. Then q_i >= Σ_{a<b∈B} h[a]h[b] = (W² − Σ_{e∈B} h[e]²)/2 >= (W² − g·W)/2,
// i.e. W_i <= φ_i(q_i) = (g + √(g² + 8q))/2 (a TP token with m local experts needs m(m−1)/2
// co-located pairs). W is an integer and φ concave with φ(ψ(w)) = w for ψ(w) = (w² − g·w)/2, so the
// interpolation r_i of φ at the points (ψ(w), w), w >= g integer, is concave and still bounds W;
// also W_i <= c_i, the sum of the N/D largest h_i[e]. So every placement and assignment reach at
// most F(u) = Σ_i min(c_i, r_i(q_i(u))) at their own u, and the bound is
// max F over the polytope U given by (1), 0 <= u <= 1 and the triangle inequalities (2) found
// violated (any subset keeps U a relaxation). F is concave, so for ANY u and s* = argmax_U F:
// F(s*) <= F(u) + ∇F(u)·(s* − u) <= F(u) + max_{s∈U} ∇F(u)·s − ∇F(u)·u, a linear programme over U
// (CLP). Frank-Wolfe steps move u towards the maximum; the bound is the least such value met.
// Balance: expert e's local activations come from tokens on its device, at most balance × tokens / D
// of them, so Σ_i W_i <= Σ_e min(load_e, balance × tokens / D) (TP and DP each at their own balance).
// DP: a DP solution is a TP solution with the same per-layer token loads, so each layer's DP bound
// is also at most the TP relaxation at DP's balance; the bound takes the smaller, and relaxes the
// coupling of a request's device across layers.
// Where it is loose: F is concave, so a mixture of placements (fractional u) scores above each of
// them; r counts all co-located pairs, not only the largest block's; DP requests pick their best
// device per layer. Exact when an optimal placement's u is where Frank-Wolfe ends (see the tests).
#include <vector>

#include "models/progress.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

struct LarUpperBound {
  double tp = 0, dp = 0;                   // bounds on LAR over all layers
  std::vector<double> tp_layer, dp_layer;  // per MoE layer
};

struct LarBoundOptions {
  double tp_balance = 1;           // TP: tokens per device per layer within this x mean (equal slices: ~1)
  double dp_balance = 1.1;         // DP: request tokens per device within this x mean
  int iterations = 100;            // Frank-Wolfe steps per layer, at most
  int triangle_rounds = 2;         // triangle separation rounds per TP step (0: none)
  int threads = 1;                 // layers bounded in parallel; the result does not depend on it
  ProgressCallback progress = {};  // told each MoE layer bounded
};

// Bounds for the requests of `trace` with use[r] true (empty: all), on `devices` devices (dividing
// the expert count). Deterministic. Cost on DeepSeek-V2-Lite's held-out 80% (75k tokens x 26
// layers) on 2 threads: EP4 ~105 s with 2 triangle rounds and ~20 s with 0 (TP bound 0.700 against
// 0.753), EP8 ~15 s with 2 rounds (0.572 against 0.604); on DP items triangles changed the bound by
// < 0.1%, so the DP items never use them.
LarUpperBound lar_upper_bound(const RoutingTrace& trace, const std::vector<bool>& use, int devices,
                              const LarBoundOptions& options);

}  // namespace semsim
