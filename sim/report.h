#pragma once
// Renderings of a SimResult: the JSON document of `npusim simulate --json`, the five-second text
// summary, and the timeline as Chrome-trace JSON (chrome://tracing, Perfetto, MindStudio Insight).

#include <string>

#include "sim/card_sim.h"

namespace npusim::sim {

/// The result as JSON (stable key order, fixed float formatting, so the same seed gives
/// byte-identical output). Keys: requests, qps, throughput, latency_ms {mean, p50, p90, p99,
/// p999, max}, utilization {cube, vector, aicpu, pcie}, cards_needed, ...
[[nodiscard]] std::string result_to_json(const SimResult& r);

/// A compact human summary (a dozen lines).
[[nodiscard]] std::string result_to_text(const SimResult& r);

/// The recorded timeline as Chrome-trace JSON: one track (thread) per stream's device queue and
/// host dispatch thread, one for the PCIe link; spans named as the ops of the graph.
[[nodiscard]] std::string trace_to_json(const SimResult& r);

}  // namespace npusim::sim
