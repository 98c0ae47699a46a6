// The routing-trace commands `semsim trace import|fit|synth|cluster` and `semsim profile` (see README,
// "Routing traces"); fit and profile take the same trace split.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "models/compressed_file.hpp"
#include "models/csv.hpp"
#include "models/output_files.hpp"
#include "models/presets.hpp"
#include "sim/cli/commands.hpp"
#include "sim/outputs/output_staging.hpp"
#include "sim/runs/progress.hpp"
#include "sim/scenario.hpp"
#include "workloads/expert_groups.hpp"
#include "workloads/request_clustering.hpp"
#include "workloads/routing_fit.hpp"
#include "workloads/routing_profile.hpp"
#include "workloads/trace_import.hpp"

namespace semsim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A trace and the split of its requests into profiled and held-out ones, as fit and profile take them.
struct SplitTraceOptions {
  std::string trace;
  double split = 0.2;  // held-out fraction
  long long seed = 1;
  std::string out;
  ProgressMode progress = ProgressMode::kAuto;
};

// A trace and its seeded split into profiled and held-out requests.
struct SplitTrace {
  RoutingTrace trace;
  std::vector<bool> held_out;
};

SplitTrace load_split(const std::string& trace_path, double split, std::uint64_t seed,
                      const std::string& command) {
  SplitTrace s{moe_trace(trace_path, command), {}};
  s.held_out = held_out_requests(s.trace.requests(), split, seed);
  return s;
}

// An output folder's files: these names.
IsOutputFile one_of(std::vector<std::string> names) {
  return
      [names](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
}

void check_trace_output_name(const std::string& out) {
  if (!is_trace_file_name(out))
    throw InputError("--out '" + out + "': must end in .semtrace (binary) or .semtrace.txt[.gz] (text)");
}

struct ImportOptions {
  std::string format, input, model, out;
  ProgressMode progress = ProgressMode::kAuto;
};

int trace_import_command(const ImportOptions& options) {
  const auto& [format, input, model_name, out, progress_mode] = options;
  const auto started = std::chrono::steady_clock::now();
  const TraceImportFormat from = trace_import_format_named(format);
  check_trace_output_name(out);
  OutputStaging staging({input});
  const std::string staged = staging.staged_at("--out", out);
  const MoeModel model = moe_model_option(model_name, "trace import");
  ProgressLine progress("trace import", progress_mode);
  const RoutingTrace trace = import_trace(from, input, model, progress.callback());
  write_trace(trace, staged);
  staging.commit();
  progress.finish();
  std::cout << fmt::format(
      "{}: {} requests, {} routed tokens, {} token texts; {} MoE layers x top-{} of {} experts{}\n"
      "  written to {} in {:.2f} s\n",
      input, trace.requests(), trace.tokens(), trace.vocabulary().size(), trace.header().moe_layers,
      trace.header().top_k, trace.header().experts, trace.header().gate_weights ? ", with gate weights" : "",
      out, seconds_since(started));
  // A group-limited model's gate keeps every token to its best groups: a trace that does not was
  // recorded some other way (another model, or routing without the limit).
  if (model.group_limited()) {
    const GroupLimitCheck check = check_group_limit(trace, ExpertGroupLimit::of(model));
    std::cout << "  " << group_limit_counts(check) << "\n";
    const std::string warning = group_limit_warning(check, input);
    if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  }
  return 0;
}

// Records the prompts of requests first_request .. first_request + requests - 1 of a scenario with
// synthetic routing (lengths, topics and routing exactly as a run of that scenario draws them) as a
// trace, so that synthetic routing goes through the same profile → place → replay pipeline as a
// real trace. A first_request beyond a run's request count profiles requests that run never sees.
int trace_synth_command(const ScenarioArguments& scenario_arguments, int requests, int first_request,
                        const std::string& out) {
  const auto started = std::chrono::steady_clock::now();
  check_trace_output_name(out);
  const Scenario scenario = scenario_arguments.load();
  OutputStaging staging(scenario_input_files(scenario));
  const std::string staged = staging.staged_at("--out", out);
  refuse_dense_model(scenario.model, scenario.file, "trace synth");
  WorkloadSpec spec = scenario.workload;
  if (spec.trace)
    throw InputError(scenario.file +
                     ": workload.routing: trace synth records synthetic routing, but the "
                     "scenario replays a trace");
  spec.requests = first_request + requests;
  std::vector<TraceRequest> shapes;
  std::vector<int> topics;
  for (const Request& r : generate_requests(spec))
    if (r.id >= first_request) {
      shapes.push_back({r.input_tokens, r.output_tokens, true, 0});
      topics.push_back(r.topic);
    }
  const RoutingTrace trace = [&] {
    try {
      return synthesize_trace(
          shapes, topics, make_synthetic_routing(spec, scenario.model),
          {scenario.model.name,
           fmt::format("synthetic routing of scenario {} ({}), seed {}, requests {}..{}", scenario.name,
                       scenario.file, spec.seed, first_request, first_request + requests - 1)},
          first_request);
    } catch (const InputError& e) {
      throw InputError(fmt::format("--requests {}: {}", requests, e.what()));
    }
  }();
  write_trace(trace, staged);
  staging.commit();
  std::cout << fmt::format(
      "{}: {} synthetic requests, {} routed prompt tokens; {} MoE layers x top-{} of {} "
      "experts\n  written to {} in {:.2f} s\n",
      scenario.file, trace.requests(), trace.tokens(), trace.header().moe_layers, trace.header().top_k,
      trace.header().experts, out, seconds_since(started));
  return 0;
}

int profile_command(const SplitTraceOptions& options) {
  const std::string& trace_path = options.trace;
  const std::string& out_dir = options.out;
  const double split = options.split;
  const auto seed = static_cast<std::uint64_t>(options.seed);
  const auto started = std::chrono::steady_clock::now();
  // What RoutingProfile::write writes, then the statistics.
  const std::vector<std::string> profile_files{"profile.json",    "tokens.tsv",       "token_experts.tsv",
                                               "expert_load.csv", "coactivation.csv", "paths.semtrace"};
  std::vector<std::string> outputs = profile_files;
  outputs.push_back("table1.csv");
  OutputStaging staging(out_dir, one_of(outputs), {trace_path});
  ProgressLine progress("profile", options.progress);
  const auto [trace, held_out] = load_split(trace_path, split, seed, "profile");
  RoutingProfile profile = RoutingProfile::build(trace, held_out, progress.callback());
  const auto held = static_cast<std::size_t>(std::count(held_out.begin(), held_out.end(), true));
  profile.set_source({trace_path, trace_content_hash(trace), split, seed,
                      static_cast<long long>(trace.requests()),
                      static_cast<long long>(trace.requests() - held)});
  const std::vector<AffinityStatistics> statistics =
      held_out_statistics(trace, profile, held_out, true, progress.callback());
  const std::vector<double> skew = expert_load_skew(profile);

  const std::string staged_profile = staging.staged("profile.json");
  const std::filesystem::path staged_dir = std::filesystem::path(staged_profile).parent_path();
  for (std::size_t i = 1; i < profile_files.size(); ++i) staging.staged(profile_files[i]);
  profile.write(staged_dir.string());
  write_statistics_csv(statistics, skew, staging.staged("table1.csv"));
  staging.commit();
  progress.finish();

  std::cout << fmt::format("{}: profiled {} requests, held out {} (split {}, seed {})\n", trace_path,
                           trace.requests() - held, held, split, seed);
  std::cout << "layer  predictor        F1 p25/p50/p75      cum top-k hotness p50  max non-top-k p50  load "
               "max/mean\n";
  for (const AffinityStatistics& s : statistics)
    if (s.predictor != "popularity")
      std::cout << fmt::format(
          "{:>5}  {:<15} {:.3f}/{:.3f}/{:.3f}   {:.3f}                  {:.3f}              {:.3f}\n",
          s.layer, s.predictor, s.f1.p25, s.f1.p50, s.f1.p75, s.cumulative_hotness.p50,
          s.max_other_hotness.p50, skew[s.layer]);
  std::cout << fmt::format("Tables in {}/ ({:.2f} s)\n", out_dir, seconds_since(started));
  return 0;
}

int trace_fit_command(const SplitTraceOptions& options) {
  const std::string& trace_path = options.trace;
  const std::string& out_dir = options.out;
  const double split = options.split;
  const auto seed = static_cast<std::uint64_t>(options.seed);
  const auto started = std::chrono::steady_clock::now();
  OutputStaging staging(out_dir, one_of({"fit.yaml", "fit_report.csv", "fit_summary.json"}), {trace_path});
  ProgressLine progress("trace fit", options.progress);
  const auto [trace, held_out] = load_split(trace_path, split, seed, "trace fit");
  const RoutingFit fit = fit_synthetic_routing(trace, held_out, seed, progress.callback());

  write_text_file(
      staging.staged("fit.yaml"),
      fmt::format("# semsim trace fit {} --split {} --seed {} (model {}): paste under a scenario's "
                  "workload:\n# per-layer lists resample to other models (workloads/ROUTING_FIT.md)\n{}",
                  trace_path, split, seed, trace.header().model, fit.params.to_yaml()));
  write_fit_report(fit, staging.staged("fit_report.csv"), staging.staged("fit_summary.json"));
  staging.commit();
  progress.finish();

  std::cout << fmt::format(
      "{}: fitted in {} evaluations; topics {} (boost {}), token skew {:.3f}, layer correlation {:.3f}\n",
      trace_path, fit.evaluations, fit.params.topics, fit.params.topic_boost, fit.params.token_skew,
      fit.params.layer_correlation);
  std::cout << "layer  load max/mean real/synth   F1 p50 real/synth\n";
  for (std::size_t l = 0; l < fit.real.load_skew.size(); ++l)
    std::cout << fmt::format(
        "{:>5}  {:.3f} / {:.3f}            {}\n", l, fit.real.load_skew[l], fit.synthetic.load_skew[l],
        fit.real.has_token_ids ? fmt::format("{:.3f} / {:.3f}", fit.real.f1_p50[l], fit.synthetic.f1_p50[l])
                               : "(no token ids)");
  std::cout << fmt::format("Parameters and report in {}/ ({:.1f} s)\n", out_dir, seconds_since(started));
  return 0;
}

// The options of `semsim trace cluster`.
struct ClusterOptions {
  std::string trace;
  int clusters = 0;
  long long seed = 1;
  int restarts = 10;
  std::string out;
};

// Topic clusters of a trace's requests by their words (workloads/REQUEST_CLUSTERING.md): one subset
// trace per cluster, the request -> cluster assignment, each cluster's characteristic words and how
// well the clusters separate.
int trace_cluster_command(const ClusterOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  // An earlier run into the folder may have had more clusters: their traces are its outputs too.
  OutputStaging staging(o.out,
                        [](const std::string& name) {
                          static const std::regex kClusterTrace(R"(cluster-[0-9]+\.semtrace)");
                          return name == "assignment.csv" || name == "top_words.csv" ||
                                 name == "clustering.json" || std::regex_match(name, kClusterTrace);
                        },
                        {o.trace});
  const RoutingTrace trace = load_trace(o.trace);
  const RequestWords words = request_words(trace, o.trace);
  RequestClusters clusters;
  try {
    clusters = cluster_requests(words.sets, words.words.size(),
                                {o.clusters, static_cast<std::uint64_t>(o.seed), o.restarts});
  } catch (const InputError& e) {
    throw InputError(fmt::format("--clusters {} on {}: {}", o.clusters, o.trace, e.what()));
  }
  auto number = [](double value) { return std::isnan(value) ? std::string() : fmt::format("{:.6f}", value); };

  nlohmann::ordered_json j;
  j["trace"] = o.trace;
  j["method"] =
      "spherical k-means over TF-IDF vectors of each request's set of normalized token texts, k-means++ "
      "seeding";
  j["clusters"] = o.clusters;
  j["seed"] = o.seed;
  j["restarts"] = o.restarts;
  j["requests"] = trace.requests();
  j["iterations"] = clusters.iterations;
  j["objective"] = clusters.objective;
  j["within_similarity"] = clusters.within_similarity;
  j["between_similarity"] = clusters.between_similarity;
  std::string assignment = "request,cluster,similarity\n";
  for (std::size_t r = 0; r < trace.requests(); ++r)
    assignment += fmt::format("{},{},{:.6f}\n", r, clusters.cluster[r], clusters.similarity[r]);
  std::string top = "cluster,rank,word,weight,share_in_cluster,share_elsewhere\n";
  std::string report;
  for (int c = 0; c < o.clusters; ++c) {
    std::vector<bool> keep(trace.requests());
    for (std::size_t r = 0; r < trace.requests(); ++r) keep[r] = clusters.cluster[r] == c;
    const std::string file = fmt::format("cluster-{}.semtrace", c);
    write_trace(subset_trace(trace, keep), staging.staged(file));
    std::vector<std::string> top_words;
    for (std::size_t i = 0; i < clusters.top_words[c].size(); ++i) {
      const ClusterWord& w = clusters.top_words[c][i];
      top_words.push_back(words.words[w.word]);
      top +=
          csv_line({std::to_string(c), std::to_string(i + 1), escape_token_text(words.words[w.word], false),
                    number(w.weight), number(w.share_in_cluster), number(w.share_elsewhere)}) +
          "\n";
    }
    nlohmann::ordered_json cluster;
    cluster["cluster"] = c;
    cluster["file"] = file;
    cluster["requests"] = clusters.sizes[c];
    cluster["routed_tokens"] = routed_tokens(trace, keep);
    cluster["within_similarity"] = clusters.within_cluster_similarity[c];
    cluster["top_words"] = top_words;
    j["per_cluster"].push_back(cluster);
    std::vector<std::string> shown;
    for (const std::string& word : top_words) shown.push_back(escape_token_text(word));
    report += fmt::format("  cluster {}: {} requests, {} routed tokens, within {}; top words: {}\n", c,
                          clusters.sizes[c], routed_tokens(trace, keep),
                          number(clusters.within_cluster_similarity[c]), fmt::join(shown, " "));
  }
  write_text_file(staging.staged("assignment.csv"), assignment);
  write_text_file(staging.staged("top_words.csv"), top);
  write_text_file(staging.staged("clustering.json"), j.dump(2) + "\n");
  staging.commit();

  std::cout << fmt::format(
      "{}: {} requests in {} clusters (spherical k-means over TF-IDF of their words, seed {}, best of {} "
      "seedings, {} iterations)\n  mean cosine similarity of two requests: within a cluster {}, across "
      "clusters {}\n{}Clusters in {}/ ({:.2f} s)\n",
      o.trace, trace.requests(), o.clusters, o.seed, o.restarts, clusters.iterations,
      number(clusters.within_similarity), number(clusters.between_similarity), report, o.out,
      seconds_since(started));
  return 0;
}

void add_split_trace_options(CLI::App& command, SplitTraceOptions& options) {
  command.add_option("trace", options.trace, "semsim trace (.semtrace or .semtrace.txt[.gz])")->required();
  command.add_option("--split", options.split, "held-out fraction of requests")
      ->check(real_range(0.01, 0.99));
  command.add_option("--seed", options.seed, "seed of the split (and of the fit)")
      ->check(CLI::Range(0LL, 1LL << 62));
  command.add_option("--out", options.out, "output folder")->required();
  add_progress_option(command, options.progress);
}

}  // namespace

void add_trace_commands(CommandLine& cli) {
  CLI::App* trace =
      cli.add_group("trace", "routing traces: import from other tools, fit a synthetic generator, cluster");

  auto import = std::make_shared<ImportOptions>();
  CLI::App* import_command = cli.add(
      "import", "convert a routing dump into a checked semsim trace",
      [import] { return trace_import_command(*import); }, trace);
  import_command->add_option("--from", import->format, "deepseek-csv | llama4-json | mixtral-jsonl | sglang")
      ->required();
  import_command->add_option("input", import->input, "file or folder to import")->required();
  import_command->add_option("--model", import->model, "model preset the routing must match")->required();
  import_command->add_option("--out", import->out, "output trace: .semtrace (binary) or .semtrace.txt[.gz]")
      ->required();
  add_progress_option(*import_command, import->progress);

  auto fit = std::make_shared<SplitTraceOptions>();
  CLI::App* fit_command = cli.add(
      "fit", "fit the synthetic generator to a trace; writes params + report",
      [fit] { return trace_fit_command(*fit); }, trace);
  add_split_trace_options(*fit_command, *fit);

  struct SynthOptions {
    ScenarioArguments scenario;
    int requests = 1000;
    int first_request = 0;
    std::string out;
  };
  auto synth = std::make_shared<SynthOptions>();
  CLI::App* synth_command = cli.add(
      "synth", "record the prompts of a synthetic-routing scenario's requests as a trace",
      [synth] {
        return trace_synth_command(synth->scenario, synth->requests, synth->first_request, synth->out);
      },
      trace);
  add_scenario_arguments(*synth_command, synth->scenario);
  synth_command->add_option("--requests", synth->requests, "requests to record (default 1000)")
      ->check(CLI::Range(1, 10000000));
  synth_command
      ->add_option("--first-request", synth->first_request,
                   "id of the first recorded request (default 0); beyond a run's requests, the "
                   "trace holds requests that run never sees")
      ->check(CLI::Range(0, 100000000));
  synth_command->add_option("--out", synth->out, "output trace: .semtrace (binary) or .semtrace.txt[.gz]")
      ->required();

  auto cluster = std::make_shared<ClusterOptions>();
  CLI::App* cluster_command = cli.add(
      "cluster", "topic clusters of a trace's requests by their words; one subset trace per cluster",
      [cluster] { return trace_cluster_command(*cluster); }, trace);
  cluster_command->add_option("trace", cluster->trace, "semsim trace with token identities")->required();
  cluster_command->add_option("--clusters", cluster->clusters, "number of clusters K (1 .. requests)")
      ->required()
      ->check(CLI::Range(1, 1 << 20));
  cluster_command->add_option("--seed", cluster->seed, "seed of the k-means++ seedings (default 1)")
      ->check(CLI::Range(0LL, 1LL << 62));
  cluster_command->add_option("--restarts", cluster->restarts, "seedings tried, the best kept (default 10)")
      ->check(CLI::Range(1, 1000));
  cluster_command->add_option("--out", cluster->out, "output folder")->required();

  auto profile = std::make_shared<SplitTraceOptions>();
  CLI::App* profile_app = cli.add("profile", "token-expert affinity tables and Table-1 statistics of a trace",
                                  [profile] { return profile_command(*profile); });
  add_split_trace_options(*profile_app, *profile);
}

}  // namespace semsim
