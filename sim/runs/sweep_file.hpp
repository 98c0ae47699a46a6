#pragma once
// Sweep files (schema 1): a base scenario plus named series and axes over any scenario key path,
// expanded into points, each a resolved scenario with a stable id.
//
//   sweep: 1
//   base: default                      # a scenario file (relative to this file) or 'default'
//                                      # (whose relative paths then resolve against this file's folder)
//   set: {workload.requests: 500}      # optional: values every point gets
//   series:                            # optional: named bundles of values, one set of points each
//     round-robin: {policies.request_scheduling: round_robin}
//     shortest-queue: {policies.request_scheduling: shortest_queue}
//   axes:                              # optional: the dimensions of a cartesian product, in order
//     - workload.arrival.rate: [5, 10, 20]             # one key per item: a plain axis
//     - {workload.seed: [1, 2], name: [s1, s2]}        # several keys in one item step together
//
// Points come in expansion order: series outermost, then the axes in order, the last fastest.
// Each key path is given in one place only (set, series or one axis).
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/scenario.hpp"

namespace semsim {

struct SweepPoint {
  std::size_t index = 0;                    // position in expansion order
  std::string id;                           // point_id() of the resolved scenario document
  std::vector<std::string> labels;          // one per Sweep::columns entry
  std::vector<ScenarioOverride> overrides;  // set, series, then axis values
  std::optional<Scenario> scenario;         // the validated scenario, or nothing when...
  std::string error;                        // ...this combination of values is not a valid scenario
};

struct Sweep {
  std::string file;
  std::vector<std::string> columns;  // "series" when the sweep has series, then every axis key path
  std::vector<SweepPoint> points;
  // Of the whole expansion (columns and every point's id, in order): an output folder records it, so
  // points of two different sweeps never mix in one points.csv.
  std::string fingerprint;
};

// Reads, validates and expands a sweep file. A malformed file, a key path the scenario schema does
// not have, or a value that is invalid on the base scenario by itself throws InputError naming
// file:line:column and the key path. A combination of values that are each valid but together not a
// valid scenario (say, an EP size that does not divide one model's experts) becomes a point with
// `error` set, so that it is recorded as failed while the others run.
Sweep load_sweep(const std::string& path);

// 16 hex digits: 64-bit FNV-1a over the canonical JSON text of a scenario document (map keys sorted,
// numbers normalised), so neither key order nor number spelling ("20" vs "20.0") changes it. It
// identifies the scenario text, not the contents of files the scenario refers to.
std::string point_id(const YAML::Node& scenario_document);

}  // namespace semsim
