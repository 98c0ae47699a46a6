#include "policies/ilp_placement.hpp"

#include <Cbc_C_Interface.h>
#include <fmt/format.h>
#include <CoinFinite.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

#include "models/input_error.hpp"
#include "policies/coact_placement.hpp"
#include "policies/partition_placement.hpp"

namespace semsim {
namespace {

struct Entry {
  int token = 0;  // index among the modelled tokens
  int expert = 0;
  double count = 0;
};

struct LayerSolution {
  std::vector<int> device_of_expert;
  std::vector<int> device_of_token;  // per modelled token
  double objective = 0, best_bound = 0;
  bool optimal = false;
};

// Column-major (CSC) constraint matrix assembled row by row.
class Model {
 public:
  // A binary column, or a continuous one in [0, upper].
  int add_column(double objective, double upper = 1, bool integer = true) {
    objective_.push_back(objective);
    upper_bound_.push_back(upper);
    integer_.push_back(integer);
    return static_cast<int>(objective_.size()) - 1;
  }
  void add_row(const std::vector<std::pair<int, double>>& terms, double lower, double upper) {
    for (const auto& [column, value] : terms)
      triplets_.push_back({column, static_cast<int>(lower_.size()), value});
    lower_.push_back(lower);
    upper_.push_back(upper);
  }
  void load(Cbc_Model* cbc) const {
    std::vector<Triplet> sorted = triplets_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Triplet& a, const Triplet& b) { return a.column < b.column; });
    const int columns = static_cast<int>(objective_.size());
    std::vector<CoinBigIndex> start(columns + 1, 0);
    std::vector<int> index;
    std::vector<double> value;
    for (const Triplet& t : sorted) {
      ++start[t.column + 1];
      index.push_back(t.row);
      value.push_back(t.value);
    }
    std::partial_sum(start.begin(), start.end(), start.begin());
    const std::vector<double> column_lower(columns, 0.0);
    Cbc_loadProblem(cbc, columns, static_cast<int>(lower_.size()), start.data(), index.data(), value.data(),
                    column_lower.data(), upper_bound_.data(), objective_.data(), lower_.data(),
                    upper_.data());
    for (int c = 0; c < columns; ++c)
      if (integer_[c]) Cbc_setInteger(cbc, c);
  }

 private:
  struct Triplet {
    int column, row;
    double value;
  };
  std::vector<double> objective_, upper_bound_, lower_, upper_;
  std::vector<bool> integer_;
  std::vector<Triplet> triplets_;
};

// A feasible start by greedy co-clustering, so that a time-limited search starts from a placement
// that already co-locates tokens with their experts (from a contiguous one, CBC rarely improved in
// its time on real profiles). Tokens most frequent first: each goes to the device with token room
// where it would be served most locally, counting the experts already there plus the most used of
// its still unplaced experts that fit; those experts are then placed there. Experts left unplaced
// fill the remaining slots in id order.
std::vector<double> greedy_start(int experts, int devices, const std::vector<double>& occurrences,
                                 const std::vector<Entry>& entries, double capacity) {
  const int per_device = experts / devices, tokens = static_cast<int>(occurrences.size());
  std::vector<std::vector<std::pair<double, int>>> uses(
      tokens);  // per token: (count, expert), most used first
  for (const Entry& e : entries) uses[e.token].push_back({e.count, e.expert});
  for (auto& u : uses)
    std::stable_sort(u.begin(), u.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<int> device_of_expert(experts, -1), room(devices, per_device), device_of_token(tokens);
  std::vector<double> load(devices, 0.0);
  for (int j = 0; j < tokens; ++j) {  // modelled tokens come most frequent first
    int best = -1;
    double best_local = -1;
    for (int d = 0; d < devices; ++d) {
      if (load[d] + occurrences[j] > capacity) continue;
      double local = 0;
      int claimed = 0;
      for (const auto& [count, expert] : uses[j])
        if (device_of_expert[expert] == d || (device_of_expert[expert] < 0 && claimed++ < room[d]))
          local += count;
      if (local > best_local) best = d, best_local = local;
    }
    if (best < 0) best = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[best] += occurrences[j];
    device_of_token[j] = best;
    for (const auto& [count, expert] : uses[j])
      if (device_of_expert[expert] < 0 && room[best] > 0) {
        device_of_expert[expert] = best;
        --room[best];
      }
  }
  for (int k = 0, d = 0; k < experts; ++k) {
    if (device_of_expert[k] >= 0) continue;
    while (room[d] == 0) ++d;
    device_of_expert[k] = d;
    --room[d];
  }
  // The model fixes expert 0 on device 0 (devices are interchangeable): swap two labels to match.
  const int first = device_of_expert[0];
  for (std::vector<int>* devices_of : {&device_of_expert, &device_of_token})
    for (int& d : *devices_of) d = d == first ? 0 : d == 0 ? first : d;
  std::vector<double> start(static_cast<std::size_t>(experts + 2 * tokens) * devices, 0.0);
  for (int k = 0; k < experts; ++k) start[k * devices + device_of_expert[k]] = 1;
  for (int j = 0; j < tokens; ++j)
    start[static_cast<std::size_t>(experts + j) * devices + device_of_token[j]] = 1;
  for (const Entry& e : entries) {
    const int d = device_of_token[e.token];
    if (device_of_expert[e.expert] == d)
      start[static_cast<std::size_t>(experts + tokens + e.token) * devices + d] += e.count;
  }
  return start;
}

// The model's columns, device-minor: x[k,d] expert k on device d, y[j,d] token j on device d (both
// binary), v[j,d] token j's activations served on d.
struct IlpColumns {
  int experts, tokens, devices;
  int x(int k, int d) const { return k * devices + d; }
  int y(int j, int d) const { return (experts + j) * devices + d; }
  int v(int j, int d) const { return (experts + tokens + j) * devices + d; }
};

// v[j,d] <= token j's activations by the experts on d, and 0 unless j is on d (header).
void add_served_activations(const IlpColumns& c, const std::vector<Entry>& entries, Model& model) {
  std::vector<double> activations(c.tokens, 0.0);
  std::vector<std::vector<std::pair<int, double>>> uses(c.tokens);
  for (const Entry& e : entries)
    activations[e.token] += e.count, uses[e.token].push_back({e.expert, e.count});
  for (int j = 0; j < c.tokens; ++j)
    for (int d = 0; d < c.devices; ++d) {
      model.add_column(1, activations[j], false);
      std::vector<std::pair<int, double>> row{{c.v(j, d), 1}};
      for (const auto& [k, count] : uses[j]) row.push_back({c.x(k, d), -count});
      model.add_row(row, -COIN_DBL_MAX, 0);
      model.add_row({{c.v(j, d), 1}, {c.y(j, d), -activations[j]}}, -COIN_DBL_MAX, 0);
    }
}

// Each expert on one device, N/D experts per device, each token on one device, at most `capacity`
// token occurrences per device.
void add_assignment_rows(const IlpColumns& c, const std::vector<double>& occurrences, double capacity,
                         Model& model) {
  const int per_device = c.experts / c.devices;
  for (int k = 0; k < c.experts; ++k) {
    std::vector<std::pair<int, double>> row;
    for (int d = 0; d < c.devices; ++d) row.push_back({c.x(k, d), 1});
    model.add_row(row, 1, 1);
  }
  for (int d = 0; d < c.devices; ++d) {
    std::vector<std::pair<int, double>> row;
    for (int k = 0; k < c.experts; ++k) row.push_back({c.x(k, d), 1});
    model.add_row(row, per_device, per_device);
  }
  for (int j = 0; j < c.tokens; ++j) {
    std::vector<std::pair<int, double>> row;
    for (int d = 0; d < c.devices; ++d) row.push_back({c.y(j, d), 1});
    model.add_row(row, 1, 1);
  }
  for (int d = 0; d < c.devices; ++d) {
    std::vector<std::pair<int, double>> row;
    for (int j = 0; j < c.tokens; ++j) row.push_back({c.y(j, d), occurrences[j]});
    model.add_row(row, -COIN_DBL_MAX, capacity);
  }
}

using CbcModel = std::unique_ptr<Cbc_Model, void (*)(Cbc_Model*)>;

// CBC on `model`, maximising, within `time_limit` seconds, from the greedy start.
CbcModel cbc_model(const Model& model, const IlpColumns& c, double time_limit,
                   const std::vector<double>& start) {
  CbcModel cbc(Cbc_newModel(), Cbc_deleteModel);
  model.load(cbc.get());
  Cbc_setColLower(cbc.get(), c.x(0, 0), 1);  // devices are interchangeable
  Cbc_setObjSense(cbc.get(), -1);
  Cbc_setLogLevel(cbc.get(), 0);
  Cbc_setParameter(cbc.get(), "seconds", fmt::format("{}", time_limit).c_str());
  Cbc_setAllowableGap(cbc.get(), 0.5);  // objective values are integers: within 0.5 is optimal
  Cbc_setParameter(cbc.get(), "randomCbcSeed", "1");
  Cbc_setParameter(cbc.get(), "threads", "0");
  Cbc_setParameter(cbc.get(), "timeMode", "elapsed");
  // CBC 2.10's preprocessing crashes in CglPreProcess::postProcess when the time limit stops the
  // search on these models (seen at EP8 with 16 tokens); solve without it.
  Cbc_setParameter(cbc.get(), "preprocess", "off");
  std::vector<int> all_columns(start.size());
  std::iota(all_columns.begin(), all_columns.end(), 0);
  Cbc_setMIPStartI(cbc.get(), static_cast<int>(start.size()), all_columns.data(), start.data());
  return cbc;
}

// The devices of CBC's best solution, and its objective once rounded (z = 1 exactly where expert
// and token share a device).
LayerSolution read_solution(Cbc_Model* cbc, const double* solution, const IlpColumns& c,
                            const std::vector<Entry>& entries) {
  LayerSolution out;
  out.device_of_expert.assign(c.experts, 0);
  out.device_of_token.assign(c.tokens, 0);
  for (int d = 0; d < c.devices; ++d) {
    for (int k = 0; k < c.experts; ++k)
      if (solution[c.x(k, d)] > 0.5) out.device_of_expert[k] = d;
    for (int j = 0; j < c.tokens; ++j)
      if (solution[c.y(j, d)] > 0.5) out.device_of_token[j] = d;
  }
  for (const Entry& e : entries)
    if (out.device_of_expert[e.expert] == out.device_of_token[e.token]) out.objective += e.count;
  out.optimal = Cbc_isProvenOptimal(cbc) != 0;
  out.best_bound = out.optimal ? out.objective : std::max(out.objective, Cbc_getBestPossibleObjValue(cbc));
  return out;
}

LayerSolution solve_layer(int experts, int devices, const std::vector<double>& occurrences,
                          const std::vector<Entry>& entries, double balance, double time_limit) {
  const IlpColumns columns{experts, static_cast<int>(occurrences.size()), devices};
  Model model;
  for (int c = 0; c < (experts + columns.tokens) * devices; ++c) model.add_column(0);
  add_served_activations(columns, entries, model);
  const double total = std::accumulate(occurrences.begin(), occurrences.end(), 0.0);
  const double capacity =
      std::max(balance * total / devices, *std::max_element(occurrences.begin(), occurrences.end()));
  add_assignment_rows(columns, occurrences, capacity, model);

  const CbcModel cbc =
      cbc_model(model, columns, time_limit, greedy_start(experts, devices, occurrences, entries, capacity));
  Cbc_solve(cbc.get());
  const double* solution = Cbc_bestSolution(cbc.get());
  if (solution == nullptr) {
    if (Cbc_isProvenInfeasible(cbc.get()))
      throw InputError(
          fmt::format("placement policy 'ilp': the {} modelled tokens cannot be spread over {} devices "
                      "within balance {}; raise balance",
                      columns.tokens, devices, balance));
    throw std::runtime_error("placement policy 'ilp': CBC found no feasible placement within the time limit");
  }
  return read_solution(cbc.get(), solution, columns, entries);
}

}  // namespace

PlacementResult ilp_placement(const PlacementInput& input, const PolicyChoice& choice) {
  const RoutingProfile& profile = *input.profile;
  const int n = input.experts, devices = input.devices;  // n a multiple of devices (equal_groups)
  const int wanted = static_cast<int>(choice.whole_param("tokens", 1, 1 << 20));
  const double balance = choice.param("balance"), time_limit = choice.param("time_limit");
  if (balance < 1) throw InputError("placement policy 'ilp': balance must be at least 1");
  if (time_limit <= 0) throw InputError("placement policy 'ilp': time_limit must be positive");

  // The J most frequent profiled tokens (ties: lower id).
  std::vector<std::int32_t> modelled;
  for (std::int32_t t = 0; t < static_cast<std::int32_t>(profile.vocabulary()); ++t)
    if (profile.token_occurrences(t) > 0) modelled.push_back(t);
  std::stable_sort(modelled.begin(), modelled.end(), [&](std::int32_t a, std::int32_t b) {
    return profile.token_occurrences(a) > profile.token_occurrences(b);
  });
  if (static_cast<int>(modelled.size()) > wanted) modelled.resize(wanted);
  // A profile without token identities (an id-less trace's) leaves no token side to co-cluster: the
  // experts are placed by their co-activation alone, as coact does, and the solver says so.
  if (modelled.empty()) {
    PlacementResult result = coact_placement(input, {"coact", {{"seed", 1}}});
    result.solver["coact_without_token_identities"] = 1;
    return result;
  }
  std::vector<double> occurrences;
  for (std::int32_t t : modelled) occurrences.push_back(static_cast<double>(profile.token_occurrences(t)));

  PlacementResult result;
  std::vector<std::vector<int>> device_of_expert;
  result.token_devices.device.assign(input.moe_layers, std::vector<std::int16_t>(profile.vocabulary(), -1));
  result.token_devices.confidence.assign(input.moe_layers, std::vector<float>(profile.vocabulary(), 0.0f));
  double objective = 0, best_bound = 0, max_layer_gap = 0;
  int optimal_layers = 0;
  ProgressCounter solved(input.progress, "layer", input.moe_layers);
  for (int layer = 0; layer < input.moe_layers; ++layer) {
    std::vector<Entry> entries;
    for (int j = 0; j < static_cast<int>(modelled.size()); ++j)
      for (const ExpertCount& c : profile.token_experts(layer, modelled[j]))
        entries.push_back({j, c.expert, static_cast<double>(c.count)});
    const LayerSolution s = solve_layer(n, devices, occurrences, entries, balance, time_limit);
    device_of_expert.push_back(s.device_of_expert);
    std::vector<double> activations(modelled.size(), 0.0), local(modelled.size(), 0.0);
    for (const Entry& e : entries) {
      activations[e.token] += e.count;
      if (s.device_of_expert[e.expert] == s.device_of_token[e.token]) local[e.token] += e.count;
    }
    for (std::size_t j = 0; j < modelled.size(); ++j) {
      result.token_devices.device[layer][modelled[j]] = static_cast<std::int16_t>(s.device_of_token[j]);
      result.token_devices.confidence[layer][modelled[j]] =
          activations[j] > 0 ? static_cast<float>(local[j] / activations[j]) : 0.0f;
    }
    objective += s.objective;
    best_bound += s.best_bound;
    if (s.best_bound > 0)
      max_layer_gap = std::max(max_layer_gap, (s.best_bound - s.objective) / s.best_bound);
    optimal_layers += s.optimal ? 1 : 0;
    solved.finished_one();
  }
  result.placement = placement_from_devices(device_of_expert, n, devices, &profile,
                                            physical_slots(choice, n, devices) / devices);
  result.solver = {{"objective", objective},
                   {"best_bound", best_bound},
                   {"gap", best_bound > 0 ? (best_bound - objective) / best_bound : 0.0},
                   {"max_layer_gap", max_layer_gap},
                   {"optimal_layers", optimal_layers}};
  return result;
}

}  // namespace semsim
