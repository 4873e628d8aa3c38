#pragma once
// One step of a profile turned into a graph TOML the simulator runs (`npusim graph from-profile`).
//
// Rules (docs/profile_formats.md "Graph from a profile"):
// - Compute tasks only (cube, vector, mix, AI CPU). Communication (hcom_*) and other device tasks
//   (DSA, SDMA, events) are left out and counted in the header comment: the simulator does not
//   model collectives, and a collective's duration on one rank is mostly waiting for the others.
// - Ops are ordered by start time; names are made unique by suffixing #2, #3...
// - Every op has an explicit `after`: the previous op of the same stream. The first op of a
//   stream depends on the op of another stream that ended last before it started (its
//   cross-stream predecessor in time), if any; otherwise it is a root (`after = []`).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "profile/discover.h"

namespace npusim::profile {

/// What from_profile() did, for the CLI to report.
struct GraphExport {
  std::string toml;              ///< the graph file's text
  std::int64_t step = -1;        ///< step exported (-1: the file has no step column)
  std::vector<std::int64_t> steps_found;
  std::uint64_t ops = 0;         ///< ops written
  std::uint64_t dropped_communication = 0;
  std::uint64_t dropped_other = 0;
  std::uint64_t dropped_untyped = 0;  ///< rows without an op type (profiler Level0)
  std::uint64_t without_shapes = 0;   ///< ops written without shapes (N/A, or make_op rejects them)
};

/// Exports step `step` (default: the last step found, the most warmed-up) of the profile's kernel
/// tables. A non-empty `measured_hw` (the chip the profile was taken on, an hw_specs name) is
/// written as `[graph.measured] hw = ...`: the durations then run as measured on that chip and
/// anchored under other conditions (model/measured.h). Throws InputError when the step does not exist (naming the steps found), when --step
/// is given for a file without a step column, or when the step holds no compute op with a type.
[[nodiscard]] GraphExport graph_from_profile(const ProfileSource& source,
                                             std::optional<std::int64_t> step,
                                             const std::string& measured_hw = "");



}  // namespace npusim::profile
