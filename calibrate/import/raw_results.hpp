#pragma once
// The raw results of a calibration as the fitter reads them: environment.csv, checks.csv,
// kernels.csv and collectives.csv of one process (a single-node run), or of every rank of a
// multi-process run (DIR/rank-R/, merged here). Every row remembers its file and line, so errors
// name them however the rows were merged.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/format/profile.hpp"

namespace semsim {

// The files semsim-calibrate-bench writes into its output folder (each rank's, in a multi-process run).
inline constexpr const char* kRawEnvironment = "environment.csv";
inline constexpr const char* kRawChecks = "checks.csv";
inline constexpr const char* kRawKernels = "kernels.csv";
inline constexpr const char* kRawCollectives = "collectives.csv";

// A CSV file as the benchmark writes it (RFC 4180 quoting, a header line), or several of the same
// columns one after the other.
class RawTable {
 public:
  struct Row {
    int file = 0;  // index into files()
    int line = 0;
    std::vector<std::string> fields;  // in the order of the first file's header
  };

  RawTable() = default;
  // An empty table when the file does not exist, unless `required` (then an InputError).
  RawTable(const std::string& path, bool required);

  // Appends `other`'s rows; an InputError naming its file when it lacks one of this table's columns.
  void append(const RawTable& other);
  void keep_rows(std::vector<Row> rows) { rows_ = std::move(rows); }

  const std::vector<Row>& rows() const { return rows_; }
  bool has_column(const std::string& name) const;
  std::size_t column(const std::string& name) const;  // InputError naming the file when absent
  double number(const Row& row, std::size_t column) const;
  std::string where(const Row& row) const;  // "file:line"

 private:
  std::vector<std::string> files_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

struct RawResults {
  std::string environment_file;  // the environment the profile's provenance comes from (rank 0's)
  std::map<std::string, std::string> environment;
  RawTable checks, kernels, collectives;
  ProfileTopology topology;
  int ranks = 1;  // processes that measured (1: a single-node run)
};

// Whether `raw_dir` holds a multi-process run's per-rank folders (rank-0/, rank-1/, ...).
bool is_per_rank_raw(const std::string& raw_dir);

// The raw results of `raw_dir`, either layout. Per rank: every rank 0 .. N-1 exactly once, all of
// one run, on one GPU model and the same driver, CUDA, cuBLAS and NCCL, placed by node (rank r on
// node r / G at local index r % G, each node one host); a collective point is the slowest rank's
// time (a collective ends when its last rank does), or the failure of any rank. InputErrors name
// the file and key.
RawResults read_raw_results(const std::string& raw_dir);

}  // namespace semsim
