#pragma once
// Sweeps: a grid of scenario variants (`--vary key=values` axes), each point a full simulation,
// run on a pool of threads; the table of points, the Pareto front of throughput against P99, the
// best point under the target and the configuration needing the fewest cards. Shards of a grid
// (every N-th point from K) are written as JSON and merged back into the same result as one run.
// No wall clock here: progress is reported through a callback, timing is the caller's business.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/capacity.h"
#include "sim/card_sim.h"
#include "sim/scenario.h"

namespace npusim::sim {

/// One axis of the grid: a scenario key and the values it takes, as TOML text ("8", "2.5").
struct SweepAxis {
  std::string key;  ///< "section.key", one of scenario_keys()
  std::vector<std::string> values;
  friend bool operator==(const SweepAxis&, const SweepAxis&) = default;
};

/// Expands a value list: items separated by commas (outside [] and {}), each a literal or an
/// inclusive range `a..b` (step 1) or `a..b:step`; integers stay integers, any decimal makes the
/// range decimal. "8,16,20" -> 8 16 20; "1..4" -> 1 2 3 4; "6..12:2" -> 6 8 10 12;
/// "0.5..1:0.25" -> 0.5 0.75 1. Throws InputError at "<command line>" naming `what`.
[[nodiscard]] std::vector<std::string> parse_sweep_values(const std::string& text,
                                                          const std::string& what);

/// Parses `KEY=VALUES` of --vary; the key must be one of scenario_keys(). Throws InputError.
[[nodiscard]] SweepAxis parse_sweep_axis(const std::string& spec);

/// Which points of the grid this run takes: index % count == index_k.
struct SweepShard {
  std::size_t k = 0;  ///< 0-based shard index, < n
  std::size_t n = 1;  ///< number of shards
};

/// Parses `K/N` (0 <= K < N). Throws InputError.
[[nodiscard]] SweepShard parse_sweep_shard(const std::string& text);

/// Everything that defines a sweep.
struct SweepSpec {
  std::filesystem::path scenario_file;
  std::vector<std::string> sets;  ///< --set overrides applied to every point (and the baseline)
  std::vector<SweepAxis> axes;    ///< the grid; the last axis varies fastest
  SweepShard shard;
  /// Per point, search the highest Poisson rate whose P99 stays under target.p99_ms.
  bool find_max_qps = false;
  /// Bisection stops when (high - low) <= tolerance × high (relative width of the bracket).
  double max_qps_tolerance = 0.02;
  std::vector<std::filesystem::path> hw_dirs;  ///< where chips are looked up
};

/// The outcome of one point (or of the baseline: the scenario with only the --set overrides).
struct SweepPoint {
  std::size_t index = 0;            ///< position in the full grid (row-major, last axis fastest)
  std::vector<std::string> values;  ///< one per axis
  bool feasible = true;             ///< false: not simulated, see skip_reason
  std::string skip_reason;
  double qps = 0;
  double throughput = 0;  ///< samples per second
  double p50_ms = 0;
  double p99_ms = 0;
  double cube_utilization = 0;
  double vector_utilization = 0;
  std::optional<std::int64_t> cards_needed;  ///< ceil(target.traffic_qps / qps)
  std::optional<bool> p99_met;
  std::optional<double> max_qps;  ///< with find_max_qps: the highest rate meeting the P99 target
  std::int64_t simulations = 0;   ///< simulations this point took
  bool pareto = false;            ///< on the front of throughput (max) against P99 (min)
};

/// A sweep, a shard of one, or shards merged.
struct SweepResult {
  std::string scenario;       ///< the scenario's name
  std::string scenario_file;  ///< as given
  std::vector<std::string> sets;
  std::vector<SweepAxis> axes;  ///< the grid, axis by axis: each point's values follow its index
  std::size_t grid_points = 0;  ///< points in the full grid
  SweepShard shard;               ///< {0, 1} for a whole sweep or a complete merge
  bool find_max_qps = false;
  std::optional<double> target_p99_ms;
  std::optional<double> target_traffic_qps;
  SweepPoint baseline;              ///< the scenario's own configuration (index unused)
  std::vector<SweepPoint> points;   ///< this run's points, ascending by index, skipped included
  std::optional<std::size_t> best;  ///< index into points: max throughput with P99 under target
  std::optional<std::size_t> fewest_cards;  ///< index into points: fewest cards, P99 met

  /// Points that were skipped as infeasible.
  [[nodiscard]] std::size_t skipped() const noexcept;
  /// The axes' keys, in axis order.
  [[nodiscard]] std::vector<std::string> keys() const;
};

/// Progress: called after each finished point with (points done, points of this run), from the
/// worker threads but never concurrently.
using SweepProgress = std::function<void(std::size_t, std::size_t)>;

/// Runs task(0) .. task(tasks - 1) on `jobs` threads (0 = one per hardware thread), the calling
/// thread included; each task writes its own result slot, so results never depend on `jobs`.
/// After the first task that throws, no new task starts; that exception (the lowest task index
/// among those that threw) is rethrown once all threads are done. `progress` as for a sweep.
void run_parallel(std::size_t tasks, unsigned jobs, const std::function<void(std::size_t)>& task,
                  const SweepProgress& progress = {});

/// Runs the points of `spec` (its shard) on `jobs` threads (0 = one per hardware thread).
/// Results do not depend on `jobs`. A point whose core partitions add up to more cores than the
/// chip has is skipped, not simulated. Throws InputError for a bad spec or a point whose
/// scenario is invalid (the message names the point).
[[nodiscard]] SweepResult run_sweep(const SweepSpec& spec, unsigned jobs,
                                    const SweepProgress& progress = {});

/// The axis values of grid point `index` (0 <= index < the product of the axes' sizes): mixed
/// radix, the last axis fastest.
[[nodiscard]] std::vector<std::string> grid_point_values(const std::vector<SweepAxis>& axes,
                                                         std::size_t index);

/// Recomputes pareto flags, best and fewest_cards from the points and the target.
void analyse_sweep(SweepResult& result);

/// The result as JSON (what `npusim merge` reads back); stable key order.
[[nodiscard]] std::string sweep_to_json(const SweepResult& result);

/// Reads sweep_to_json() output; `file` names the source in errors. Throws InputError.
[[nodiscard]] SweepResult sweep_from_json(const std::string& text, const std::string& file);

/// Joins shards of one sweep: same scenario, sets, axes (keys and values), shard count and target, every shard
/// exactly once. The result equals the whole sweep run at once. Throws InputError naming
/// `files[i]` for the shard at fault.
[[nodiscard]] SweepResult merge_sweeps(const std::vector<SweepResult>& shards,
                                       const std::vector<std::string>& files);

/// One row per point: index, the axis values, then the metrics; skipped points say why.
[[nodiscard]] std::string sweep_to_csv(const SweepResult& result);

/// The table of feasible points with the Pareto front marked, the count of skipped points, the
/// best point under the target with its gain over the baseline, and the fewest cards.
[[nodiscard]] std::string sweep_to_text(const SweepResult& result);

}  // namespace npusim::sim
