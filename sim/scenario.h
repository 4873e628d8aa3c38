#pragma once
// A scenario: which graph, on which chip, deployed how (streams, core limit, gears, batching),
// under which traffic, against which target. Loaded from one TOML file into typed structs
// (CONVENTIONS.md: code never reads raw TOML after load); any value can be overridden with
// `--set section.key=value`. Keys and their meaning: docs/scenarios.md.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/graph.h"
#include "model/hw_spec.h"
#include "sim/event_queue.h"

namespace npusim::sim {

/// How requests arrive.
enum class ArrivalKind : std::uint8_t {
  kPoisson,  ///< open loop, exponential inter-arrival times at rate_qps
  kClosed,   ///< `concurrency` clients, each sends its next request when the previous completes
  kTrace     ///< arrival times (and optionally sizes) replayed from a file
};
/// "poisson", "closed", "trace".
[[nodiscard]] const char* arrival_name(ArrivalKind a) noexcept;

/// The distribution of request batch sizes (samples per request).
class BatchSizeDist {
 public:
  /// Every request has `size` samples.
  [[nodiscard]] static BatchSizeDist fixed(std::int64_t size);
  /// Sizes with relative weights (normalised here; weights > 0).
  [[nodiscard]] static BatchSizeDist histogram(std::vector<std::int64_t> sizes,
                                               std::vector<double> weights);
  /// Observed sizes, drawn uniformly (the empirical distribution).
  [[nodiscard]] static BatchSizeDist samples(std::vector<std::int64_t> sizes);

  /// Draws a size given a uniform variate u in [0, 1).
  [[nodiscard]] std::int64_t draw(double u) const noexcept;
  /// The largest size that can be drawn.
  [[nodiscard]] std::int64_t max_size() const noexcept;
  /// The mean size.
  [[nodiscard]] double mean() const noexcept;
  /// Distinct sizes and their probabilities, ascending by size.
  [[nodiscard]] const std::vector<std::int64_t>& sizes() const noexcept { return sizes_; }
  [[nodiscard]] const std::vector<double>& probabilities() const noexcept { return prob_; }

 private:
  std::vector<std::int64_t> sizes_;
  std::vector<double> prob_;
  std::vector<double> cumulative_;
};

/// One line of an arrival trace.
struct TraceArrival {
  TimeNs arrival_ns = 0;
  std::int64_t batch_size = 0;  ///< 0 = draw from the batch-size distribution
};

/// [scenario]
struct ScenarioInfo {
  std::string name;
  std::string hw;                     ///< chip name or path
  std::vector<std::string> overlays;  ///< hw overlay files (resolved against the scenario folder)
  std::uint64_t seed = 1;
  SourcePos hw_pos;  ///< the `hw` value, for errors found when the chip is looked up
};

/// [deployment]
struct Deployment {
  int streams = 1;                  ///< instances per card
  int cube_cores_per_stream = 0;    ///< core limit; 0 = no limit (streams share the card)
  int vector_cores_per_stream = 0;  ///< core limit; 0 = no limit
  std::vector<std::int64_t> gears;  ///< compiled batch sizes, ascending, unique
  double batch_window_us = 0;       ///< how long the batcher waits to fill a batch
  bool split_oversize = false;      ///< split requests above the largest gear into chunks
  SourcePos cube_limit_pos;         ///< for errors found once the chip is known
  SourcePos vector_limit_pos;
};

/// [workload]
struct Workload {
  ArrivalKind arrival = ArrivalKind::kPoisson;
  double rate_qps = 0;               ///< poisson
  int concurrency = 0;               ///< closed
  std::vector<TraceArrival> trace;   ///< trace
  std::int64_t requests = 0;         ///< measured requests
  std::int64_t warmup_requests = 0;  ///< requests before them, excluded from the metrics
  BatchSizeDist batch_size = BatchSizeDist::fixed(1);
  double input_bytes_per_sample = 0;   ///< host->device input copy per (padded) sample, bytes
  double output_bytes_per_sample = 0;  ///< device->host result copy per (padded) sample, bytes
};

/// [contention]: switches for what a card's streams share besides cores, HBM and L2 capacity
/// (always modelled). Each is on unless the scenario turns it off; the parameters are the chip's.
struct Contention {
  bool host = true;               ///< the launch work of all streams queues on [host].cores
  bool scheduler = true;          ///< every kernel passes the card's one task scheduler
  bool l2_bandwidth = true;       ///< streams share the chip's L2 bandwidth as they share HBM's
  bool core_limit_bypass = true;  ///< dynamic-shape and marked ops ignore the stream's core limit
};

/// [target]
struct Target {
  std::optional<double> p99_ms;
  std::optional<double> traffic_qps;
};

/// A loaded, validated scenario.
struct Scenario {
  std::filesystem::path file;  ///< the scenario file
  ScenarioInfo info;
  Graph graph;
  Deployment deployment;
  Workload workload;
  Contention contention;
  Target target;
};

/// Loads a scenario. `sets` are "section.key=value" overrides applied before validation; a value
/// is read as TOML (4, 2.5, true, [1, 8], {1 = 0.5, 8 = 0.5}, "text") and a bare word as a
/// string. The command line wins over the file: `none` removes an optional key (a core limit,
/// the batching window, a target), and setting one of `gears` / `max_gear` drops the other from
/// the file. Throws InputError: file:line:col for defects in the file, "<command line>" for a
/// malformed or unknown override (naming the accepted keys) or an override of the wrong type.
/// The lowest Poisson rate whose run of `arrivals` requests stays far inside the simulator's
/// clock (kMaxTimeUs): their expected span is at most a tenth of it, counted as at least 50
/// arrivals, so that no interarrival draw can reach it in practice. Scenarios below it are
/// refused; the capacity search does not go below it.
[[nodiscard]] double min_rate_qps(std::int64_t arrivals);

[[nodiscard]] Scenario load_scenario(const std::filesystem::path& file,
                                     const std::vector<std::string>& sets = {});

/// Loads the scenario's chip with its overlays: `hw` is a path (relative to the scenario's
/// folder or the working directory) or a chip name searched in `hw_dirs`. An unknown chip is an
/// InputError at the scenario's `hw` line.
[[nodiscard]] HwSpec load_scenario_hw(const Scenario& scenario,
                                      const std::vector<std::filesystem::path>& hw_dirs);

/// The chip the scenario graph's durations were measured on ([graph.measured].hw, a name
/// searched in `hw_dirs`, without overlays), when it is not `hw`; null otherwise (no measurement
/// conditions, or the same chip). An unknown chip is an InputError at the table.
[[nodiscard]] std::shared_ptr<const HwSpec> load_measured_hw(
    const Scenario& scenario, const HwSpec& hw, const std::vector<std::filesystem::path>& hw_dirs);

/// Every key a scenario accepts, as "section.key" (for --set, documentation and tests).
[[nodiscard]] const std::vector<std::string>& scenario_keys();

}  // namespace npusim::sim
