#include "calibrate/import/raw_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "models/csv.hpp"
#include "models/input_error.hpp"

namespace semsim {
namespace {

namespace fs = std::filesystem;

using Environment = std::map<std::string, std::string>;

Environment read_environment(const std::string& path) {
  const RawTable csv(path, true);
  const std::size_t key = csv.column("key"), value = csv.column("value");
  Environment environment;
  for (const auto& row : csv.rows()) environment[row.fields[key]] = row.fields[value];
  return environment;
}

int environment_integer(const Environment& environment, const std::string& path, const std::string& key) {
  const auto it = environment.find(key);
  if (it == environment.end()) throw InputError(fmt::format("{}: no '{}' entry", path, key), key);
  const auto value = parse_number(it->second);
  if (!value || *value < 0 || *value != static_cast<int>(*value))
    throw InputError(fmt::format("{}: {}: expected a count, got '{}'", path, key, it->second), key);
  return static_cast<int>(*value);
}

std::string environment_text(const Environment& environment, const std::string& key) {
  const auto it = environment.find(key);
  return it == environment.end() ? std::string() : it->second;
}

// The rank of a folder named rank-R, or nothing for any other name.
std::optional<int> folder_rank(const std::string& name) {
  if (name.rfind("rank-", 0) != 0) return std::nullopt;
  int rank = 0;
  const char* begin = name.data() + 5;
  const char* end = name.data() + name.size();
  const auto [stop, error] = std::from_chars(begin, end, rank);
  if (error != std::errc() || stop != end || begin == end) return std::nullopt;
  return rank;
}

// Of every rank's rows of one collective point, the slowest (or a failure, which leaves the point out).
void keep_slowest_rank(RawTable& collectives) {
  if (collectives.rows().empty()) return;
  std::vector<std::size_t> key_columns;
  for (const char* name : {"collective", "ranks", "level", "bytes", "pair"})
    if (collectives.has_column(name)) key_columns.push_back(collectives.column(name));
  const std::size_t seconds = collectives.column("seconds"), status = collectives.column("status");
  std::map<std::vector<std::string>, std::size_t> index;
  std::vector<RawTable::Row> kept;
  for (const RawTable::Row& row : collectives.rows()) {
    std::vector<std::string> key;
    for (const std::size_t c : key_columns) key.push_back(row.fields[c]);
    const auto [it, inserted] = index.emplace(key, kept.size());
    if (inserted) {
      kept.push_back(row);
      continue;
    }
    RawTable::Row& held = kept[it->second];
    if (held.fields[status] != "ok") continue;
    if (row.fields[status] != "ok" || collectives.number(row, seconds) > collectives.number(held, seconds))
      held = row;
  }
  collectives.keep_rows(std::move(kept));
}

// Appends the checks, kernels and collectives of `folder` to those of `r`.
void append_tables(RawResults& r, const fs::path& folder) {
  r.checks.append(RawTable((folder / kRawChecks).string(), false));
  r.kernels.append(RawTable((folder / kRawKernels).string(), false));
  r.collectives.append(RawTable((folder / kRawCollectives).string(), false));
}

RawResults read_one_process(const std::string& raw_dir) {
  const fs::path dir(raw_dir);
  RawResults r;
  r.environment_file = (dir / kRawEnvironment).string();
  r.environment = read_environment(r.environment_file);
  append_tables(r, dir);
  r.topology.nodes = 1;
  r.topology.gpus_per_node =
      static_cast<int>(parse_number(environment_text(r.environment, "gpus")).value_or(0));
  r.topology.nics_per_node =
      static_cast<int>(parse_number(environment_text(r.environment, "nics")).value_or(0));
  if (const std::string host = environment_text(r.environment, "host"); !host.empty())
    r.topology.hosts.push_back(host);
  return r;
}

// The rank-R folders of `raw_dir` by rank; an InputError when two are of one rank.
std::map<int, fs::path> rank_folders(const std::string& raw_dir) {
  std::vector<fs::path> entries;  // in name order: the same error whatever order the folder lists them
  for (const auto& entry : fs::directory_iterator(raw_dir))
    if (entry.is_directory()) entries.push_back(entry.path());
  std::sort(entries.begin(), entries.end());
  std::map<int, fs::path> folders;
  for (const fs::path& entry : entries) {
    const auto rank = folder_rank(entry.filename().string());
    if (!rank) continue;
    if (const auto [it, inserted] = folders.emplace(*rank, entry); !inserted)
      throw InputError(fmt::format("{} and {} are both rank {}", it->second.string(), entry.string(), *rank));
  }
  return folders;
}

// Checks rank `rank`'s environment (read from `path`) against rank 0's in `r`: of one run, on the
// same GPU and software, placed by node (`per_node` ranks to a node), each node on a host of its
// own, which joins r.topology at the node's first rank.
void check_rank_environment(RawResults& r, int per_node, int rank, const std::string& path,
                            const Environment& environment) {
  auto must_match = [&](const std::string& key, const std::string& wanted, const std::string& what) {
    const std::string got = environment_text(environment, key);
    if (got != wanted)
      throw InputError(fmt::format("{}: {}: '{}', but {} says '{}' ({})", path, key, got, r.environment_file,
                                   wanted, what),
                       key);
  };
  if (environment_integer(environment, path, "rank") != rank)
    throw InputError(fmt::format("{}: rank: {}, but the folder is rank {}", path,
                                 environment_text(environment, "rank"), rank),
                     "rank");
  for (const char* key : {"ranks", "local_ranks", "run"})
    must_match(key, environment_text(r.environment, key), "every rank must be of one run");
  for (const char* key : {"gpu", "driver", "cuda", "cublas", "nccl"})
    must_match(key, environment_text(r.environment, key), "every rank must run the same GPU and software");
  if (environment_integer(environment, path, "node") != rank / per_node ||
      environment_integer(environment, path, "local_rank") != rank % per_node)
    throw InputError(
        fmt::format("{}: rank {} is at node {}, local rank {}; expected node {}, local rank {} "
                    "(the launcher must place ranks by node: rank r on node r / {})",
                    path, rank, environment_text(environment, "node"),
                    environment_text(environment, "local_rank"), rank / per_node, rank % per_node, per_node),
        "node");
  const std::string host = environment_text(environment, "host");
  std::vector<std::string>& hosts = r.topology.hosts;
  if (rank % per_node != 0) {
    must_match("host", hosts.back(), "ranks of one node run on one host");
  } else if (std::find(hosts.begin(), hosts.end(), host) != hosts.end()) {
    throw InputError(fmt::format("{}: host '{}' is also an earlier node's: nodes {} share it", path, host,
                                 rank / per_node),
                     "host");
  } else {
    hosts.push_back(host);
  }
}

RawResults read_per_rank(const std::string& raw_dir) {
  const std::map<int, fs::path> folders = rank_folders(raw_dir);
  RawResults r;
  const fs::path first = folders.begin()->second;
  r.environment_file = (first / kRawEnvironment).string();
  r.environment = read_environment(r.environment_file);
  r.ranks = environment_integer(r.environment, r.environment_file, "ranks");
  const int per_node = environment_integer(r.environment, r.environment_file, "local_ranks");
  if (r.ranks < 1 || per_node < 1 || r.ranks % per_node != 0)
    throw InputError(fmt::format("{}: {} ranks do not make whole nodes of {} (local_ranks)",
                                 r.environment_file, r.ranks, per_node),
                     "ranks");
  for (int rank = 0; rank < r.ranks; ++rank)
    if (!folders.count(rank))
      throw InputError(
          fmt::format("{}: rank {} of {} has no results (no rank-{}/: it did not start, or its "
                      "folder was lost)",
                      raw_dir, rank, r.ranks, rank));
  if (folders.rbegin()->first >= r.ranks)
    throw InputError(fmt::format("{}: a rank beyond the run's {} ranks ({} says ranks = {})",
                                 folders.rbegin()->second.string(), r.ranks, r.environment_file, r.ranks));
  r.topology.nodes = r.ranks / per_node;
  r.topology.gpus_per_node = per_node;
  r.topology.nics_per_node =
      static_cast<int>(parse_number(environment_text(r.environment, "nics")).value_or(0));
  // Rank 0 first, so that the merged tables keep its columns and provenance.
  for (const auto& [rank, folder] : folders) {
    const std::string path = (folder / kRawEnvironment).string();
    check_rank_environment(r, per_node, rank, path, rank == 0 ? r.environment : read_environment(path));
    append_tables(r, folder);
  }
  keep_slowest_rank(r.collectives);
  return r;
}

}  // namespace

RawTable::RawTable(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    if (required) throw InputError(path + ": cannot read the file");
    return;
  }
  files_.push_back(path);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty()) continue;
    bool unterminated = false;
    std::vector<std::string> fields = split_csv_line(line, &unterminated);
    if (unterminated) throw InputError(fmt::format("{}:{}: unterminated quote", path, line_number));
    if (header_.empty()) {
      header_ = std::move(fields);
      continue;
    }
    if (fields.size() != header_.size())
      throw InputError(
          fmt::format("{}:{}: expected {} fields, got {}", path, line_number, header_.size(), fields.size()));
    rows_.push_back({0, line_number, std::move(fields)});
  }
}

void RawTable::append(const RawTable& other) {
  if (other.files_.empty()) return;
  if (files_.empty()) {
    *this = other;
    return;
  }
  std::vector<std::size_t> from;  // other's column of each of ours
  for (const std::string& name : header_) {
    const auto it = std::find(other.header_.begin(), other.header_.end(), name);
    if (it == other.header_.end())
      throw InputError(
          fmt::format("{}:1: no column '{}' (the other ranks' files have it)", other.files_[0], name));
    from.push_back(static_cast<std::size_t>(it - other.header_.begin()));
  }
  const int file_offset = static_cast<int>(files_.size());
  files_.insert(files_.end(), other.files_.begin(), other.files_.end());
  for (const Row& row : other.rows_) {
    Row mapped{row.file + file_offset, row.line, {}};
    for (const std::size_t c : from) mapped.fields.push_back(row.fields[c]);
    rows_.push_back(std::move(mapped));
  }
}

bool RawTable::has_column(const std::string& name) const {
  return std::find(header_.begin(), header_.end(), name) != header_.end();
}

std::size_t RawTable::column(const std::string& name) const {
  const auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end())
    throw InputError(fmt::format("{}:1: no column '{}'", files_.empty() ? "" : files_[0], name));
  return static_cast<std::size_t>(it - header_.begin());
}

double RawTable::number(const Row& row, std::size_t column) const {
  const auto value = parse_number(row.fields[column]);
  if (!value)
    throw InputError(
        fmt::format("{}: {}: expected a number, got '{}'", where(row), header_[column], row.fields[column]));
  return *value;
}

std::string RawTable::where(const Row& row) const {
  return fmt::format("{}:{}", files_[static_cast<std::size_t>(row.file)], row.line);
}

bool is_per_rank_raw(const std::string& raw_dir) {
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(raw_dir, ignored))
    if (entry.is_directory() && folder_rank(entry.path().filename().string())) return true;
  return false;
}

RawResults read_raw_results(const std::string& raw_dir) {
  return is_per_rank_raw(raw_dir) ? read_per_rank(raw_dir) : read_one_process(raw_dir);
}

}  // namespace semsim
