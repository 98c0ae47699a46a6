#pragma once
// The per-kernel latency tables of NVIDIA's aiconfigurator database (exported from its Parquet
// files row for row to CSV, plain or gzip): each row read, checked and turned into the points of
// the profile tables it measures (calibrate/format/kernels.hpp names them). One place knows the columns of
// every table, so the importer and `semsim calibrate predict` read rows the same way.
#include <map>
#include <string>
#include <vector>

namespace semsim {

// One measured time of a profile table: kernel tables get (x, y) on their axes; collective rows
// (kernel "nccl_<op>") get x = message bytes and `ranks`.
struct MeasuredPoint {
  std::string kernel;
  std::string shape;
  std::string dtype;
  std::string implementation;
  std::string phase;  // DeepEP rows: "dispatch" or "combine"; "" otherwise
  double x = 0;
  double y = 0;
  int ranks = 0;  // collectives
  double seconds = 0;
};

struct MeasuredRow {
  int line = 0;
  std::vector<std::string> fields;    // as read, in the table's column order
  std::vector<MeasuredPoint> points;  // empty when the simulator does not model what the row timed
  std::string skipped;                // why a row has no points
};

struct MeasuredTable {
  std::string path;
  std::string kind;  // the file name without suffixes: gemm_perf, moe_perf, ...
  std::vector<std::string> columns;
  std::vector<MeasuredRow> rows;
  int repeats = 0;  // rows measuring a key an earlier row measured (kept when repeats are allowed)
  // Distinct values of the rows' provenance columns (framework, version, device, kernel_source).
  std::map<std::string, std::vector<std::string>> provenance;
};

// The table kinds this reader knows, as file names without ".csv[.gz]".
const std::vector<std::string>& aiconfigurator_table_kinds();

// Reads one table; its kind comes from the file name. Every problem (unknown kind, missing column,
// non-numeric or non-positive value, unknown dtype, two rows with the same key unless
// `allow_repeats`) is an InputError naming file:line:column and the column. Repeated measurements
// of one key (a table collected twice) are all kept when allowed: the fits average them.
MeasuredTable read_aiconfigurator_table(const std::string& path, bool allow_repeats = false);

// Bytes of one element of an NCCL table's dtype.
double nccl_element_bytes(const std::string& dtype);

}  // namespace semsim
