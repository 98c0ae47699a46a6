// Correctness of every path the suite times, on small inputs against CPU references in double
// precision: the kernels the project writes (activation, top-k, permute/unpermute, softmax inside
// attention) and the way the cuBLAS calls are laid out (TN GEMMs, grouped GEMMs, FP8).
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "calibrate/bench/attention.hpp"
#include "calibrate/bench/check.hpp"
#include "calibrate/bench/experts.hpp"
#include "calibrate/bench/gemm.hpp"
#include "calibrate/bench/tokens.hpp"

namespace semsim::bench {
namespace {

double silu(double x) {
  return x / (1.0 + std::exp(-x));
}

// Largest |actual - expected|, relative to the largest |expected| (the output's scale).
double max_error(const std::vector<float>& actual, const std::vector<double>& expected) {
  double worst = 0, scale = 1e-30;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::abs(actual[i] - expected[i]));
    scale = std::max(scale, std::abs(expected[i]));
  }
  return worst / scale;
}

// y[t][n] = sum_k x[t][k] w[n][k]
std::vector<double> reference_gemm(const std::vector<float>& w, const std::vector<float>& x, int n, int t,
                                   int k) {
  std::vector<double> y(static_cast<std::size_t>(n) * t);
  for (int row = 0; row < t; ++row)
    for (int col = 0; col < n; ++col) {
      double sum = 0;
      for (int i = 0; i < k; ++i) sum += double(x[row * k + i]) * w[col * k + i];
      y[row * n + col] = sum;
    }
  return y;
}

CheckResult gemm_check(BenchContext& c, DType type, const char* name) {
  const int n = 48, t = 16, k = 64;
  DeviceBuffer w = random_buffer(n * k, type, 21, 1.0f, c.stream),
               x = random_buffer(t * k, type, 22, 1.0f, c.stream);
  DeviceBuffer y(n * t * 2);
  weight_gemm(c, type == DType::kFp8 ? "fp8" : "bf16", w.get(), x.get(), y.get(), n, t, k);
  SEMSIM_CUDA(cudaStreamSynchronize(c.stream));
  const auto expected =
      reference_gemm(to_host_floats(w.get(), n * k, type), to_host_floats(x.get(), t * k, type), n, t, k);
  return {name, max_error(to_host_floats(y.get(), n * t, DType::kBf16), expected), 0.02, false, ""};
}

CheckResult swiglu_check(BenchContext& c) {
  const int rows = 3, ffn = 40;
  DeviceBuffer in = random_buffer(rows * 2 * ffn, DType::kBf16, 23, 3.0f, c.stream), out(rows * ffn * 2);
  swiglu(c, in.get(), out.get(), rows, ffn, DType::kBf16);
  SEMSIM_CUDA(cudaStreamSynchronize(c.stream));
  const auto x = to_host_floats(in.get(), rows * 2 * ffn, DType::kBf16);
  std::vector<double> expected;
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < ffn; ++i) expected.push_back(silu(x[r * 2 * ffn + i]) * x[r * 2 * ffn + ffn + i]);
  return {"swiglu", max_error(to_host_floats(out.get(), rows * ffn, DType::kBf16), expected), 0.01, false,
          ""};
}

// The routed-experts path end to end: pointer arrays (or the FP8 loop), both GEMMs, the activation.
CheckResult experts_check(BenchContext& c, DType type, const char* name) {
  const int experts = 4, hidden = 32, ffn = 16;
  ExpertsState s(c, experts, hidden, ffn, 96, type);
  const ExpertsCase one(c, s, {32, 16, 48});
  run_routed_experts(c, s, one, 0);
  SEMSIM_CUDA(cudaStreamSynchronize(c.stream));
  const auto up = to_host_floats(s.up.get(), experts * 2 * ffn * hidden, type);
  const auto down = to_host_floats(s.down.get(), experts * hidden * ffn, type);
  const auto x = to_host_floats(s.x.get(), one.rows() * hidden, type);
  std::vector<double> expected;
  for (std::size_t i = 0; i < one.tokens.size(); ++i) {
    const int e = one.experts[0][i];
    for (int t = 0; t < one.tokens[i]; ++t) {
      const long long row = one.first_row[i] + t;
      std::vector<double> activated(ffn);
      for (int j = 0; j < ffn; ++j) {
        double gate = 0, lin = 0;
        for (int h = 0; h < hidden; ++h) {
          gate += double(x[row * hidden + h]) * up[(e * 2 * ffn + j) * hidden + h];
          lin += double(x[row * hidden + h]) * up[(e * 2 * ffn + ffn + j) * hidden + h];
        }
        activated[j] = silu(gate) * lin;
      }
      for (int h = 0; h < hidden; ++h) {
        double sum = 0;
        for (int j = 0; j < ffn; ++j) sum += activated[j] * down[(e * hidden + h) * ffn + j];
        expected.push_back(sum);
      }
    }
  }
  // FP8 rounds the activations to 3 mantissa bits before the down projection.
  return {name, max_error(to_host_floats(s.y.get(), one.rows() * hidden, DType::kBf16), expected),
          type == DType::kFp8 ? 0.1 : 0.02, false, ""};
}

CheckResult top_k_check(BenchContext& c) {
  double worst = 0;
  struct Case {
    int tokens, experts, k;
  };
  for (const Case& one : {Case{37, 256, 8}, Case{5, 60, 6}}) {
    const int tokens = one.tokens, experts = one.experts, k = one.k;
    DeviceBuffer logits = random_buffer(tokens * experts, DType::kF32, 24, 4.0f, c.stream);
    DeviceBuffer ids(tokens * k * 4), weights(tokens * k * 4);
    top_k(c, logits.as<float>(), tokens, experts, k, ids.as<int>(), weights.as<float>());
    SEMSIM_CUDA(cudaStreamSynchronize(c.stream));
    const auto l = to_host_floats(logits.get(), tokens * experts, DType::kF32);
    const auto got_ids = to_host_ints(ids.as<int>(), tokens * k);
    const auto got_weights = to_host_floats(weights.get(), tokens * k, DType::kF32);
    for (int t = 0; t < tokens; ++t) {
      std::vector<int> order(experts);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return l[t * experts + a] > l[t * experts + b]; });
      double sum = 0;
      for (int j = 0; j < k; ++j)
        sum += std::exp(double(l[t * experts + order[j]]) - l[t * experts + order[0]]);
      for (int j = 0; j < k; ++j) {
        if (got_ids[t * k + j] != order[j]) worst = std::max(worst, 1.0);  // a wrong expert fails outright
        const double weight = std::exp(double(l[t * experts + order[j]]) - l[t * experts + order[0]]) / sum;
        worst = std::max(worst, std::abs(got_weights[t * k + j] - weight));
      }
    }
  }
  return {"top_k", worst, 1e-5, false, ""};
}

CheckResult permute_check(BenchContext& c) {
  double worst = 0;
  for (const int hidden : {24, 64}) {  // the scalar tail and the 16-byte path
    const int tokens = 50, experts = 16, k = 4;
    Permutation p(tokens, experts, k, hidden);
    DeviceBuffer x = random_buffer(tokens * hidden, DType::kBf16, 25, 1.0f, c.stream);
    DeviceBuffer ids = random_buffer(tokens * k, DType::kI32, 26, experts, c.stream);
    DeviceBuffer weights = random_buffer(tokens * k, DType::kF32, 27, 1.0f, c.stream);
    DeviceBuffer permuted(tokens * k * hidden * 2), out(tokens * hidden * 2);
    permute(c, x.as<__nv_bfloat16>(), ids.as<int>(), tokens, p, permuted.as<__nv_bfloat16>());
    unpermute(c, permuted.as<__nv_bfloat16>(), weights.as<float>(), tokens, p, out.as<__nv_bfloat16>());
    SEMSIM_CUDA(cudaStreamSynchronize(c.stream));
    const auto hx = to_host_floats(x.get(), tokens * hidden, DType::kBf16);
    const auto hp = to_host_floats(permuted.get(), tokens * k * hidden, DType::kBf16);
    const auto hw = to_host_floats(weights.get(), tokens * k, DType::kF32);
    const auto hout = to_host_floats(out.get(), tokens * hidden, DType::kBf16);
    const auto hids = to_host_ints(ids.as<int>(), tokens * k);
    const auto row_of = to_host_ints(p.row_of.as<int>(), tokens * k);
    const auto token_of = to_host_ints(p.token_of.as<int>(), tokens * k);
    const auto offsets = to_host_ints(p.offsets.as<int>(), experts);
    std::vector<int> counts(experts, 0), used(tokens * k, 0);
    for (const int e : hids) ++counts[e];
    std::vector<double> expected;
    for (int t = 0; t < tokens; ++t) {
      for (int j = 0; j < k; ++j) {
        const int row = row_of[t * k + j], e = hids[t * k + j];
        // Each copy lands once, inside its expert's rows, holding its token's hidden state.
        const bool placed =
            row >= offsets[e] && row < offsets[e] + counts[e] && ++used[row] == 1 && token_of[row] == t;
        if (!placed) worst = std::max(worst, 1.0);
        for (int h = 0; h < hidden; ++h)
          worst = std::max(worst, double(std::abs(hp[row * hidden + h] - hx[t * hidden + h])));
      }
      const double weight = hw[t * k] + hw[t * k + 1] + hw[t * k + 2] + hw[t * k + 3];
      for (int h = 0; h < hidden; ++h) expected.push_back(weight * hx[t * hidden + h]);
    }
    worst = std::max(worst, max_error(hout, expected));
  }
  return {"permute", worst, 0.02, false, ""};
}

// O = softmax(Q K^T / sqrt(d)) V under the causal mask, per item.
std::vector<double> reference_attention(const AttentionLayout& a, const std::vector<float>& q,
                                        const std::vector<float>& k, const std::vector<float>& v) {
  std::vector<double> out;
  for (int item = 0; item < a.items; ++item)
    for (int r = 0; r < a.rows; ++r) {
      const int last = a.context - a.new_tokens + r % a.new_tokens;
      std::vector<double> p(last + 1);
      for (int j = 0; j <= last; ++j) {
        double dot = 0;
        for (int d = 0; d < a.qk_dim; ++d)
          dot +=
              double(q[(item * a.rows + r) * a.qk_dim + d]) * k[item * a.k_item_stride + j * a.k_stride + d];
        p[j] = dot / std::sqrt(double(a.qk_dim));
      }
      const double top = *std::max_element(p.begin(), p.end());
      double sum = 0;
      for (double& x : p) sum += (x = std::exp(x - top));
      for (int d = 0; d < a.v_dim; ++d) {
        double o = 0;
        for (int j = 0; j <= last; ++j) o += p[j] / sum * v[item * a.v_item_stride + j * a.v_stride + d];
        out.push_back(o);
      }
    }
  return out;
}

CheckResult attention_check(BenchContext& c) {
  double worst = 0;
  // GQA prefill-like (separate K and V, 2 query heads x 3 new tokens per KV head) and MLA
  // decode-like (V inside K's rows), each split over two passes.
  AttentionLayout gqa;
  gqa.items = 3, gqa.rows = 6, gqa.new_tokens = 3, gqa.context = 7, gqa.qk_dim = gqa.v_dim = 16;
  gqa.k_stride = gqa.v_stride = 16, gqa.k_item_stride = gqa.v_item_stride = 7 * 16;
  AttentionLayout mla;
  mla.items = 2, mla.rows = 4, mla.new_tokens = 1, mla.context = 9, mla.qk_dim = 24, mla.v_dim = 16;
  mla.k_stride = mla.v_stride = 24, mla.k_item_stride = mla.v_item_stride = 9 * 24;
  for (const auto& [a, shared_kv] : {std::pair{gqa, false}, std::pair{mla, true}}) {
    const long long rows = static_cast<long long>(a.items) * a.rows;
    DeviceBuffer q = random_buffer(rows * a.qk_dim, DType::kBf16, 28, 1.0f, c.stream);
    DeviceBuffer k = random_buffer(a.items * a.k_item_stride, DType::kBf16, 29, 1.0f, c.stream);
    DeviceBuffer v = random_buffer(a.items * a.v_item_stride, DType::kBf16, 30, 1.0f, c.stream);
    const int per_pass = a.items_per_pass(static_cast<long long>(a.rows) * a.context * (a.items - 1));
    DeviceBuffer scores(per_pass * a.rows * a.context * 4), probabilities(per_pass * a.rows * a.context * 2);
    DeviceBuffer out(rows * a.v_dim * 2);
    const void* values = shared_kv ? k.get() : v.get();
    attention(c, a, q.as<__nv_bfloat16>(), k.as<__nv_bfloat16>(), static_cast<const __nv_bfloat16*>(values),
              scores.as<float>(), probabilities.as<__nv_bfloat16>(), out.as<__nv_bfloat16>(), per_pass);
    SEMSIM_CUDA(cudaStreamSynchronize(c.stream));
    const auto hk = to_host_floats(k.get(), a.items * a.k_item_stride, DType::kBf16);
    const auto expected = reference_attention(
        a, to_host_floats(q.get(), rows * a.qk_dim, DType::kBf16), hk,
        shared_kv ? hk : to_host_floats(v.get(), a.items * a.v_item_stride, DType::kBf16));
    worst = std::max(worst, max_error(to_host_floats(out.get(), rows * a.v_dim, DType::kBf16), expected));
  }
  return {"attention", worst, 0.02, false, ""};
}

}  // namespace

std::vector<CheckResult> run_self_checks(BenchContext& context) {
  std::vector<std::pair<std::string, std::function<CheckResult()>>> checks{
      {"gemm_bf16", [&] { return gemm_check(context, DType::kBf16, "gemm_bf16"); }},
      {"swiglu", [&] { return swiglu_check(context); }},
      {"routed_experts_bf16", [&] { return experts_check(context, DType::kBf16, "routed_experts_bf16"); }},
      {"top_k", [&] { return top_k_check(context); }},
      {"permute", [&] { return permute_check(context); }},
      {"attention", [&] { return attention_check(context); }},
  };
  if (context.fp8) {
    checks.emplace_back("gemm_fp8", [&] { return gemm_check(context, DType::kFp8, "gemm_fp8"); });
    checks.emplace_back("routed_experts_fp8",
                        [&] { return experts_check(context, DType::kFp8, "routed_experts_fp8"); });
  }
  std::vector<CheckResult> results;
  for (const auto& [name, check] : checks) {
    CheckResult result;
    try {
      result = check();
      result.passed = result.max_error <= result.tolerance;
    } catch (const Unsupported& e) {
      result = {name, 0, 0, false, std::string("unsupported: ") + e.what()};
    } catch (const std::exception& e) {
      result = {name, 0, 0, false, std::string("error: ") + e.what()};
    }
    results.push_back(result);
  }
  return results;
}

}  // namespace semsim::bench
