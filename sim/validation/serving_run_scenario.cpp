#include "sim/validation/serving_run_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "models/content_hash.hpp"

namespace semsim {
namespace {

struct ModelPreset {
  std::string_view path;  // the row's model_path (a Hugging Face name)
  std::string_view preset;
  bool dense;
};
// DeepSeek-R1 is DeepSeek-V3's architecture trained further: the same preset.
constexpr ModelPreset kModels[] = {
    {"Qwen/Qwen3-32B", "qwen3-32b", true},
    {"meta-llama/Llama-3.1-70B", "llama-3.1-70b", true},
    {"meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b", true},
    {"deepseek-ai/DeepSeek-V3", "deepseek-v3", false},
    {"deepseek-ai/DeepSeek-V3-0324", "deepseek-v3", false},
    {"deepseek-ai/DeepSeek-R1", "deepseek-v3", false},
    {"deepseek-ai/DeepSeek-R1-0528", "deepseek-v3", false},
};

struct SystemPresets {
  std::string_view system;
  std::string_view one_node;  // the single-node preset
  std::string_view nodes;     // the preset taking a node count
};
constexpr SystemPresets kSystems[] = {{"h100_sxm", "h100-1x8", "h100-ib"},
                                      {"h200_sxm", "h200-1x8", "h200-ib"}};
constexpr int kGpusPerNode = 8;

// A server's or pool's parallelism as scenario keys, or why it has none.
struct Layout {
  int gpus = 0;
  std::string parallelism;       // flow YAML of the parallelism section
  int max_running_requests = 0;  // per attention-DP group; 0: the engine's default
  std::string skipped;
};

Layout layout_of(const MeasuredLayout& m, bool dense, std::string_view what) {
  Layout layout;
  if (!m.tp) {
    layout.skipped = fmt::format("{}: no tp_size", what);
    return layout;
  }
  if (m.pp.value_or(1) > 1) {
    layout.skipped = fmt::format("{}: pipeline parallelism (pp_size {}) is not modelled", what, *m.pp);
    return layout;
  }
  const int tp = *m.tp;
  const int dp_per_worker = m.attention_dp.value_or(1);
  const int workers = m.workers.value_or(1);
  const int moe_tp = m.moe_tp.value_or(1), moe_ep = m.moe_ep.value_or(1);
  if (!dense && workers > 1) {
    layout.skipped = fmt::format("{}: {} workers of an MoE model are {} expert groups; a pool is one here",
                                 what, workers, workers);
    return layout;
  }
  if (!dense && moe_tp * moe_ep != tp * dp_per_worker) {
    layout.skipped = fmt::format(
        "{}: moe_tp_size {} x moe_ep_size {} is not the {} GPUs of tp_size {} x "
        "attention_dp_size {}",
        what, moe_tp, moe_ep, tp * dp_per_worker, tp, dp_per_worker);
    return layout;
  }
  // A pool's workers are independent servers: as attention-DP groups they share nothing but the
  // pool's request scheduling, which is what a router in front of them does.
  layout.gpus = tp * dp_per_worker * workers;
  layout.parallelism = fmt::format("{{attention: {{tp: {}, dp: {}}}", tp, dp_per_worker * workers);
  if (!dense) layout.parallelism += fmt::format(", moe: {{tp: {}, ep: {}}}", moe_tp, moe_ep);
  layout.parallelism += "}";
  // The engine's cap is per server; each of its attention-DP groups takes its share.
  if (m.batch_size) layout.max_running_requests = (*m.batch_size + dp_per_worker - 1) / dp_per_worker;
  return layout;
}

int nodes_for(int gpus) {
  return (gpus + kGpusPerNode - 1) / kGpusPerNode;
}

// `serving:` keys of a layout, in flow style.
std::string serving_of(const Layout& layout) {
  std::string serving = "{batching: prefill_first";
  if (layout.max_running_requests > 0)
    serving += fmt::format(", max_running_requests: {}", layout.max_running_requests);
  return serving + "}";
}

std::string pool_yaml(std::string_view role, const Layout& layout) {
  std::string set = fmt::format("parallelism: {}", layout.parallelism);
  if (layout.max_running_requests > 0)
    set += fmt::format(", serving.max_running_requests: {}", layout.max_running_requests);
  return fmt::format("  {}: {{nodes: {}, set: {{{}}}}}\n", role, nodes_for(layout.gpus), set);
}

RowScenario skip(std::string reason) {
  return {"", std::move(reason)};
}

}  // namespace

int closed_loop_requests(int concurrency) {
  return std::max(4 * concurrency, 16);
}

long long row_seed(const std::string& id) {
  // 28 bits of the id's content hash: any seed the workload takes.
  return static_cast<long long>(std::stoull(content_hash(id).substr(0, 7), nullptr, 16));
}

RowScenario row_scenario(const MeasuredServingRun& run, const std::string& engine_profile) {
  if (run.backend != "sglang")
    return skip(fmt::format("backend '{}': only SGLang's engine is modelled", run.backend));
  const auto model = std::find_if(std::begin(kModels), std::end(kModels),
                                  [&](const ModelPreset& m) { return m.path == run.model_path; });
  if (model == std::end(kModels)) return skip(fmt::format("model '{}': no preset", run.model_path));
  const auto system = std::find_if(std::begin(kSystems), std::end(kSystems),
                                   [&](const SystemPresets& s) { return s.system == run.system; });
  if (system == std::end(kSystems)) return skip(fmt::format("system '{}': no cluster preset", run.system));
  if (!run.precision.empty() && run.precision != "fp8" && run.precision != "bf16")
    return skip(fmt::format("precision '{}': only bf16 and fp8 weights are modelled", run.precision));
  if (!run.concurrency)
    return skip(
        "no concurrency recorded (silicon_concurrency=N in silicon_data_source): the benchmark's "
        "load is unknown");

  std::string cluster, parallelism, serving, disaggregation;
  if (run.mode == "agg") {
    const Layout server = layout_of(run.server, model->dense, "the server");
    if (!server.skipped.empty()) return skip(server.skipped);
    const int nodes = nodes_for(server.gpus);
    cluster = nodes == 1 ? std::string(system->one_node)
                         : fmt::format("{{preset: {}, nodes: {}}}", system->nodes, nodes);
    parallelism = server.parallelism;
    serving = serving_of(server);
  } else if (run.mode == "disagg") {
    const Layout prefill = layout_of(run.prefill, model->dense, "the prefill pool");
    if (!prefill.skipped.empty()) return skip(prefill.skipped);
    const Layout decode = layout_of(run.decode, model->dense, "the decode pool");
    if (!decode.skipped.empty()) return skip(decode.skipped);
    cluster = fmt::format("{{preset: {}, nodes: {}}}", system->nodes,
                          nodes_for(prefill.gpus) + nodes_for(decode.gpus));
    // The scenario's own layout is the prefill pool's (it fits the cluster); each pool sets its own.
    parallelism = prefill.parallelism;
    serving = "{batching: prefill_first}";
    disaggregation = "disaggregation:\n" + pool_yaml("prefill", prefill) + pool_yaml("decode", decode);
  } else {
    return skip(fmt::format("mode '{}': expected agg or disagg", run.mode));
  }

  RowScenario scenario;
  scenario.yaml = fmt::format(
      "# Measured serving run {} ({} {}, {} {}): its scenario, from semsim validate serving-runs.\n"
      "schema: 1\n"
      "name: {}\n"
      "model: {}\n"
      "cluster: {}\n"
      "precision: {{weights: {}}}\n"
      "parallelism: {}\n"
      "serving: {}\n"
      "engine: {{name: sglang}}\n"
      "workload:\n"
      "  concurrency: {}\n"
      "  requests: {}\n"
      "  seed: {}\n"
      "  input_len: {{dist: fixed, value: {}}}\n"
      "  output_len: {{dist: fixed, value: {}}}\n"
      "calibration: {}\n"
      "outputs: {{requests_csv: false, steps_csv: false}}\n"
      "{}",
      run.id, run.backend, run.backend_version, run.model_path, run.mode, run.id, model->preset, cluster,
      run.precision == "fp8" ? "fp8" : "bf16", parallelism, serving, *run.concurrency,
      closed_loop_requests(*run.concurrency), row_seed(run.id), run.isl, run.osl,
      engine_profile.empty() ? "measured" : nlohmann::json(engine_profile).dump(), disaggregation);
  return scenario;
}

}  // namespace semsim
