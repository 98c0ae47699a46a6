#pragma once
// Small measured tables written by the tests themselves: aiconfigurator's per-kernel CSV tables
// (plain, or gzip for a name ending in .gz) and nccl-tests logs, with times that follow simple laws,
// and a fixture database of every table kind the importer reads.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "models/compressed_file.hpp"

namespace semsim::test {

// One row of a table: column -> value; the columns it leaves out keep their kind's defaults.
using TableRow = std::map<std::string, std::string>;

// Every column of a table kind in the order the tests write them, each with its default value.
inline const std::vector<std::pair<std::string, std::string>>& table_columns(const std::string& kind) {
  using Columns = std::vector<std::pair<std::string, std::string>>;
  static const std::map<std::string, Columns> kinds = [] {
    auto with_provenance = [](const std::string& op, const std::string& source, const std::string& version,
                              Columns columns) {
      Columns all{{"framework", "SGLang"},
                  {"version", version},
                  {"device", "NVIDIA H200"},
                  {"op_name", op},
                  {"kernel_source", source}};
      all.insert(all.end(), columns.begin(), columns.end());
      return all;
    };
    const Columns mla{{"mla_dtype", "bfloat16"},
                      {"kv_cache_dtype", "bfloat16"},
                      {"num_heads", "16"},
                      {"batch_size", "1"},
                      {"isl", "128"},
                      {"tp_size", "1"},
                      {"step", "0"},
                      {"latency", "0.01"}};
    const Columns attention{
        {"batch_size", "1"}, {"isl", "128"},       {"num_heads", "32"},        {"num_key_value_heads", "4"},
        {"head_dim", "128"}, {"beam_width", "1"},  {"attn_dtype", "bfloat16"}, {"kv_cache_dtype", "bfloat16"},
        {"step", "0"},       {"window_size", "0"}, {"latency", "0.01"}};
    const Columns deepep{{"node_num", "1"},
                         {"hidden_size", "7168"},
                         {"num_token", "128"},
                         {"num_topk", "8"},
                         {"num_experts", "256"}};
    Columns low_latency = deepep, normal = deepep;
    low_latency.insert(low_latency.end(), {{"dispatch_avg_t_us", "100"}, {"combine_avg_t_us", "150"}});
    normal.insert(normal.end(), {{"dispatch_sms", "24"},
                                 {"combine_sms", "24"},
                                 {"dispatch_transmit_us", "300"},
                                 {"combine_transmit_us", "400"}});
    return std::map<std::string, Columns>{
        {"gemm_perf",
         with_provenance(
             "gemm", "deep_gemm", "0.5.0",
             {{"gemm_dtype", "bfloat16"}, {"m", "1"}, {"n", "4096"}, {"k", "4096"}, {"latency", "0.01"}})},
        {"moe_perf", with_provenance("moe", "sglang_fused_moe", "0.5.0",
                                     {{"moe_dtype", "bfloat16"},
                                      {"num_tokens", "1"},
                                      {"hidden_size", "2048"},
                                      {"inter_size", "1408"},
                                      {"topk", "6"},
                                      {"num_experts", "64"},
                                      {"moe_tp_size", "1"},
                                      {"moe_ep_size", "1"},
                                      {"distribution", "balanced"},
                                      {"latency", "0.01"}})},
        {"context_mla_perf", with_provenance("mla_context", "flashinfer", "0.5.0", mla)},
        {"generation_mla_perf", with_provenance("mla_generation", "flashinfer", "0.5.0", mla)},
        {"context_attention_perf", with_provenance("attention_context", "fa3", "0.5.0", attention)},
        {"generation_attention_perf", with_provenance("attention_generation", "fa3", "0.5.0", attention)},
        {"nccl_perf",
         with_provenance(
             "all_reduce", "NCCL", "2.28.7",
             {{"nccl_dtype", "half"}, {"num_gpus", "8"}, {"message_size", "1024"}, {"latency", "0.01"}})},
        {"wideep_deepep_ll_perf", with_provenance("deepep_ll", "deepep", "0.5.0", low_latency)},
        {"wideep_deepep_normal_perf", with_provenance("deepep_normal", "deepep", "0.5.0", normal)},
    };
  }();
  return kinds.at(kind);
}

// The header line of a table kind.
inline std::string table_header(const std::string& kind) {
  std::string header;
  for (const auto& [column, value] : table_columns(kind)) header += (header.empty() ? "" : ",") + column;
  return header;
}

// One line of a table kind: `row`'s values, the defaults elsewhere.
inline std::string table_line(const std::string& kind, const TableRow& row) {
  for (const auto& [column, value] : row)
    if (std::find_if(table_columns(kind).begin(), table_columns(kind).end(),
                     [&column = column](const auto& c) { return c.first == column; }) ==
        table_columns(kind).end())
      throw std::invalid_argument("table_line: " + kind + " has no column " + column);
  std::string line;
  for (const auto& [column, value] : table_columns(kind)) {
    const auto given = row.find(column);
    line += (line.empty() ? "" : ",") + (given == row.end() ? value : given->second);
  }
  return line;
}

// Writes `text` to `path`: gzip-compressed when the name ends in .gz.
inline void write_text(const std::string& path, const std::string& text) {
  TextWriter writer(path);
  writer.buffer() = text;
  writer.close();
}

// Writes `rows` as table `kind` to DIR/KIND`suffix` (".csv" or ".csv.gz"); returns the path.
inline std::string write_table(const std::string& dir, const std::string& kind,
                               const std::vector<TableRow>& rows, const std::string& suffix = ".csv") {
  std::string text = table_header(kind) + "\n";
  for (const TableRow& row : rows) text += table_line(kind, row) + "\n";
  const std::string path = dir + "/" + kind + suffix;
  write_text(path, text);
  return path;
}

inline std::string number(double value) {
  return fmt::format("{}", value);
}

// The GEMM shapes of the fixture database: DeepSeek-V2-Lite's LM head (n = vocabulary, k = hidden)
// and three shapes no preset model has.
inline const std::vector<std::pair<long long, long long>>& fixture_gemm_shapes() {
  static const std::vector<std::pair<long long, long long>> shapes{
      {102400, 2048}, {4096, 4096}, {8192, 2048}, {1024, 8192}};
  return shapes;
}

// Milliseconds of an m x k by k x n GEMM in the fixture: 5 us of launch, then 600 TFLOP/s.
inline double fixture_gemm_ms(double m, double n, double k) {
  return (5e-6 + 2 * m * n * k / 600e12) * 1e3;
}

// The fixture rows of `kind`: enough points per shape for a curve, plus rows the importer skips
// (a dtype the simulator does not model, beam search, DeepEP across nodes).
inline std::vector<TableRow> fixture_rows(const std::string& kind) {
  std::vector<TableRow> rows;
  if (kind == "gemm_perf") {
    for (const auto& [n, k] : fixture_gemm_shapes())
      for (const long long m : {1, 8, 64, 512, 4096})
        rows.push_back({{"m", number(m)},
                        {"n", number(n)},
                        {"k", number(k)},
                        {"latency", number(fixture_gemm_ms(m, n, k))}});
    rows.push_back({{"gemm_dtype", "int4_wo"}, {"m", "8"}});
  } else if (kind == "moe_perf") {
    // DeepSeek-V2-Lite's experts over 64, 32 and 8 local experts (EP 1, 2, 8).
    for (const int ep : {1, 2, 8})
      for (const int tokens : {1, 16, 128, 1024})
        rows.push_back({{"moe_ep_size", number(ep)},
                        {"num_tokens", number(tokens)},
                        {"latency", number((8 + 32.0 / ep + tokens * 6.0 / ep * 0.02) * 1e-3)}});
  } else if (kind == "context_mla_perf" || kind == "context_attention_perf") {
    for (const int batch : {1, 4})
      for (const int isl : {128, 1024, 4096})
        rows.push_back({{"batch_size", number(batch)},
                        {"isl", number(isl)},
                        {"latency", number(0.01 + batch * 1e-9 * isl * isl)}});
    if (kind == "context_attention_perf") rows.push_back({{"beam_width", "2"}});
  } else if (kind == "generation_mla_perf" || kind == "generation_attention_perf") {
    for (const int batch : {1, 8})
      for (const int isl : {128, 1024, 4096})
        rows.push_back({{"batch_size", number(batch)},
                        {"isl", number(isl)},
                        {"step", "1"},
                        {"latency", number(0.01 + batch * 1e-6 * isl)}});
  } else if (kind == "nccl_perf") {
    for (const std::string op : {"all_reduce", "alltoall"})
      for (double elements = 256; elements <= (1 << 26); elements *= 4)
        rows.push_back(
            {{"op_name", op},
             {"message_size", number(elements)},
             {"latency", number((0.015 + elements * 2 / 300e9 * 1e3) * (op == "alltoall" ? 1.2 : 1.0))}});
  } else if (kind == "wideep_deepep_ll_perf" || kind == "wideep_deepep_normal_perf") {
    const bool low_latency = kind == "wideep_deepep_ll_perf";
    for (const int tokens : {16, 64, 128, 512}) {
      TableRow row{{"num_token", number(tokens)}};
      row[low_latency ? "dispatch_avg_t_us" : "dispatch_transmit_us"] = number(20 + 0.5 * tokens);
      row[low_latency ? "combine_avg_t_us" : "combine_transmit_us"] = number(25 + 0.8 * tokens);
      rows.push_back(row);
    }
    rows.push_back({{"node_num", "2"}});
  } else {
    throw std::invalid_argument("fixture_rows: no fixture for " + kind);
  }
  return rows;
}

// Writes the fixture table of each of `kinds` to `dir`; returns their paths.
inline std::vector<std::string> write_fixture_tables(const std::string& dir,
                                                     const std::vector<std::string>& kinds,
                                                     const std::string& suffix = ".csv") {
  std::vector<std::string> paths;
  for (const std::string& kind : kinds) paths.push_back(write_table(dir, kind, fixture_rows(kind), suffix));
  return paths;
}

// The time of `bytes` in the fixture's nccl-tests logs, in microseconds: exact in two decimals, as
// the logs print it.
inline double nccl_tests_us(double bytes) {
  return 20 + bytes / 4096;
}

// One data row of an nccl-tests log: out-of-place and in-place times `us` of `bytes` in float.
inline std::string nccl_tests_row(double bytes, double us, const std::string& redop) {
  const double gbps = bytes > 0 ? bytes / us / 1e3 : 0;
  return fmt::format(
      "{:>12} {:>13} {:>9} {:>7} {:>7} {:>8.2f} {:>7.2f} {:>7.2f} {:>6} {:>8.2f} {:>7.2f} {:>7.2f} {:>6}",
      bytes, bytes / 4, "float", redop, -1, us, gbps, gbps, 0, us, gbps, gbps, 0);
}

// An nccl-tests log as nccl-tests 2.17 writes it, over `ranks` H200s of one node: its header,
// NCCL's own version line (NCCL_DEBUG=VERSION), the result table from 0 bytes to 64 MiB, and the
// footer. `collective` is the binary's name (all_reduce_perf, alltoall_perf), "" for a log
// without the "Collective test starting" line.
inline std::string nccl_tests_log(const std::string& collective, int ranks,
                                  const std::vector<std::string>& rows_after_the_table = {}) {
  std::string log = "# nccl-tests version 2.17.6 nccl-headers=22807 nccl-library=22807\n";
  if (!collective.empty()) log += "# Collective test starting: " + collective + "\n";
  log += fmt::format(
      "# nThread 1 nGpus 1 minBytes 0 maxBytes 67108864 step: 4(factor) warmup iters: 5 iters: 20 agg iters: "
      "1 "
      "validation: 1 graph: 0\n#\n# Using devices\n");
  for (int rank = 0; rank < ranks; ++rank)
    log +=
        fmt::format("#  Rank {:2} Group  0 Pid {:6} on     node-a device {:2} [0000:{:02x}:00] NVIDIA H200\n",
                    rank, 4100 + rank, rank, 0x18 + rank);
  log += "NCCL version 2.28.7+cuda12.9\n";
  log +=
      "#\n"
      "#                                                              out-of-place                       "
      "in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  "
      "busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s) "
      " "
      "(GB/s)\n";
  const std::string redop = collective == "alltoall_perf" ? "none" : "sum";
  log += nccl_tests_row(0, 0.25, redop) + "\n";
  for (double bytes = 1024; bytes <= (1 << 26); bytes *= 4)
    log += nccl_tests_row(bytes, nccl_tests_us(bytes), redop) + "\n";
  for (const std::string& row : rows_after_the_table) log += row + "\n";
  log += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 95.2\n#\n";
  if (!collective.empty()) log += "# Collective test concluded: " + collective + "\n";
  return log;
}

}  // namespace semsim::test
