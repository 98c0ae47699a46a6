#pragma once
// The names a calibration profile, the microbenchmarks and the calibrated cost model agree on:
// which kernels are measured (and over which axes), and which collectives.
#include <string>
#include <string_view>
#include <vector>

#include "models/moe_model.hpp"

namespace semsim {

// Operator tables are keyed by a model's shape (kernel_shape(); the project's microbenchmarks
// measure them per model preset); kernel tables by the kernel's own shape ("n=4096 k=7168"), as
// public per-kernel databases measure them over many shapes, so that a model's operators are
// composed from them and shapes in between are interpolated (calibrate/fit/kernel_library.hpp).
enum class KernelScope { kOperator, kKernel };

struct KernelSpec {
  std::string_view name;
  std::vector<std::string_view> axes;  // table axes, in order (the first indexes the rows)
  std::string_view what;               // one line: what is timed
  KernelScope scope = KernelScope::kOperator;
  std::vector<std::string_view> shape_keys = {};  // kernel scope: the keys of its shape, in order
  // Whether its last axis may run in whole tiles (a GEMM's rows): the fitter then chooses the tile
  // from the measurements (calibrate/fit/fit.hpp). Attention and the fused MoE kernel are not: on their
  // tables tiles predicted the rows left out worse than the plain curve.
  bool tiled = false;
  // Whether beyond the work measured at a row value its table answers at the best measured rate
  // (BeyondWork::kBestRate, calibrate/fit/interpolation.hpp) rather than along the row's trend.
  bool work_at_best_rate = false;
  // Whether its work is the product of its two axes (a decode kernel reads batch x context cached
  // tokens): the fitter crosses a row's gaps as the rows beside it cross them at the same work.
  bool product_work = false;
};

// Every kernel a profile may carry a table for.
const std::vector<KernelSpec>& kernel_specs();
const KernelSpec* find_kernel_spec(std::string_view name);
std::vector<std::string> kernel_names();

// The shape of `kernel` in `model` as "key=value ..." (the key of its table in a profile, and what the
// microbenchmark reads to build it); "" when the model runs no such kernel (no shared experts, no
// dense layers; a dense model's router and experts). Attention shapes are the same string for decode and
// prefill.
std::string kernel_shape(std::string_view kernel, const MoeModel& model);

// What the microbenchmarks measure (calibrate/kernel-plan.txt): every kernel shape of every model
// preset, one "kernel shape" line each, under a comment naming the first preset that has it.
std::string kernel_plan();

// The dtypes a kernel table may be of: bf16, fp8 (per-tensor scales), fp8_block (128-wide block
// scales, DeepGEMM's), nvfp4 and mxfp4 (block-scaled FP4 weights: NVFP4, and MXFP4 of either
// activation format).
const std::vector<std::string>& kernel_dtype_names();

// Every collective a profile may carry a fit for, and the link levels a fit belongs to.
const std::vector<std::string>& collective_names();
const std::vector<std::string>& link_level_names();  // scaleup, scaleout

}  // namespace semsim
