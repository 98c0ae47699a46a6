#pragma once
// Importers from the routing dumps of public projects and serving engines into semsim traces
// (workloads/TRACE_FORMAT.md, "Importing"). Each import is checked against the model preset:
// routed layers must be exactly its MoE layers, k its top-k, expert ids within its routed experts.
#include <string>
#include <vector>

#include "models/moe_model.hpp"
#include "models/progress.hpp"
#include "workloads/routing_trace.hpp"

namespace semsim {

enum class TraceImportFormat { kDeepseekCsv, kLlama4Json, kMixtralJsonl, kSglang };

const std::vector<std::string>& trace_import_format_names();  // as `--from` spells them
TraceImportFormat trace_import_format_named(const std::string& name);

// `path` is a file or a folder of files of that format (read in a documented, deterministic order).
// `progress` (optional) counts the input files read.
RoutingTrace import_trace(TraceImportFormat format, const std::string& path, const MoeModel& model,
                          const ProgressCallback& progress = {});

}  // namespace semsim
