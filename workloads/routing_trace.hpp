#pragma once
// semsim's own routing-trace format, version 1 (docs: workloads/TRACE_FORMAT.md). A trace holds,
// per request, its lengths and, per routed token, its vocabulary id (when known) and per MoE layer
// its top-k expert ids (and gate weights when known). Two forms of the same content:
// - text (".semtrace.txt", optionally ".gz"): line-oriented, readable, streamed line by line;
// - binary (".semtrace"): fixed-width little-endian arrays, memory-mapped when read.
// Every reader checks the content against the header (expert ids in range and distinct per token,
// k and layer counts, lengths) and reports violations as InputError naming the file and line/record.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/routing_source.hpp"

namespace semsim {

inline constexpr int kTraceFormatVersion = 1;

struct TraceHeader {
  std::string model;   // preset name the trace was checked against
  std::string source;  // free text: where the routing came from
  int moe_layers = 0;
  int experts = 0;
  int top_k = 0;
  bool gate_weights = false;  // every routed (token, layer) carries k weights
};

// What is recorded of one request. Prefill routing is all or nothing; decode routing is a prefix of
// the decode steps (decode token i is the input of decode step i, at position input_tokens + i).
struct TraceRequest {
  int input_tokens = 0;   // prompt length
  int output_tokens = 0;  // generated tokens (a decode trace records at most output_tokens - 1)
  bool prefill_routed = false;
  int decode_routed = 0;

  int routed_tokens() const { return (prefill_routed ? input_tokens : 0) + decode_routed; }
};

// One request's routed tokens as spans into a trace (or a reader's buffer).
struct TraceRequestView {
  TraceRequest request;
  std::span<const std::int32_t> token_ids;  // -1: identity unknown
  std::span<const ExpertId> experts;        // [token][layer][k]
  std::span<const float> weights;           // same shape, empty without gate weights
};

class RoutingTrace {
 public:
  const TraceHeader& header() const { return header_; }
  std::size_t requests() const { return requests_.size(); }
  std::size_t tokens() const { return token_ids_.size(); }
  const TraceRequest& request(std::size_t r) const { return requests_[r]; }
  std::int64_t first_token(std::size_t r) const {
    return first_token_[r];
  }  // index of r's first routed token
  TraceRequestView view(std::size_t r) const;
  std::span<const std::int32_t> token_ids() const { return token_ids_; }
  // Experts of routed token `token` (a global index) at MoE layer `layer`: top_k ids.
  const ExpertId* experts_of(std::int64_t token, int layer) const {
    return experts_.data() + (static_cast<std::size_t>(token) * header_.moe_layers + layer) * header_.top_k;
  }
  std::span<const ExpertId> all_experts() const { return experts_; }
  std::span<const float> all_weights() const { return weights_; }
  const std::vector<std::string>& vocabulary() const {
    return *vocabulary_;
  }  // id -> token text ("" unknown)

 private:
  friend class TraceBuilder;
  friend RoutingTrace map_binary_trace(const std::string& path);

  TraceHeader header_;
  std::vector<TraceRequest> requests_;
  std::vector<std::int64_t> first_token_;  // requests + 1 entries
  std::span<const std::int32_t> token_ids_;
  std::span<const ExpertId> experts_;
  std::span<const float> weights_;
  std::shared_ptr<const std::vector<std::string>> vocabulary_;
  std::shared_ptr<const void> storage_;  // owns what the spans point into (vectors or a mapping)
};

// Assembles a trace in memory, validating each request as it is added; `where` names the file and
// record for errors.
class TraceBuilder {
 public:
  explicit TraceBuilder(TraceHeader header);
  const TraceHeader& header() const { return header_; }
  void set_source(std::string source) { header_.source = std::move(source); }
  // Id of a token text, assigned in order of first appearance.
  std::int32_t token_id(const std::string& text);
  std::size_t vocabulary_size() const;
  // Adds a token id with a known text (text traces declare their vocabulary explicitly).
  void declare_token(std::int32_t id, const std::string& text, const std::string& where);
  void add(const TraceRequestView& request, const std::string& where);
  RoutingTrace build() &&;

 private:
  struct Storage;
  TraceHeader header_;
  std::shared_ptr<Storage> storage_;
};

// Checks a view against the header: sizes, expert ids in [0, experts) and distinct per (token,
// layer), finite weights, token ids in [-1, vocabulary). Throws InputError prefixed with `where`.
void validate_request(const TraceHeader& header, const TraceRequestView& view, std::size_t vocabulary,
                      const std::string& where);

// The requests of `trace` with keep[r] true, in order, with the same header and vocabulary ids.
RoutingTrace subset_trace(const RoutingTrace& trace, const std::vector<bool>& keep);

// What a trace records, hashed (models/content_hash.hpp): routing shape, requests, token ids, experts,
// gate weights and vocabulary texts, not the header's free text nor the file's form, so the text and
// binary forms of one trace hash alike. What profiles and placements name their trace by.
std::string trace_content_hash(const RoutingTrace& trace);

// Routed tokens of the requests with use[r] true (empty: all).
long long routed_tokens(const RoutingTrace& trace, const std::vector<bool>& use);

// Streaming read of either form (chosen by content: the binary magic, else text). `on_header` runs
// once before any request; a request's view is valid only during its callback, and `vocabulary`
// holds at least the texts of the ids seen so far.
void read_trace(const std::string& path, const std::function<void(const TraceHeader&)>& on_header,
                const std::function<void(const TraceRequestView&,
                                         const std::vector<std::string>& vocabulary)>& on_request);

// The whole trace in memory (the binary form is mapped, not copied).
RoutingTrace load_trace(const std::string& path);

// Writes `trace` in the form its file name asks for: ".semtrace" binary, ".semtrace.txt" or
// ".semtrace.txt.gz" text; anything else is an InputError.
void write_trace(const RoutingTrace& trace, const std::string& path);
bool is_trace_file_name(const std::string& path);

// Token texts in line-oriented files (text traces, profiles' tables, placement files) are
// percent-encoded so that a line splits on spaces and tabs: bytes below ' ', DEL, '%' and, unless
// `escape_spaces` is false, ' '. Unescaping throws InputError prefixed with `where`.
std::string escape_token_text(std::string_view text, bool escape_spaces = true);
std::string unescape_token_text(std::string_view text, const std::string& where);

}  // namespace semsim
