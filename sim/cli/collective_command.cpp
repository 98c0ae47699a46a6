// `semsim collective`: one dispatch + combine (or an NCCL collective) timed alone, repeated back to
// back, in DeepEP's and nccl-tests' bandwidth conventions (sim/collective_bench.hpp).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"
#include "models/input_error.hpp"
#include "models/presets.hpp"
#include "models/yaml_input.hpp"
#include "sim/cli/commands.hpp"
#include "sim/collective_bench.hpp"
#include "sim/network.hpp"

namespace semsim {
namespace {

struct CollectiveOptions {
  std::string model = "deepseek-v3";
  std::string cluster = "h200-1x8";
  std::string nodes;  // --nodes as given, checked as a scenario's cluster.nodes is
  bool nodes_given = false;
  std::string calibration = "measured";
  bool extrapolate = false;  // calibration.extrapolate: tables queried far outside their measured grid
  std::string routing = "uniform";
  std::string fidelity = "bottleneck";
  std::string step = "prefill";
  std::string timing = "tables";
  std::string dispatch_dtype = "fp8";
  bool json = false;
  int hidden = 0, experts = 0, top_k = 0;  // the model's unless given
  std::vector<int> tokens{128};
  CollectiveBenchSpec spec;
};

// uniform | zipf:S
double zipf_exponent(const std::string& routing) {
  if (routing == "uniform") return 0;
  if (routing.starts_with("zipf:")) {
    const auto exponent = parse_number(routing.substr(5));
    if (exponent && *exponent >= 0 && *exponent <= 10) return *exponent;
  }
  throw InputError("--routing '" + routing + "': expected uniform or zipf:S with S in [0, 10]");
}

std::shared_ptr<const CalibrationProfile> profile_option(const std::string& calibration,
                                                         const Device& device) {
  if (calibration == "datasheet")
    return std::make_shared<const CalibrationProfile>(CalibrationProfile::datasheet(device));
  if (calibration == "measured") return CalibrationProfile::standard(device);
  return std::make_shared<const CalibrationProfile>(
      CalibrationProfile::from_yaml(YamlInput::load_file(calibration), device));
}

std::string us(double seconds) {
  return fmt::format("{:.1f} us", seconds * 1e6);
}

// One result: a JSON object on one line per token count with --json, else a few lines of text.
void print_result(const CollectiveOptions& o, const CollectiveBenchResult& r) {
  const CollectiveBenchSpec& spec = o.spec;
  if (o.json) {
    nlohmann::ordered_json j;
    j["kernel"] = spec.kernel;
    j["step"] = o.step;
    j["model"] = spec.model.name;
    j["cluster"] = spec.cluster.name;
    j["ep"] = spec.ep;
    j["tokens_per_rank"] = spec.tokens;
    j["routing"] = o.routing;
    j["group_limited"] = spec.group_limited;
    j["redundant"] = spec.redundant;
    j["repeat"] = spec.repeat;
    j["fidelity"] = o.fidelity;
    j["calibration"] = spec.profile->name;
    j["timed_by"] = r.timed_by;
    const bool rdma = r.reported_link == "rdma";
    if (r.nccl_collective) {
      j["time_us"] = r.dispatch_seconds * 1e6;
      j["gbps"] = rdma ? r.dispatch_rdma_gbps : r.dispatch_nvlink_gbps;
    } else {
      j["dispatch_us"] = r.dispatch_seconds * 1e6;
      j["combine_us"] = r.combine_seconds * 1e6;
      j["dispatch_gbps"] = rdma ? r.dispatch_rdma_gbps : r.dispatch_nvlink_gbps;
      j["combine_gbps"] = rdma ? r.combine_rdma_gbps : r.combine_nvlink_gbps;
    }
    j["reported_link"] = r.reported_link;
    j["gbps_by_link"] = {
        {"nvlink", {{"dispatch", r.dispatch_nvlink_gbps}, {"combine", r.combine_nvlink_gbps}}},
        {"rdma", {{"dispatch", r.dispatch_rdma_gbps}, {"combine", r.combine_rdma_gbps}}}};
    j["bottleneck_link"] = r.bottleneck_link;
    j["algbw_gbps"] = r.algbw_gbps;
    j["busbw_gbps"] = r.busbw_gbps;
    j["bytes_per_rank"] = {
        {"nvlink", r.scale_up_bytes}, {"rdma", r.scale_out_bytes}, {"forwarded", r.forwarded_bytes}};
    if (!r.nccl_collective)
      j["combine_bytes_per_rank"] = {{"nvlink", r.scale_up_bytes * r.combine_bytes_per_dispatch_byte},
                                     {"rdma", r.scale_out_bytes * r.combine_bytes_per_dispatch_byte},
                                     {"forwarded", r.forwarded_bytes * r.combine_bytes_per_dispatch_byte}};
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << fmt::format("{} on {} ({}), EP {}{}, {} tokens per rank, {}{} routing, {} call{}\n",
                           spec.kernel, spec.model.name, spec.cluster.name, spec.ep,
                           spec.redundant > 0 ? fmt::format(" ({} redundant slots)", spec.redundant) : "",
                           spec.tokens, spec.group_limited ? "group-limited " : "", o.routing, spec.repeat,
                           spec.repeat == 1 ? "" : "s");
  std::cout << "timed by: " << r.timed_by << " (alone, so the same in either fidelity)\n";
  // Both levels' GB/s, the one DeepEP's convention reports first (RDMA for a group over nodes).
  const auto links = [&](double nvlink, double rdma) {
    const bool over_nodes = r.reported_link == "rdma";
    return fmt::format("{} {:.1f} GB/s ({})  {} {:.1f} GB/s", over_nodes ? "RDMA" : "NVLink",
                       over_nodes ? rdma : nvlink, "DeepEP's convention", over_nodes ? "NVLink" : "RDMA",
                       over_nodes ? nvlink : rdma);
  };
  if (r.nccl_collective) {
    std::cout << fmt::format("time {}  {}  algbw {:.1f} GB/s  busbw {:.1f} GB/s\n", us(r.dispatch_seconds),
                             links(r.dispatch_nvlink_gbps, r.dispatch_rdma_gbps), r.algbw_gbps, r.busbw_gbps);
  } else {
    std::cout << fmt::format("dispatch {}  {}   (nccl-tests: algbw {:.1f} GB/s, busbw {:.1f} GB/s)\n",
                             us(r.dispatch_seconds), links(r.dispatch_nvlink_gbps, r.dispatch_rdma_gbps),
                             r.algbw_gbps, r.busbw_gbps);
    std::cout << fmt::format("combine  {}  {}\n", us(r.combine_seconds),
                             links(r.combine_nvlink_gbps, r.combine_rdma_gbps));
  }
  std::cout << fmt::format("bottleneck: {}\n", r.bottleneck_link == "rdma" ? "RDMA" : "NVLink");
  const auto bytes = [&](double scale) {
    return fmt::format("NVLink {:.3f} MB (forwarded {:.3f} MB), RDMA {:.3f} MB",
                       r.scale_up_bytes * scale / 1e6, r.forwarded_bytes * scale / 1e6,
                       r.scale_out_bytes * scale / 1e6);
  };
  if (r.nccl_collective) {
    std::cout << "per rank and call: " << bytes(1) << "\n";
  } else {
    std::cout << "per rank and call: dispatch " << bytes(1) << "\n";
    std::cout << "                   combine  " << bytes(r.combine_bytes_per_dispatch_byte) << "\n";
  }
}

int collective(CollectiveOptions& o) {
  CollectiveBenchSpec& spec = o.spec;
  spec.model = load_model(
      YamlInput(YAML::Node(o.model), std::make_shared<const std::string>("--model"), "model"), ".");
  refuse_dense_model(spec.model, "--model " + o.model, "collective");
  spec.cluster = load_cluster(
      YamlInput(YAML::Node(o.cluster), std::make_shared<const std::string>("--cluster"), "cluster"), ".");
  if (o.nodes_given)
    spec.cluster = spec.cluster.sized(
        YamlInput(YAML::Node(o.nodes), std::make_shared<const std::string>("--nodes " + o.nodes), ""),
        std::nullopt);
  spec.profile = profile_option(o.calibration, spec.cluster.device);
  spec.extrapolate = o.extrapolate;
  spec.zipf = zipf_exponent(o.routing);
  spec.measured_tables = o.timing != "topology";
  spec.link_model = o.timing == "model";
  if (o.hidden > 0) spec.model.hidden = o.hidden;
  if (o.experts > 0) spec.model.routed_experts = o.experts;
  if (o.top_k > 0) spec.model.top_k = o.top_k;
  if (spec.model.top_k > spec.model.routed_experts)
    throw InputError(
        fmt::format("--top-k {} exceeds the {} routed experts", spec.model.top_k, spec.model.routed_experts));
  spec.dispatch_format = value_of(kDispatchFormatNames, o.dispatch_dtype);
  spec.decode_step = o.step == "decode";
  for (const int tokens : o.tokens) {
    spec.tokens = tokens;
    print_result(o, bench_collective(spec));
  }
  return 0;
}

}  // namespace

void add_collective_command(CommandLine& cli) {
  auto o = std::make_shared<CollectiveOptions>();
  CLI::App* command = cli.add("collective",
                              "time one MoE dispatch + combine (or an NCCL collective) alone, repeated, with "
                              "DeepEP's and nccl-tests' bandwidths",
                              [o] { return collective(*o); });
  command->add_option("--model", o->model,
                      "model preset or file: hidden size, top-k, experts (default deepseek-v3)");
  command->add_option("--cluster", o->cluster, "cluster preset or file (default h200-1x8)");
  command
      ->add_option("--nodes", o->nodes,
                   "the cluster's node count (within its preset's range, semsim list clusters)")
      ->each([o](const std::string&) { o->nodes_given = true; });
  command->add_option("--ep", o->spec.ep, "EP group size (default 8)")->check(CLI::Range(2, 1 << 16));
  command
      ->add_option("--tokens", o->tokens, "tokens per rank, or several: 1,2,4 (one result each; default 128)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1 << 30));
  command->add_option("--kernel", o->spec.kernel, "dispatch mode or NCCL collective (default normal)")
      ->check(CLI::IsMember(collective_kernel_names()));
  command
      ->add_option("--step", o->step,
                   "prefill | decode: the step a dispatch runs in, which picks DeepEP's kernel under "
                   "--kernel auto (SGLang's rule: low_latency for decode-only steps; default prefill)")
      ->check(CLI::IsMember({"prefill", "decode"}));
  command->add_option("--routing", o->routing, "uniform | zipf:S: expert popularity (default uniform)");
  command->add_flag("--group-limited", o->spec.group_limited,
                    "keep each token's experts to the model's best topk_group of n_group expert groups");
  command
      ->add_option("--redundant", o->spec.redundant,
                   "redundant expert slots (SGLang's trivial layout; EP must divide experts + redundant)")
      ->check(CLI::Range(0, 32767));
  command
      ->add_option("--fidelity", o->fidelity, "flow | bottleneck (a lone collective takes the same in both)")
      ->check(CLI::IsMember(names_of(kNetworkFidelityNames)));
  command
      ->add_option("--repeat", o->spec.repeat,
                   "calls, each with fresh routing (default 1; at most 4096, and 2^26 routed tokens in all)")
      ->check(CLI::Range(1, 1 << 12));
  command->add_option("--seed", o->spec.seed, "routing seed (default 1)");
  command
      ->add_option(
          "--sms", o->spec.sms,
          "SMs of DeepEP's normal kernels (default: the device's; refused where none times the call: "
          "--timing topology, low-latency and NCCL kernels)")
      ->check(CLI::Range(1, 1024));
  command
      ->add_option("--dispatch-dtype", o->dispatch_dtype,
                   "fp8 | bf16 | nvfp4 dispatch payload (default fp8; nvfp4: 0.5 B + an FP8 scale per 16)")
      ->check(CLI::IsMember(names_of(kDispatchFormatNames)));
  command->add_option("--calibration", o->calibration,
                      "measured | datasheet | profile file (default measured)");
  command->add_flag(
      "--extrapolate", o->extrapolate,
      "extrapolate measured tables far outside their grid, as calibration.extrapolate: true does "
      "(default: refused)");
  command
      ->add_option("--timing", o->timing,
                   "tables: as a run prices it (DeepEP's and NCCL's measured tables where they time the "
                   "group) | topology: always the copies over the topology | model: DeepEP's link model, fit "
                   "without the model's own shape (default tables)")
      ->check(CLI::IsMember({"tables", "topology", "model"}));
  command->add_option("--hidden", o->hidden, "hidden size instead of the model's")
      ->check(CLI::Range(1, 1 << 20));
  command->add_option("--experts", o->experts, "routed experts instead of the model's")
      ->check(CLI::Range(1, 32767));
  command->add_option("--top-k", o->top_k, "experts per token instead of the model's")
      ->check(CLI::Range(1, 64));
  command->add_flag("--json", o->json, "print the result as JSON");
}

}  // namespace semsim
