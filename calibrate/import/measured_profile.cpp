#include "calibrate/import/measured_profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "calibrate/fit/fit.hpp"
#include "calibrate/format/kernels.hpp"
#include "calibrate/format/shape_words.hpp"
#include "calibrate/import/raw_results.hpp"
#include "models/operator_costs.hpp"
#include "models/presets.hpp"

namespace semsim {
namespace {

// Lower-case words, split at spaces and hyphens ("NVIDIA A100-SXM4-80GB": nvidia, a100, sxm4, 80gb).
std::set<std::string> words(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return c == '-' ? ' ' : static_cast<char>(std::tolower(c)); });
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) out.insert(word);
  return out;
}

Device device_preset(const std::string& name) {
  return load_device(YamlInput(YAML::Node(name), std::make_shared<const std::string>("<device>"), "device"),
                     "");
}

// A model with just the shape of one kernel, for the operator counts of operator_costs.hpp.
MoeModel model_of_shape(const std::string& shape) {
  MoeModel m;
  m.layers = 1;
  m.hidden = static_cast<int>(shape_value(shape, "hidden").value_or(0));
  m.dense_ffn = static_cast<int>(shape_value(shape, "ffn").value_or(0));
  m.vocabulary = static_cast<int>(shape_value(shape, "vocabulary").value_or(0));
  AttentionShape& a = m.attention;
  a.kind = shape_has_word(shape, "mla") ? AttentionKind::kMla : AttentionKind::kGqa;
  a.heads = static_cast<int>(shape_value(shape, "heads").value_or(0));
  a.kv_heads = static_cast<int>(shape_value(shape, "kv_heads").value_or(1));
  a.head_dim = static_cast<int>(shape_value(shape, "head_dim").value_or(0));
  a.kv_lora_rank = static_cast<int>(shape_value(shape, "kv_lora").value_or(0));
  a.qk_rope_head_dim = static_cast<int>(shape_value(shape, "rope").value_or(0));
  a.qk_nope_head_dim = static_cast<int>(shape_value(shape, "nope").value_or(0));
  a.v_head_dim = static_cast<int>(shape_value(shape, "v_head").value_or(0));
  return m;
}

// FLOPs of one grid point of the kernels whose speed defines the roofline's GEMM and attention
// efficiencies, counted as operator_costs.hpp counts them (0 for other kernels).
double grid_point_flops(const std::string& kernel, const std::string& shape, double x, double y) {
  const MoeModel m = model_of_shape(shape);
  const auto tokens = static_cast<long long>(x);
  const Precision bf16;
  if (kernel == "attention_projections")
    return 2.0 * x * static_cast<double>(shape_value(shape, "params").value_or(0));
  if (kernel == "shared_experts" || kernel == "dense_ffn") return dense_ffn_cost(m, tokens, bf16).flops;
  if (kernel == "lm_head") return lm_head_cost(m, tokens, bf16).flops;
  if (kernel == "attention_prefill") {
    const std::vector<SequenceChunk> chunk{{static_cast<int>(tokens), static_cast<long long>(y) - tokens}};
    return attention_core_cost(m, 0, chunk, bf16).flops;
  }
  return 0;
}

struct KernelSamples {
  std::string implementation;
  std::vector<KernelSample> grid, held_out;
};

struct Derived {
  double gemm_flops = 0, attention_flops = 0, copy_bandwidth = 0;
  double fastest_kernel = 0;
};

std::string summary_of(const CalibrationProfile& p, const std::string& failed_checks,
                       const std::vector<std::string>& efficiencies_measured) {
  std::string measured;
  for (const std::string& name : efficiencies_measured) measured += (measured.empty() ? "" : ", ") + name;
  const ProfileTopology& topology = *p.provenance->topology;
  const bool scaleout = std::find(efficiencies_measured.begin(), efficiencies_measured.end(), "scaleout") !=
                        efficiencies_measured.end();
  return fmt::format(
      "Measured by semsim-calibrate-bench on {} ({} node(s) of {} GPU(s)), {}: {} kernel tables, {} "
      "collective "
      "fits. Efficiencies derived from the samples: {} (the others are the datasheet's{}). overhead.kernel "
      "is "
      "the fastest launch measured, overhead.collective the scale-up all-to-all's alpha. Residuals: "
      "leave-one-out relative errors of interior grid points, plus skewed expert histograms predicted by the "
      "balanced tables. Correctness checks failed: {}.",
      p.provenance->gpu, topology.nodes, topology.gpus_per_node, p.provenance->date, p.kernels.size(),
      p.collectives.size(), measured.empty() ? "none" : measured,
      scaleout             ? ""
      : topology.nodes > 1 ? "; no scale-out all-to-all was measured"
                           : "; one node measures no fabric",
      failed_checks.empty() ? "none" : failed_checks);
}

// Of the all-to-all fits of `level`, the one over the most ranks: the efficiency and overhead of
// the largest group measured.
const CollectiveFit* largest_all_to_all(const CalibrationProfile& p, const std::string& level) {
  const CollectiveFit* largest = nullptr;
  for (const CollectiveFit& fit : p.collectives)
    if (fit.collective == "all_to_all" && fit.level == level && (!largest || fit.ranks > largest->ranks))
      largest = &fit;
  return largest;
}

// Where the samples came from: the run's environment (rank 0's) and the machines it ran on.
ProfileProvenance provenance_of(const RawResults& raw) {
  auto env = [&](const char* key) {
    const auto it = raw.environment.find(key);
    return it == raw.environment.end() ? std::string() : it->second;
  };
  return ProfileProvenance{
      env("date"),
      env("gpu"),
      raw.ranks > 1 ? raw.ranks : static_cast<int>(parse_number(env("gpus")).value_or(0)),
      env("driver"),
      env("cuda"),
      env("cublas"),
      env("nccl"),
      "",
      "",
      {},
      raw.topology,
      {}};
}

// The names of the correctness checks that did not pass, space-separated.
std::string failed_checks_of(const RawTable& checks) {
  std::string failed;
  if (checks.rows().empty()) return failed;
  const std::size_t name = checks.column("check"), passed = checks.column("passed");
  for (const auto& row : checks.rows())
    if (row.fields[passed] != "true") failed += (failed.empty() ? "" : " ") + row.fields[name];
  return failed;
}

using TableKey = std::tuple<std::string, std::string, std::string>;  // kernel, shape, dtype

// The kernel samples that ran, per table; `derived` takes the roofline's figures from them.
std::map<TableKey, KernelSamples> kernel_samples(const RawTable& kernels, Derived& derived) {
  std::map<TableKey, KernelSamples> by_table;
  if (kernels.rows().empty()) return by_table;
  const std::size_t kernel = kernels.column("kernel"), shape = kernels.column("shape"),
                    dtype = kernels.column("dtype"), implementation = kernels.column("implementation"),
                    variant = kernels.column("variant"), x = kernels.column("x"), y = kernels.column("y"),
                    seconds = kernels.column("seconds"), status = kernels.column("status");
  for (const auto& row : kernels.rows()) {
    if (row.fields[status] != "ok") continue;
    const std::string& name = row.fields[kernel];
    if (!find_kernel_spec(name))
      throw InputError(fmt::format("{}: unknown kernel '{}'{}", kernels.where(row), name,
                                   did_you_mean(name, kernel_names())));
    const KernelSample sample{kernels.number(row, x), kernels.number(row, y), kernels.number(row, seconds)};
    KernelSamples& samples = by_table[{name, row.fields[shape], row.fields[dtype]}];
    samples.implementation = row.fields[implementation];
    (row.fields[variant] == "grid" ? samples.grid : samples.held_out).push_back(sample);
    derived.fastest_kernel =
        derived.fastest_kernel > 0 ? std::min(derived.fastest_kernel, sample.seconds) : sample.seconds;
    // Kernel-scope tables (a plain GEMM at n, k; the MoE kernel; ...) price themselves: they add
    // nothing to the roofline's figures, which are for the operators no table covers.
    if (find_kernel_spec(name)->scope == KernelScope::kKernel) continue;
    const double flops = grid_point_flops(name, row.fields[shape], sample.x, sample.y) / sample.seconds;
    if (name == "attention_prefill")
      derived.attention_flops = std::max(derived.attention_flops, flops);
    else if (row.fields[dtype] == "bf16")
      derived.gemm_flops = std::max(derived.gemm_flops, flops);
    if (name == "copy" && sample.x >= (64 << 20))  // large copies: read once, written once
      derived.copy_bandwidth = std::max(derived.copy_bandwidth, 2 * sample.x / sample.seconds);
  }
  return by_table;
}

// A table per kernel, shape and dtype whose samples make one.
void add_kernel_tables(CalibrationProfile& p, const std::map<TableKey, KernelSamples>& by_table) {
  for (const auto& [key, samples] : by_table) {
    const auto& [kernel, shape, dtype] = key;
    const KernelSpec& spec = *find_kernel_spec(kernel);
    // Kernel-scope samples go through the fitter a database's tables go through, so that the same
    // measurements make the same profile whichever source they come from.
    std::optional<KernelTable> table;
    if (spec.scope == KernelScope::kKernel) {
      std::vector<KernelSample> all = samples.grid;
      all.insert(all.end(), samples.held_out.begin(), samples.held_out.end());
      table = fit_scattered_table(spec, shape, dtype, samples.implementation, all);
    } else {
      table = fit_kernel_table(spec, shape, dtype, samples.implementation, samples.grid, samples.held_out);
    }
    if (table) p.kernels.push_back(std::move(*table));
  }
}

// A fit per collective, link level and rank count whose samples make one.
void add_collective_fits(CalibrationProfile& p, const RawTable& collectives, const Device& device) {
  std::map<std::tuple<std::string, std::string, int>, std::vector<CollectiveSample>> by_fit;
  if (!collectives.rows().empty()) {
    const std::size_t collective = collectives.column("collective"), ranks = collectives.column("ranks"),
                      level = collectives.column("level"), message = collectives.column("message_bytes"),
                      bus = collectives.column("bus_bytes"), seconds = collectives.column("seconds"),
                      status = collectives.column("status");
    // Point-to-point pairs across rails (pair = cross_rail) stay in the raw results: the engine's
    // scale-out is rail-aligned, as NCCL routes it.
    const bool has_pair = collectives.has_column("pair");
    const std::size_t pair = has_pair ? collectives.column("pair") : 0;
    for (const auto& row : collectives.rows()) {
      const auto rank_count = static_cast<int>(collectives.number(row, ranks));
      if (row.fields[status] != "ok" || rank_count < 2) continue;  // one rank moves nothing over a link
      if (has_pair && row.fields[pair] == "cross_rail") continue;
      by_fit[{row.fields[collective], row.fields[level], rank_count}].push_back(
          {collectives.number(row, bus), collectives.number(row, message), collectives.number(row, seconds)});
    }
  }
  for (const auto& [key, samples] : by_fit) {
    const auto& [collective, level, ranks] = key;
    if (std::find(collective_names().begin(), collective_names().end(), collective) ==
            collective_names().end() ||
        std::find(link_level_names().begin(), link_level_names().end(), level) == link_level_names().end())
      continue;
    const double link = level == "scaleup" ? device.scaleup_bandwidth : device.nic_bandwidth;
    if (auto fit = fit_collective(collective, level, ranks, samples, link))
      p.collectives.push_back(std::move(*fit));
  }
}

// Sets the efficiencies and overheads the samples measured (`derived`, the largest all-to-alls);
// the names of the efficiencies set.
std::vector<std::string> set_measured_figures(CalibrationProfile& p, const Derived& derived,
                                              const Device& device) {
  std::vector<std::string> measured;
  if (derived.gemm_flops > 0) {
    p.gemm_efficiency = std::clamp(derived.gemm_flops / device.bf16_flops, 0.01, 1.0);
    measured.push_back("gemm");
  }
  if (derived.attention_flops > 0) {
    p.attention_efficiency = std::clamp(derived.attention_flops / device.bf16_flops, 0.01, 1.0);
    measured.push_back("attention");
  }
  if (derived.copy_bandwidth > 0) {
    p.memory_efficiency = std::clamp(derived.copy_bandwidth / device.hbm_bandwidth, 0.01, 1.0);
    measured.push_back("memory");
  }
  if (const CollectiveFit* scaleup = largest_all_to_all(p, "scaleup")) {
    p.scaleup_efficiency = std::clamp(scaleup->efficiency, 0.01, 1.0);
    p.collective_overhead = std::min(scaleup->alpha, 1e-2);
    measured.push_back("scaleup");
  }
  if (const CollectiveFit* scaleout = largest_all_to_all(p, "scaleout")) {
    p.scaleout_efficiency = std::clamp(scaleout->efficiency, 0.01, 1.0);
    measured.push_back("scaleout");
  }
  if (derived.fastest_kernel > 0) p.kernel_overhead = std::min(derived.fastest_kernel, 1e-2);
  return measured;
}

}  // namespace

std::string raw_gpu_name(const std::string& raw_dir) {
  const RawResults raw = read_raw_results(raw_dir);
  const auto gpu = raw.environment.find("gpu");
  if (gpu == raw.environment.end()) throw InputError(raw.environment_file + ": no 'gpu' entry");
  return gpu->second;
}

std::string device_preset_for_gpu(const std::string& gpu_name) {
  const std::set<std::string> wanted = words(gpu_name);
  std::vector<std::string> best;
  std::size_t best_score = 1;  // sharing only a vendor word is no match
  for (const std::string& name : preset_names(PresetKind::kDevice)) {
    std::size_t score = 0;
    for (const std::string& word : words(device_preset(name).display_name)) score += wanted.count(word);
    if (score > best_score) best.clear(), best_score = score;
    if (score == best_score) best.push_back(name);
  }
  if (best.size() == 1) return best[0];
  std::string candidates;
  for (const std::string& name : best.empty() ? preset_names(PresetKind::kDevice) : best)
    candidates += (candidates.empty() ? "" : ", ") + name;
  throw InputError(fmt::format("cannot tell which device preset the GPU '{}' is ({}); name it with --device",
                               gpu_name, candidates));
}

CalibrationProfile fit_measured_profile(const std::string& raw_dir, const Device& device) {
  const RawResults raw = read_raw_results(raw_dir);
  CalibrationProfile p = CalibrationProfile::datasheet(device);
  p.name = device.name + "-measured";
  p.source = "measured";
  p.provenance = provenance_of(raw);
  const std::string failed_checks = failed_checks_of(raw.checks);
  if (raw.kernels.rows().empty() && raw.collectives.rows().empty())
    throw InputError(raw_dir + ": no kernel or collective results (" + kRawKernels + ", " + kRawCollectives +
                     ")");
  Derived derived;
  add_kernel_tables(p, kernel_samples(raw.kernels, derived));
  add_collective_fits(p, raw.collectives, device);
  const std::vector<std::string> measured = set_measured_figures(p, derived, device);
  p.notes = summary_of(p, failed_checks, measured);
  return p;
}

}  // namespace semsim
