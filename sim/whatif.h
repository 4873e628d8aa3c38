#pragma once
// What-if rewrites: the scenario's graph rewritten by each graph pass (model/passes.h) alone and
// by all of them together, each variant simulated at the scenario's load and searched for its
// capacity under the P99 target (find_max_qps), in parallel (run_parallel). Rows are ranked by
// what they buy. docs/whatif.md describes the output and its JSON schema.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/hw_spec.h"
#include "model/passes.h"
#include "model/predict.h"
#include "sim/scenario.h"

namespace npusim::sim {

/// What to evaluate.
struct WhatifSpec {
  std::vector<std::string> passes;  ///< pass names; empty = every pass
  PassOptions options;              ///< --assume-fits ...
  double max_qps_tolerance = 0.02;  ///< as for find_max_qps()
  /// The graph's measured chip when it is not the scenario's (load_measured_hw): measured ops
  /// are anchored on it (SimOptions::measured_hw).
  std::shared_ptr<const HwSpec> measured_hw;
  /// Also the cumulative steps from the baseline to `all`: the best-ranked pass, then the two
  /// best, ... (WhatifResult::waterfall). Only the steps between the first and the last are
  /// simulated anew: those two are the first pass's row and `all`.
  bool waterfall = false;
};

/// One variant of the graph and what it does.
struct WhatifRow {
  std::string name;  ///< "baseline", a pass name, or "all"
  /// Passes applied before this one in its variant: the ones that make it applicable (a pass
  /// that applies only once another has run, e.g. fold_bmm_batch after drop_redundant_tile).
  std::vector<std::string> with;
  std::vector<std::string> ops;  ///< ops of the scenario's graph the variant touches
  std::vector<GraphChange> changes;
  Graph graph;                     ///< the variant's graph
  double device_us_per_batch = 0;  ///< Σ predicted op time of one batch at reference_gear (µs)
  double latency_ms = 0;           ///< mean end-to-end latency at the scenario's load
  double p50_ms = 0;
  double p99_ms = 0;
  std::optional<double> qps_at_target;  ///< highest Poisson rate meeting target.p99_ms
  double latency_gain = 0;              ///< 1 - latency_ms / baseline's (0.2 = 20 % faster)
  std::optional<double> qps_gain;       ///< qps_at_target / baseline's - 1
  std::int64_t simulations = 0;
};

/// The baseline, every applicable pass (largest gain first) and all selected passes together.
struct WhatifResult {
  std::string scenario;
  std::int64_t reference_gear = 0;  ///< gear holding the mean request size (device_us_per_batch)
  bool searched_qps = false;        ///< false: not Poisson or no target.p99_ms (no QPS columns)
  std::optional<double> target_p99_ms;
  WhatifRow baseline;
  std::vector<WhatifRow> passes;            ///< applicable passes, ranked
  std::optional<WhatifRow> all;             ///< every selected pass in sequence; none if none apply
  std::vector<std::string> not_applicable;  ///< selected passes that found nothing to rewrite
  /// With WhatifSpec::waterfall: step k applies the k best-ranked passes (in pass order, as
  /// `all` does); its name is the pass step k adds, its `with` every pass applied. Gains are
  /// against the baseline. The last step is `all`.
  std::vector<WhatifRow> waterfall;
};

/// Σ over the graph's ops of predict() at `batch` within `budget` (a fixed duration_us op counts
/// as given), µs: the device (and host) time of one batch run alone, ignoring overlap.
[[nodiscard]] double graph_time_us(const Graph& graph, const HwSpec& hw, std::int64_t batch,
                                   CoreBudget budget);

/// Runs the what-if on `jobs` threads (0 = all local cores). Deterministic: results do not depend
/// on `jobs`. Throws InputError for an unknown pass, an --assume-fits op the graph lacks, or a
/// rewritten graph the scenario does not fit.
[[nodiscard]] WhatifResult run_whatif(const Scenario& scenario, const HwSpec& hw,
                                      const WhatifSpec& spec, unsigned jobs);

/// The result as one JSON object (schema in docs/whatif.md).
[[nodiscard]] std::string whatif_to_json(const WhatifResult& result);

/// The result as a table with each row's changes.
[[nodiscard]] std::string whatif_to_text(const WhatifResult& result);

}  // namespace npusim::sim
