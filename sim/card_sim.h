#pragma once
// One card serving traffic: arrivals, the batcher (window, gears, padding, oversize split), a
// shared ready queue feeding `streams` instances, and per instance the host dispatch thread and
// the in-order device stream that runs the graph, contending for cube/vector cores, HBM and L2
// bandwidth, L2 capacity, the shared host cores, the card's task scheduler, AI CPU cores and the
// PCIe link. Mechanisms and their choices: docs/scenarios.md.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/hw_spec.h"
#include "model/op_desc.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace npusim::sim {

/// What to record besides the metrics.
struct SimOptions {
  bool trace = false;                     ///< record a timeline (Chrome trace)
  std::size_t trace_max_spans = 500'000;  ///< stop recording after this many spans
  /// Factor on the model's device time of each predicted op, by op family (absent: 1). Ops whose
  /// graph gives a measured duration and host-side time are not scaled. `simulate` runs the
  /// scenario again at the P10 and P90 factors of a calibration's prediction intervals.
  std::map<OpFamily, double> device_time_scale;
  /// The chip named by the graph's [graph.measured].hw, when it is not the scenario's chip:
  /// anchored ops (model/measured.h) take the model's prediction on it. Required then.
  std::shared_ptr<const HwSpec> measured_hw;
};

/// How many of something ran measured, anchored or predicted (model/measured.h).
struct TimeSourceCounts {
  std::int64_t measured = 0;
  std::int64_t anchored = 0;
  std::int64_t predicted = 0;
};

/// Latency summary of the measured requests, milliseconds.
struct LatencyStats {
  double mean_ms = 0;
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
  double p999_ms = 0;
  double max_ms = 0;
};

/// Per-op totals over the measured window.
struct OpStats {
  std::string name;
  std::string type;
  std::int64_t executions = 0;
  double device_us = 0;  ///< summed device time (start on the device to done, incl. HBM waits)
  double share = 0;      ///< device_us / all ops' device_us
  double mean_us = 0;    ///< device_us / executions
  /// Where its time came from: "measured", "anchored" (at any gear it ran at) or "predicted".
  std::string source = "predicted";
};

/// One span of the timeline.
struct TraceSpan {
  std::uint32_t track = 0;  ///< index into SimResult::trace_tracks
  std::uint32_t name = 0;   ///< index into SimResult::trace_names
  TimeNs start_ns = 0;
  TimeNs duration_ns = 0;
  std::int64_t batch = -1;  ///< batch id, -1 when not tied to one
};

/// One sample of the busy cores of the card (a counter track of the timeline).
struct TraceCores {
  TimeNs at_ns = 0;
  int cube_busy = 0;
  int vector_busy = 0;
};

/// Everything a run measured. Times in the units their names say.
struct SimResult {
  std::string scenario;
  std::string hw;
  std::uint64_t seed = 0;
  int streams = 0;
  std::int64_t requests = 0;  ///< measured requests completed
  std::int64_t warmup_requests = 0;
  std::int64_t samples = 0;             ///< samples of the measured requests
  std::int64_t batches = 0;             ///< batches run (all, including warm-up)
  std::int64_t split_requests = 0;      ///< measured requests split into chunks
  double mean_batch_samples = 0;        ///< real samples per batch
  double mean_gear = 0;                 ///< padded batch size per batch
  double window_s = 0;                  ///< first measured arrival to last measured completion
  std::int64_t window_completions = 0;  ///< requests (any) completed inside the window
  double qps = 0;                       ///< window_completions / window
  double throughput = 0;                ///< samples of those requests / window
  LatencyStats latency;
  double queue_ms_mean = 0;    ///< arrival to the start of service (batching, PCIe, ready queue)
  double service_ms_mean = 0;  ///< start of service on a stream to completion
  double service_ms_sd = 0;  ///< standard deviation of the service time (not in the reports)
  double service_ms_min = 0;
  double service_ms_max = 0;
  double in_system_mean = 0;      ///< time-average requests in the system (Little's L)
  double cube_utilization = 0;    ///< busy cube cores / cube cores, time-averaged
  double vector_utilization = 0;  ///< busy vector cores / vector cores
  double aicpu_utilization = 0;
  double pcie_utilization = 0;      ///< host->device link busy share
  double pcie_out_utilization = 0;  ///< device->host link busy share
  double host_utilization = 0;       ///< busy share of the shared host cores (0 when unlimited)
  double scheduler_utilization = 0;  ///< busy share of the card's task scheduler (0: no limit)
  double hbm_bytes_per_us = 0;      ///< achieved HBM traffic over the window
  double device_idle_share = 0;     ///< of stream busy time, the share with no op on the device
  std::optional<std::int64_t> cards_needed;  ///< ceil(target.traffic_qps / qps)
  std::optional<bool> p99_met;               ///< latency.p99_ms <= target.p99_ms
  std::vector<OpStats> ops;                  ///< in topological order
  /// Graph ops by where their time came from (OpStats::source), and their executions in the
  /// measured window by the same.
  TimeSourceCounts op_sources;
  TimeSourceCounts execution_sources;
  std::uint64_t events = 0;                  ///< kernel events processed
  std::vector<std::string> warnings;         ///< what the op model had to guess, once per op
  std::vector<std::string> trace_tracks;
  std::vector<std::string> trace_names;
  std::vector<TraceSpan> trace;
  std::vector<TraceCores> trace_cores;  ///< busy cores after each change, while recording
  /// A SimRun finished before its end (its P99 verdict was settled): the metrics cover only what
  /// ran, except p99_met, which is the full run's.
  bool stopped_early = false;
};

/// Checks what can only be checked once the chip is known (core limits, op attributes the
/// simulator reads: api, recompile, block_dim, dynamic_shape, ignores_core_limit) without running
/// anything. Throws InputError at the scenario's or graph's file:line.
void check_scenario_fits(const Scenario& scenario, const HwSpec& hw);

/// Loads a scenario file and its chip and checks that they fit; returns a one-line description
/// for `npusim validate`. Throws InputError.
[[nodiscard]] std::string check_scenario_file(const std::filesystem::path& file,
                                              const std::vector<std::filesystem::path>& hw_dirs);

/// Runs the scenario on `hw`. Deterministic for the scenario's seed. Throws InputError when
/// the scenario does not fit the chip (core limit above the chip's cores, an attribute of the
/// wrong form), InternalError on a broken invariant.
[[nodiscard]] SimResult simulate(const Scenario& scenario, const HwSpec& hw,
                                 const SimOptions& options = {});

/// A run of simulate() taken in steps: it pauses after a number of measured requests and resumes
/// where it paused, event for event the run simulate() makes (no options: no trace, no scaling).
/// The capacity search (sim/capacity.h) looks at a rate's first requests before paying for the
/// rest, and stops a run whose P99 verdict is settled (sim/p99_watch.h).
class SimRun {
 public:
  /// Keeps its own copy of the scenario. With `stop_when_over` and a target.p99_ms, the run stops
  /// for good once enough measured requests exceed the target that the full run's P99 must.
  /// Throws InputError as simulate() does.
  /// `options` as simulate()'s (the capacity search passes the measured chip; no trace).
  SimRun(Scenario scenario, const HwSpec& hw, bool stop_when_over, const SimOptions& options = {});
  ~SimRun();
  SimRun(SimRun&&) noexcept;
  SimRun& operator=(SimRun&&) noexcept;
  SimRun(const SimRun&) = delete;
  SimRun& operator=(const SimRun&) = delete;

  /// Runs until at least `measured` measured requests have completed, the verdict is settled
  /// over (with stop_when_over), or the run ended. Nothing happens when it already got there.
  void advance(std::int64_t measured);
  /// Runs to the end, settled or not.
  void advance_to_end();
  /// Every request completed.
  [[nodiscard]] bool ended() const;
  /// The full run's P99 must exceed target.p99_ms (false without a target).
  [[nodiscard]] bool settled_over() const;
  /// Nothing more will run without advance_to_end(): ended, or stopped once settled over.
  [[nodiscard]] bool done() const;
  /// Measured requests completed so far.
  [[nodiscard]] std::int64_t measured_done() const;
  /// Measured requests known to exceed target.p99_ms, and those whose side is known
  /// (P99Watch::over, P99Watch::resolved; 0 and measured_done() without a target).
  [[nodiscard]] std::int64_t over() const;
  [[nodiscard]] std::int64_t resolved() const;
  /// The nearest-rank P99 in ms of the measured requests resolved so far (those in flight and over
  /// the target count at their age so far); the run's P99 once it ended. 0 before any.
  [[nodiscard]] double p99_so_far_ms() const;
  /// Kernel events processed so far (the cost of the run).
  [[nodiscard]] std::uint64_t events() const;
  /// The scenario it runs.
  [[nodiscard]] const Scenario& scenario() const;
  /// The result (call once): simulate()'s when ended(), else that of what ran (stopped_early).
  [[nodiscard]] SimResult finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npusim::sim
