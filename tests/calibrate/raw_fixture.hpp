#pragma once
// A single-process calibration's raw folder as semsim-calibrate-bench writes it (environment.csv,
// checks.csv, kernels.csv, collectives.csv), for DeepSeek-V2-Lite's shapes on a synthetic H200 whose
// laws are known: for the fit's tests and for scripts that run a calibration without a GPU.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <string>

#include "calibrate/format/kernels.hpp"
#include "models/presets.hpp"

namespace semsim::test {

// The synthetic device: GEMMs at 60% of BF16 peak, prefill attention at 30%, copies at 85% of HBM,
// an all-to-all with alpha 20 us at 80% of NVLink whose small messages get less.
inline double experts_seconds(double active, double tokens) {
  return 8e-6 + 2e-6 * active + 3e-8 * tokens;
}
inline double head_seconds(double tokens) {
  return 5e-6 + 2.0 * tokens * 2048 * 102400 / (0.6 * 989.5e12);
}
inline double copy_seconds(double bytes) {
  return 3e-6 + 2 * bytes / (0.85 * 4.8e12);
}
inline double all_to_all_seconds(double bus_bytes, double message_bytes) {
  const double factor = 0.3 + 0.7 / (1 + std::pow(65536.0 / message_bytes, 1.5));
  return 20e-6 + bus_bytes / (0.8 * 450e9 * factor);
}

inline void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// What semsim-calibrate-bench writes, for DeepSeek-V2-Lite's shapes.
inline void write_raw(const std::string& dir) {
  write(dir + "/environment.csv",
        "key,value\ndate,2025-01-02T03:04:05Z\ngpu,NVIDIA H200\ngpus,8\ndriver,580.82.07\ncuda,13.0.0\n"
        "cublas,13.1.0\nnccl,2.28.9\n");
  write(dir + "/checks.csv",
        "check,max_error,tolerance,passed,note\ngemm_bf16,0.001,0.02,true,\ntop_k,1,1e-05,false,\n");
  const MoeModel model = model_preset("deepseek-v2-lite");
  std::string kernels =
      "kernel,shape,dtype,implementation,variant,x,y,seconds,p10,p90,trials,launches,status\n";
  auto row = [&](const std::string& kernel, const std::string& dtype, const std::string& variant, double x,
                 double y, double seconds, const std::string& status = "ok") {
    kernels += fmt::format("{},{},{},\"impl, with a comma\",{},{},{},{},{},{},5,1,{}\n", kernel,
                           kernel == "copy" ? "" : kernel_shape(kernel, model), dtype, variant, x, y,
                           status == "ok" ? fmt::format("{}", seconds) : "", seconds, seconds, status);
  };
  for (double active = 1; active <= 64; active *= 2)
    for (double tokens = 1; tokens <= 65536; tokens *= 2)
      if (tokens >= active) {
        row("routed_experts", "bf16", "grid", active, tokens, experts_seconds(active, tokens));
        if (active > 1)
          row("routed_experts", "bf16", "skewed", active, tokens, 1.05 * experts_seconds(active, tokens));
      }
  for (double tokens = 1; tokens <= 8192; tokens *= 2)
    row("lm_head", "bf16", "grid", tokens, 0, head_seconds(tokens));
  row("lm_head", "bf16", "grid", 16384, 0, 0, "skipped: time budget");
  for (double tokens = 1; tokens <= 8192; tokens *= 2)
    row("gate", "bf16", "grid", tokens, 0, 0, "check_failed: top_k");
  for (double bytes = 4096; bytes <= (1 << 30); bytes *= 4)
    row("copy", "bf16", "grid", bytes, 0, copy_seconds(bytes));
  row("shared_experts", "fp8", "grid", 1, 0, 0, "unsupported: no cuBLASLt FP8 algorithm");
  write(dir + "/kernels.csv", kernels);

  std::string collectives =
      "collective,ranks,level,bytes,message_bytes,bus_bytes,seconds,algbw,busbw,iterations,status\n";
  for (double bytes = 1024; bytes <= (1 << 30); bytes *= 2) {
    const double message = bytes / 8, bus = bytes * 7 / 8, seconds = all_to_all_seconds(bus, message);
    collectives += fmt::format("all_to_all,8,scaleup,{},{},{},{},{},{},10,ok\n", bytes, message, bus, seconds,
                               bytes / seconds, bus / seconds);
    collectives += fmt::format("all_reduce,1,scaleup,{},{},0,1e-05,1,0,10,ok\n", bytes, bytes);
  }
  collectives += "all_to_all,8,scaleup,2147483648,268435456,1879048192,,,,0,skipped: time budget\n";
  write(dir + "/collectives.csv", collectives);
}

}  // namespace semsim::test
