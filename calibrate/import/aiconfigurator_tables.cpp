#include "calibrate/import/aiconfigurator_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <string_view>

#include "models/compressed_file.hpp"
#include "models/csv.hpp"
#include "models/input_error.hpp"
#include "models/input_limits.hpp"

namespace semsim {
namespace {

// One row's fields by column name, with errors that point at the field.
class RowFields {
 public:
  RowFields(const MeasuredTable& table, const std::vector<std::string>& fields, int line)
      : table_(table), fields_(fields), line_(line) {}

  const std::string& text(std::string_view column) const { return fields_[index(column)]; }

  double number(std::string_view column) const {
    const auto value = parse_number(text(column));
    if (!value) fail(column, "expected a number, got '" + text(column) + "'");
    return *value;
  }
  // A latency in units of `unit_seconds` ("ms" 1e-3, "us" 1e-6), in seconds: in the range a
  // calibration profile holds (what `run` reads back), so that nothing imported is refused later.
  double seconds(std::string_view column, std::string_view unit, double unit_seconds) const {
    const double value = number(column) * unit_seconds;
    if (!limits::kMeasuredValue.contains(value))
      fail(column, fmt::format("expected a positive number in [{:g}, {:g}] ({}), got {}",
                               limits::kMeasuredValue.min / unit_seconds,
                               limits::kMeasuredValue.max / unit_seconds, unit, text(column)));
    return value;
  }
  long long count(std::string_view column, long long min = 1) const {
    const double value = number(column);
    if (value != std::floor(value) || value < static_cast<double>(min) || value > 1e12)
      fail(column, fmt::format("expected a whole number of at least {}, got '{}'", min, text(column)));
    return static_cast<long long>(value);
  }
  std::string choice(std::string_view column, const std::vector<std::string>& allowed) const {
    const std::string& value = text(column);
    if (std::find(allowed.begin(), allowed.end(), value) == allowed.end())
      fail(column, fmt::format("unknown value '{}' (expected one of: {}){}", value, fmt::join(allowed, ", "),
                               did_you_mean(value, allowed)));
    return value;
  }

  [[noreturn]] void fail(std::string_view column, const std::string& message) const {
    std::size_t character = 1;
    for (std::size_t i = 0; i < index(column); ++i) character += fields_[i].size() + 1;
    throw InputError(fmt::format("{}:{}:{}: column '{}': {}", table_.path, line_, character, column, message),
                     std::string(column));
  }

 private:
  std::size_t index(std::string_view column) const {
    return static_cast<std::size_t>(std::find(table_.columns.begin(), table_.columns.end(), column) -
                                    table_.columns.begin());
  }
  const MeasuredTable& table_;
  const std::vector<std::string>& fields_;
  int line_;
};

using RowMapper = std::function<void(const RowFields&, MeasuredRow&)>;

struct Schema {
  std::string kind;
  std::vector<std::string> keys;      // what was measured: no two rows may share these
  std::vector<std::string> measured;  // latency columns
  RowMapper map;
};

// The database's dtype names; those the simulator does not model map to "". Both MXFP4 MoE kernels
// (MXFP8 or BF16 activations) are MXFP4 weights: map_moe keeps them apart as implementations.
std::string kernel_dtype(const std::string& name) {
  if (name == "bfloat16" || name == "float16") return "bf16";
  if (name == "fp8" || name == "fp8_block" || name == "nvfp4") return name;
  if (name == "w4a8_mxfp4_mxfp8" || name == "w4a16_mxfp4") return "mxfp4";
  return "";
}

const std::vector<std::string> kDtypes{"bfloat16",    "float16",          "fp8",     "fp8_block",
                                       "w4a16_mxfp4", "w4a8_mxfp4_mxfp8", "int4_wo", "int8_wo",
                                       "nvfp4",       "w4afp8",           "int8"};

MeasuredPoint point(const RowFields& r, std::string kernel, std::string shape, std::string dtype, double x,
                    double y, double seconds) {
  MeasuredPoint p;
  p.kernel = std::move(kernel);
  p.shape = std::move(shape);
  p.dtype = std::move(dtype);
  p.implementation = r.text("kernel_source");
  p.x = x;
  p.y = y;
  p.seconds = seconds;
  return p;
}

void map_gemm(const RowFields& r, MeasuredRow& row) {
  const std::string dtype = kernel_dtype(r.choice("gemm_dtype", kDtypes));
  const double seconds = r.seconds("latency", "ms", 1e-3);
  const long long m = r.count("m"), n = r.count("n"), k = r.count("k");
  if (dtype.empty()) return void(row.skipped = "dtype not modelled");
  row.points.push_back(
      point(r, "gemm", fmt::format("n={} k={}", n, k), dtype, static_cast<double>(m), 0, seconds));
}

// Tokens of a `balanced` group batch that reach rank 0's experts [0, experts / ep): the collector
// routes token t to experts (t + j * stride) % experts, j < top_k, stride = ceil(experts / top_k)
// (t scaled by stride / tokens when tokens < stride).
long long balanced_rank0_tokens(long long tokens, long long top_k, long long experts, long long ep) {
  const long long stride = (experts + top_k - 1) / top_k, local = experts / ep;
  long long reached = 0;
  for (long long t = 0; t < tokens; ++t) {
    const long long first = tokens >= stride ? t : t * stride / tokens;
    for (long long j = 0; j < top_k; ++j)
      if ((first + j * stride) % experts < local) {
        ++reached;
        break;
      }
  }
  return reached;
}

// Rank 0 of an EP x TP group (the collector times it on one GPU): its experts / ep local experts,
// each FFN split tp ways. With EP the kernel computes every top-k slot of each token that reaches
// rank 0 (slots of remote experts land, weighted 0, on local expert 0), so `tokens` is those
// slots; under `balanced` routing they are counted exactly, under power-law routing (random, rank 0
// made the busiest) the axis is the group's mean, num_tokens * topk / ep.
void map_moe(const RowFields& r, MeasuredRow& row) {
  const std::string dtype = kernel_dtype(r.choice("moe_dtype", kDtypes));
  const double seconds = r.seconds("latency", "ms", 1e-3);
  const long long tokens = r.count("num_tokens"), hidden = r.count("hidden_size"),
                  ffn = r.count("inter_size");
  const long long top_k = r.count("topk"), experts = r.count("num_experts");
  const long long tp = r.count("moe_tp_size"), ep = r.count("moe_ep_size");
  const std::string distribution = r.choice("distribution", {"balanced", "power_law_1.01", "power_law_1.2"});
  if (experts % ep != 0)
    r.fail("moe_ep_size", fmt::format("{} experts do not split over {} ranks", experts, ep));
  if (ffn % tp != 0) r.fail("moe_tp_size", fmt::format("inter_size {} does not split {} ways", ffn, tp));
  if (top_k > experts) r.fail("topk", fmt::format("top-{} of {} experts", top_k, experts));
  if (tokens > (1 << 24)) r.fail("num_tokens", fmt::format("{} tokens is beyond any batch", tokens));
  if (dtype.empty()) return void(row.skipped = "dtype not modelled");
  const double slots = distribution == "balanced"
                           ? static_cast<double>(balanced_rank0_tokens(tokens, top_k, experts, ep) * top_k)
                           : static_cast<double>(tokens * top_k) / static_cast<double>(ep);
  if (!(slots > 0)) return void(row.skipped = "no token reaches rank 0");
  MeasuredPoint p = point(r, "moe_experts",
                          fmt::format("hidden={} ffn={} experts={} top_k={} distribution={}", hidden,
                                      ffn / tp, experts, top_k, distribution),
                          dtype, static_cast<double>(experts / ep), slots, seconds);
  // MXFP4 weights with BF16 activations: another kernel of the MXFP4 shape (the importer keeps the
  // MXFP8-activation one, as preferred_implementation orders them).
  if (r.text("moe_dtype") == "w4a16_mxfp4") p.implementation += " w4a16";
  row.points.push_back(std::move(p));
}

void map_mla(const RowFields& r, MeasuredRow& row, bool prefill) {
  const std::string dtype = kernel_dtype(r.choice("kv_cache_dtype", kDtypes));
  r.choice("mla_dtype", {"bfloat16", "float16"});
  const double seconds = r.seconds("latency", "ms", 1e-3);
  const long long heads = r.count("num_heads"), batch = r.count("batch_size"), isl = r.count("isl");
  const long long step = r.count("step", 0);
  r.count("tp_size");
  if (dtype.empty()) return void(row.skipped = "dtype not modelled");
  const double y = prefill ? static_cast<double>(isl) : static_cast<double>(isl + step);
  row.points.push_back(point(r, prefill ? "mla_prefill" : "mla_decode", fmt::format("heads={}", heads), dtype,
                             static_cast<double>(batch), y, seconds));
}

void map_gqa(const RowFields& r, MeasuredRow& row, bool prefill) {
  const std::string dtype = kernel_dtype(r.choice("kv_cache_dtype", kDtypes));
  const std::string compute = r.choice("attn_dtype", kDtypes);
  const double seconds = r.seconds("latency", "ms", 1e-3);
  const long long batch = r.count("batch_size"), isl = r.count("isl"), step = r.count("step", 0);
  const long long heads = r.count("num_heads"), kv_heads = r.count("num_key_value_heads");
  const long long head_dim = r.count("head_dim"), window = r.count("window_size", 0);
  if (r.count("beam_width") != 1) return void(row.skipped = "beam search not modelled");
  if (heads % kv_heads != 0)
    r.fail("num_key_value_heads",
           fmt::format("{} query heads do not group over {} KV heads", heads, kv_heads));
  // An FP8 KV cache runs FP8 attention (FA3 quantises Q itself) or dequantises in the kernel: both
  // are how serving runs an FP8 cache. FP8 compute over a BF16 cache is not.
  if (dtype.empty()) return void(row.skipped = "dtype not modelled");
  if (kernel_dtype(compute) != "bf16" && dtype == "bf16")
    return void(row.skipped = "FP8 attention over a BF16 cache not modelled");
  const double y = prefill ? static_cast<double>(isl) : static_cast<double>(isl + step);
  MeasuredPoint p =
      point(r, prefill ? "gqa_prefill" : "gqa_decode",
            fmt::format("heads={} kv_heads={} head_dim={} window={}", heads, kv_heads, head_dim, window),
            dtype, static_cast<double>(batch), y, seconds);
  // Triton's kernels were timed both ways over an FP8 cache: they are two implementations of one
  // shape, of which the importer keeps one (the dequantising one, as SGLang's Triton backend runs).
  if (dtype == "fp8" && kernel_dtype(compute) == "fp8" && p.implementation != "fa3")
    p.implementation += " fp8-compute";
  row.points.push_back(std::move(p));
}

void map_nccl(const RowFields& r, MeasuredRow& row) {
  const std::string op = r.choice("op_name", {"all_reduce", "all_gather", "reduce_scatter", "alltoall"});
  const std::string dtype = r.choice("nccl_dtype", {"half", "bfloat16", "float", "int8", "fp8"});
  const long long ranks = r.count("num_gpus", 2), elements = r.count("message_size");
  MeasuredPoint p = point(
      r, "nccl_" + (op == "alltoall" ? std::string("all_to_all") : op), fmt::format("ranks={}", ranks), dtype,
      static_cast<double>(elements) * nccl_element_bytes(dtype), 0, r.seconds("latency", "ms", 1e-3));
  p.ranks = static_cast<int>(ranks);
  row.points.push_back(std::move(p));
}

void map_deepep(const RowFields& r, MeasuredRow& row, bool low_latency) {
  const long long hidden = r.count("hidden_size"), tokens = r.count("num_token");
  const long long top_k = r.count("num_topk"), experts = r.count("num_experts");
  if (top_k > experts) r.fail("num_topk", fmt::format("top-{} of {} experts", top_k, experts));
  const long long nodes = r.count("node_num");
  const char* family = low_latency ? "deepep_ll_" : "deepep_normal_";
  for (const std::string phase : {"dispatch", "combine"}) {
    const std::string column = low_latency ? phase + "_avg_t_us" : phase + "_transmit_us";
    const double seconds = r.seconds(column, "us", 1e-6);
    const std::string shape = low_latency
                                  ? fmt::format("hidden={} experts={} top_k={}", hidden, experts, top_k)
                                  : fmt::format("hidden={} experts={} top_k={} sms={}", hidden, experts,
                                                top_k, r.count(phase + "_sms"));
    MeasuredPoint p = point(r, family + phase, shape, "bf16", static_cast<double>(tokens), 0, seconds);
    p.phase = phase;
    if (nodes == 1) row.points.push_back(std::move(p));
  }
  if (nodes != 1) row.skipped = "DeepEP across nodes not imported (one node's tables only)";
}

const std::vector<std::string> kProvenance{"framework", "version", "device", "op_name", "kernel_source"};

const std::vector<Schema>& schemas() {
  static const std::vector<Schema> all{
      {"gemm_perf", {"kernel_source", "gemm_dtype", "m", "n", "k"}, {"latency"}, map_gemm},
      {"moe_perf",
       {"kernel_source", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
        "moe_tp_size", "moe_ep_size", "distribution"},
       {"latency"},
       map_moe},
      {"context_mla_perf",
       {"kernel_source", "mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step"},
       {"latency"},
       [](const RowFields& r, MeasuredRow& row) { map_mla(r, row, true); }},
      {"generation_mla_perf",
       {"kernel_source", "mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step"},
       {"latency"},
       [](const RowFields& r, MeasuredRow& row) { map_mla(r, row, false); }},
      {"context_attention_perf",
       {"kernel_source", "batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "beam_width",
        "attn_dtype", "kv_cache_dtype", "step", "window_size"},
       {"latency"},
       [](const RowFields& r, MeasuredRow& row) { map_gqa(r, row, true); }},
      {"generation_attention_perf",
       {"kernel_source", "batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "beam_width",
        "attn_dtype", "kv_cache_dtype", "step", "window_size"},
       {"latency"},
       [](const RowFields& r, MeasuredRow& row) { map_gqa(r, row, false); }},
      {"nccl_perf", {"op_name", "nccl_dtype", "num_gpus", "message_size"}, {"latency"}, map_nccl},
      {"wideep_deepep_ll_perf",
       {"node_num", "hidden_size", "num_token", "num_topk", "num_experts"},
       {"dispatch_avg_t_us", "combine_avg_t_us"},
       [](const RowFields& r, MeasuredRow& row) { map_deepep(r, row, true); }},
      {"wideep_deepep_normal_perf",
       {"node_num", "hidden_size", "num_token", "num_topk", "num_experts", "dispatch_sms", "combine_sms"},
       {"dispatch_transmit_us", "combine_transmit_us"},
       [](const RowFields& r, MeasuredRow& row) { map_deepep(r, row, false); }},
  };
  return all;
}

std::string table_kind(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const std::string_view suffix : {".gz", ".csv"})
    if (name.ends_with(suffix)) name.resize(name.size() - suffix.size());
  return name;
}

}  // namespace

const std::vector<std::string>& aiconfigurator_table_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> names;
    for (const Schema& schema : schemas()) names.push_back(schema.kind);
    return names;
  }();
  return kinds;
}

double nccl_element_bytes(const std::string& dtype) {
  if (dtype == "int8" || dtype == "fp8") return 1;
  if (dtype == "float") return 4;
  return 2;
}

MeasuredTable read_aiconfigurator_table(const std::string& path, bool allow_repeats) {
  MeasuredTable table;
  table.path = path;
  table.kind = table_kind(path);
  const auto schema =
      std::find_if(schemas().begin(), schemas().end(), [&](const Schema& s) { return s.kind == table.kind; });
  if (schema == schemas().end())
    throw InputError(fmt::format("{}: not a table this importer knows ('{}'; expected one of: {}){}", path,
                                 table.kind, fmt::join(aiconfigurator_table_kinds(), ", "),
                                 did_you_mean(table.kind, aiconfigurator_table_kinds())));
  LineReader reader(path);
  std::string_view line;
  if (!reader.next(line)) throw InputError(path + ":1: empty table (expected a header line)");
  table.columns = split_csv_line(std::string(line));
  // A column named twice would be read from its first copy while the second says otherwise.
  for (std::size_t i = 0, character = 1; i < table.columns.size(); character += table.columns[i++].size() + 1)
    if (const auto first = std::find(table.columns.begin(), table.columns.begin() + i, table.columns[i]);
        first != table.columns.begin() + i)
      throw InputError(fmt::format("{}:1:{}: column '{}' appears twice (fields {} and {})", path, character,
                                   table.columns[i], first - table.columns.begin() + 1, i + 1),
                       table.columns[i]);
  // Keys, latencies and provenance, each once (kernel_source and op_name are keys of some kinds too).
  std::vector<std::string> required = schema->keys;
  for (const std::vector<std::string>* columns : {&schema->measured, &kProvenance})
    for (const std::string& column : *columns)
      if (std::find(required.begin(), required.end(), column) == required.end()) required.push_back(column);
  for (const std::string& column : required)
    if (std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end())
      throw InputError(fmt::format("{}:1: missing column '{}' (a {} table has: {})", path, column, table.kind,
                                   fmt::join(required, ", ")),
                       column);
  std::map<std::vector<std::string>, int> seen;  // key fields -> line
  std::map<std::string, std::set<std::string>> provenance;
  while (reader.next(line)) {
    if (line.empty()) continue;
    MeasuredRow row;
    row.line = reader.line_number();
    bool open_quote = false;
    row.fields = split_csv_line(std::string(line), &open_quote);
    if (open_quote || row.fields.size() != table.columns.size())
      throw InputError(fmt::format("{}:{}:1: expected {} fields, got {}{}", path, row.line,
                                   table.columns.size(), row.fields.size(),
                                   open_quote ? " (a quote is left open)" : ""));
    const RowFields fields(table, row.fields, row.line);
    schema->map(fields, row);
    std::vector<std::string> key;
    for (const std::string& column : schema->keys) key.push_back(fields.text(column));
    if (const auto [at, inserted] = seen.emplace(key, row.line); !inserted) {
      if (!allow_repeats)
        fields.fail(schema->keys.back(),
                    fmt::format("the same measurement as line {} ({} = {}); if the table holds repeated "
                                "measurements, import with --repeats to average them",
                                at->second, fmt::join(schema->keys, ", "), fmt::join(key, ", ")));
      ++table.repeats;
    }
    for (const std::string& column : kProvenance) provenance[column].insert(fields.text(column));
    table.rows.push_back(std::move(row));
  }
  for (auto& [column, values] : provenance) table.provenance[column] = {values.begin(), values.end()};
  return table;
}

}  // namespace semsim
