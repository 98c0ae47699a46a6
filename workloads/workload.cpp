#include "workloads/workload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "models/compressed_file.hpp"
#include "models/input_limits.hpp"
#include "workloads/counter_rng.hpp"
#include "workloads/routing_profile.hpp"
#include "workloads/text_table.hpp"

namespace semsim {
namespace {

// workload.requests with requests_from: the log's usable requests by default, never more than it
// holds.
int read_requests_from_log(const YamlInput& in, const RequestLog& log) {
  const int usable = static_cast<int>(log.requests.size());
  int requests = usable;
  if (const auto given = in.optional("requests")) {
    requests = static_cast<int>(given->as_int_in(1, limits::kRequests));
    if (requests > usable)
      given->fail(fmt::format("{} requests, but request log '{}' holds {} usable ({} of its {} skipped)",
                              requests, log.file, usable, log.skipped, log.rows));
  }
  return requests;
}

}  // namespace

WorkloadSpec WorkloadSpec::from_yaml(const YamlInput& in, const std::string& base_dir) {
  in.expect_map({"requests", "seed", "concurrency", "arrival", "input_len", "output_len", "routing",
                 "requests_from", "prefix", "sessions"});
  WorkloadSpec w;
  w.seed = static_cast<std::uint64_t>(in.get_int_in("seed", 1, 0, (1LL << 62)));
  if (const auto prefix = in.optional("prefix")) w.prefix = SharedPrefixes::from_yaml(*prefix);
  if (const auto sessions = in.optional("sessions")) {
    // A session's turns arrive by their think times and carry the conversation's own prompt tokens.
    if (in.has("requests_from") || in.has("concurrency"))
      sessions->fail(
          fmt::format("sessions time each turn by its think time: remove workload.{} (or workload.sessions)",
                      in.has("requests_from") ? "requests_from" : "concurrency"));
    const auto routing = in.optional("routing");
    if (routing && routing->has("source") && routing->required("source").as_string() == "trace")
      sessions->fail(
          "sessions build each turn's prompt from the conversation so far; a replayed trace gives its "
          "own prompts (routing.source: trace): use synthetic routing, or remove workload.sessions");
    w.sessions = Sessions::from_yaml(*sessions, base_dir);
  }
  if (const auto log = in.optional("requests_from")) {
    if (const auto concurrency = in.optional("concurrency"))
      concurrency->fail(
          "a request log gives each request's arrival time (workload.requests_from): a closed loop "
          "(workload.concurrency) cannot replay it; remove one of the two");
    for (const char* key : {"arrival", "input_len", "output_len"})
      if (in.has(key))
        in.required(key).fail(
            "each request's arrival time and lengths come from workload.requests_from; "
            "remove this key");
    w.request_log = std::make_shared<const RequestLog>(load_request_log(*log, base_dir));
    if (w.prefix.on() && w.request_log->has_hash_ids)
      in.required("prefix").fail(fmt::format(
          "request log '{}' gives each request's prefix blocks (hash_ids): remove workload.prefix",
          w.request_log->file));
    w.requests = read_requests_from_log(in, *w.request_log);
    // The simulated requests' lengths, as distributions: they bound the KV cache a request may need.
    w.input_len.kind = w.output_len.kind = LengthDistribution::Kind::kFile;
    for (int i = 0; i < w.requests; ++i) {
      w.input_len.samples.push_back(w.request_log->requests[i].input_tokens);
      w.output_len.samples.push_back(w.request_log->requests[i].output_tokens);
    }
  } else if (const auto concurrency = in.optional("concurrency")) {
    if (in.has("arrival"))
      in.required("arrival").fail(
          "workload.concurrency sends each request when an earlier one finishes (a closed loop): "
          "remove workload.arrival, or workload.concurrency for an open loop");
    w.concurrency = static_cast<int>(concurrency->as_int_in(1, limits::kRequests));
    w.requests = static_cast<int>(in.required("requests").as_int_in(1, limits::kRequests));
  } else {
    w.requests = static_cast<int>(in.required("requests").as_int_in(1, limits::kRequests));
    w.arrival = ArrivalProcess::from_yaml(in.required("arrival"), base_dir);
  }
  const auto routing = in.optional("routing");
  if (routing && routing->required("source").as_choice({"synthetic", "trace"}) == "trace") {
    routing->expect_map({"source", "file", "decode", "held_out"});
    const YamlInput file = routing->required("file");
    w.trace_file_as_written = file.as_string();
    w.trace_file = resolve_relative(w.trace_file_as_written, base_dir);
    if (const auto why = why_not_a_regular_file(w.trace_file))
      file.fail("trace file '" + w.trace_file + "' " + *why);
    w.trace = std::make_shared<const RoutingTrace>(load_trace(w.trace_file));
    w.trace_hash = trace_content_hash(*w.trace);
    w.trace_requests = w.trace->requests();
    if (const auto held_out = routing->optional("held_out")) {
      // Replay only what `semsim profile --split F --seed S` held out, so a run evaluates a plan on
      // requests its profile never saw.
      held_out->expect_map({"split", "seed"});
      w.held_out_split = held_out->required("split").as_double_in(0.01, 0.99);
      w.held_out_seed = static_cast<std::uint64_t>(held_out->get_int_in("seed", 1, 0, (1LL << 62)));
      // A one-request trace holds nothing out (its one request is the profile's): no requests to replay.
      if (w.trace->requests() < 2)
        held_out->fail(
            fmt::format("trace '{}' has {} request(s): holding some out needs at least 2 (one to "
                        "profile, one to replay)",
                        w.trace_file_as_written, w.trace->requests()));
      w.replayed = held_out_requests(w.trace->requests(), w.held_out_split, w.held_out_seed);
      w.trace = std::make_shared<const RoutingTrace>(subset_trace(*w.trace, w.replayed));
    }
    if (const auto decode = routing->optional("decode")) {
      const auto& names = trace_decode_model_names();
      w.decode_model = static_cast<TraceDecodeModel>(
          std::find(names.begin(), names.end(), decode->as_choice(names)) - names.begin());
    }
    if (w.request_log) return w;
    // Length distributions over the trace's requests: they bound the KV cache a request may need.
    LengthDistribution input_lengths, output_lengths;
    input_lengths.kind = output_lengths.kind = LengthDistribution::Kind::kFile;
    for (std::size_t r = 0; r < w.trace->requests(); ++r) {
      input_lengths.samples.push_back(w.trace->request(r).input_tokens);
      output_lengths.samples.push_back(w.trace->request(r).output_tokens);
    }
    w.input_len_from_trace = !in.has("input_len");
    w.input_len = w.input_len_from_trace ? input_lengths
                                         : LengthDistribution::from_yaml(in.required("input_len"), base_dir);
    w.output_len_from_trace = !in.has("output_len");
    w.output_len = w.output_len_from_trace
                       ? output_lengths
                       : LengthDistribution::from_yaml(in.required("output_len"), base_dir);
    return w;
  }
  if (routing) w.synthetic = SyntheticRoutingParams::from_yaml(*routing);
  if (w.request_log) return w;
  w.input_len = LengthDistribution::from_yaml(in.required("input_len"), base_dir);
  w.output_len = LengthDistribution::from_yaml(in.required("output_len"), base_dir);
  if (w.sessions.on && w.longest_prompt() > LengthDistribution::kMaxLength)
    in.required("sessions")
        .required("turns")
        .fail(fmt::format(
            "a session's last turn could carry a {}-token prompt ({} turns of input_len and output_len at "
            "their longest), more than the {} a workload may give",
            w.longest_prompt(), w.sessions.turns.upper_bound(), LengthDistribution::kMaxLength));
  return w;
}

std::string WorkloadSpec::routing_description() const {
  if (!trace) return "synthetic";
  return "trace " + trace_file_as_written +
         (held_out_split > 0 ? fmt::format(" (held-out {} of split {}, seed {})", trace->requests(),
                                           held_out_split, held_out_seed)
                             : std::string()) +
         " (decode: " + trace_decode_model_names()[static_cast<std::size_t>(decode_model)] + ")";
}

void check_routing_matches(const WorkloadSpec& spec, const MoeModel& model, const YamlInput& workload) {
  if (!spec.trace || model.dense()) return;  // a dense model refuses any trace (sim/scenario_checks.hpp)
  const TraceHeader& h = spec.trace->header();
  if (h.moe_layers != model.moe_layers() || h.experts != model.routed_experts || h.top_k != model.top_k)
    workload.required("routing").required("file").fail(fmt::format(
        "trace '{}' routes {} MoE layers x top-{} of {} experts (model {}), but '{}' has {} x top-{} of {}",
        spec.trace_file, h.moe_layers, h.top_k, h.experts, h.model, model.name, model.moe_layers(),
        model.top_k, model.routed_experts));
}

std::vector<Request> generate_requests(const WorkloadSpec& spec) {
  // Separate streams so that changing, say, the output lengths leaves arrivals untouched.
  std::mt19937_64 arrival_rng(hash_keys(spec.seed, 1));
  std::mt19937_64 input_rng(hash_keys(spec.seed, 2));
  std::mt19937_64 output_rng(hash_keys(spec.seed, 3));
  std::mt19937_64 topic_rng(hash_keys(spec.seed, 4));
  const std::vector<double> arrivals =
      spec.concurrency > 0 ? std::vector<double>(static_cast<std::size_t>(spec.requests), 0.0)
      : spec.request_log   ? spec.request_log->arrival_times(spec.requests, arrival_rng)
                           : spec.arrival.arrival_times(spec.requests, arrival_rng);
  if (spec.sessions.on) {
    std::vector<Request> requests = session_requests(
        spec.sessions, static_cast<int>(arrivals.size()), arrivals, spec.input_len, spec.output_len,
        spec.seed, {input_rng, output_rng, topic_rng, spec.synthetic.topics});
    assign_shared_prefixes(spec.prefix, spec.seed, requests);
    return requests;
  }
  std::uniform_int_distribution<int> topic(0, spec.synthetic.topics - 1);
  std::vector<Request> requests(arrivals.size());
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    requests[i].id = static_cast<int>(i);
    requests[i].arrival = arrivals[i];
    if (spec.request_log) {
      requests[i].input_tokens = spec.request_log->requests[i].input_tokens;
      requests[i].output_tokens = spec.request_log->requests[i].output_tokens;
    } else if (spec.trace) {
      const TraceRequest& recorded = spec.trace->request(i % spec.trace->requests());
      requests[i].input_tokens =
          spec.input_len_from_trace ? recorded.input_tokens : spec.input_len.draw(input_rng);
      requests[i].output_tokens =
          spec.output_len_from_trace ? recorded.output_tokens : spec.output_len.draw(output_rng);
    } else {
      requests[i].input_tokens = spec.input_len.draw(input_rng);
      requests[i].output_tokens = spec.output_len.draw(output_rng);
    }
    requests[i].topic = topic(topic_rng);
    if (spec.request_log) requests[i].prefix_blocks = spec.request_log->requests[i].hash_ids;
  }
  if (spec.prefix.on()) assign_shared_prefixes(spec.prefix, spec.seed, requests);
  return requests;
}

std::unique_ptr<RoutingSource> make_routing_source(const WorkloadSpec& spec, const MoeModel& model) {
  if (spec.trace)
    return std::make_unique<TraceRouting>(spec.trace, spec.decode_model, hash_keys(spec.seed, 6));
  return std::make_unique<SyntheticRouting>(make_synthetic_routing(spec, model));
}

SyntheticRouting make_synthetic_routing(const WorkloadSpec& spec, const MoeModel& model) {
  return SyntheticRouting(spec.synthetic, model.moe_layers(), model.routed_experts, model.top_k,
                          hash_keys(spec.seed, 5), ExpertGroupLimit::of(model));
}

}  // namespace semsim
