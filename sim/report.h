#pragma once
// Renderings of a SimResult: the JSON document of `npusim simulate --json`, the five-second text
// summary, and the timeline as Chrome-trace JSON (chrome://tracing, Perfetto, MindStudio Insight).

#include <optional>
#include <string>

#include "sim/card_sim.h"

namespace npusim::sim {

/// The result as JSON (stable key order, fixed float formatting, so the same seed gives
/// byte-identical output). Keys: requests, qps, throughput, latency_ms {mean, p50, p90, p99,
/// p999, max}, utilization {cube, vector, aicpu, pcie}, cards_needed, ...
[[nodiscard]] std::string result_to_json(const SimResult& r);

/// A compact human summary (a dozen lines).
[[nodiscard]] std::string result_to_text(const SimResult& r);

/// The same scenario run twice more with every predicted op's device time scaled by its family's
/// P10 and then P90 factor (SimOptions::device_time_scale): the spread the model's held-out error
/// gives QPS and latency, assuming the ops of one family err together.
struct IntervalRuns {
  std::string source;  ///< where the factors come from, e.g. "cube 41 rows, all 731 rows"
  SimResult at_p10;    ///< every family at its P10 factor (the model's fast side)
  SimResult at_p90;    ///< every family at its P90 factor (the slow side)
};

/// result_to_json(r) with one more key, "interval": null when `interval` is empty (uncalibrated),
/// else {source, qps, p50_ms, p99_ms} where each figure is {low, high} over the two runs, and
/// runs {p10, p90} with each run's qps, p50_ms and p99_ms.
[[nodiscard]] std::string result_to_json(const SimResult& r,
                                         const std::optional<IntervalRuns>& interval);

/// result_to_text(r) with one more line: the QPS, P50 and P99 ranges of the two runs, or
/// "uncalibrated".
[[nodiscard]] std::string result_to_text(const SimResult& r,
                                         const std::optional<IntervalRuns>& interval);

/// The recorded timeline as Chrome-trace JSON: one track (thread) per stream's device queue and
/// host dispatch thread, one for the PCIe link; spans named as the ops of the graph.
[[nodiscard]] std::string trace_to_json(const SimResult& r);

}  // namespace npusim::sim
