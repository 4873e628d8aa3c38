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

}  // namespace npusim::sim
