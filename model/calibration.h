#pragma once
// Calibration: fit the cost model's parameters to measured samples by least squares on log
// relative error (Eigen, Levenberg–Marquardt with a robust loss), bounded to physically plausible
// ranges and pulled toward the spec's values so a small profile cannot drag them anywhere absurd.
// Holding data out of the fit is the caller's choice of indices (see split_samples).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/accuracy.h"
#include "model/hw_spec.h"

namespace npusim {

/// One fitted parameter: a spec key, its prior (spec) value, the fitted value and uncertainty.
struct FittedParam {
  std::string key;        ///< "section.key" as in the hw spec TOML
  double prior = 0;       ///< value before the fit
  double value = 0;       ///< fitted value
  double lo = 0, hi = 0;  ///< plausible range the fit was bounded to
  double rel_sigma = 0;   ///< 1-sigma relative uncertainty (0.1 = ±10 %); 0 when not identified
  bool identified = false;  ///< the fit rows constrain it (non-zero sensitivity)
};

/// Options of a fit.
struct CalibrationOptions {
  int max_iterations = 60;
  double prior_sigma = 0.7;   ///< prior width in log space (0.7: a factor of 2 is one sigma)
  double robust_scale = 0.5;  ///< log-error scale of the Cauchy loss (0.5: about ±65 %)
};

/// Result of a fit.
struct CalibrationResult {
  HwSpec fitted;                     ///< the spec with fitted values
  std::vector<FittedParam> params;   ///< every candidate parameter, identified or not
  int iterations = 0;
  double initial_cost = 0;           ///< robust cost before / after
  double final_cost = 0;
};

/// The parameters calibration may move, with their plausible ranges.
[[nodiscard]] std::vector<FittedParam> calibration_parameters(const HwSpec& hw);

/// Sets parameter `key` of `hw` (a key from calibration_parameters). Returns false if unknown.
bool set_param(HwSpec& hw, const std::string& key, double value);
/// Reads parameter `key` of `hw`.
[[nodiscard]] double get_param(const HwSpec& hw, const std::string& key);

/// Fits the parameters to `samples[fit]`.
[[nodiscard]] CalibrationResult calibrate(const std::vector<Sample>& samples,
                                          const std::vector<std::size_t>& fit, const HwSpec& prior,
                                          const CalibrationOptions& options = {});

/// How to hold data out.
enum class SplitKind : std::uint8_t {
  kShape,  ///< every (op type, shapes, dtypes) key goes wholly to fit or holdout
  kRow,    ///< rows at random (leaks repeated shapes; for comparison only)
  kFile    ///< whole groups (profiles) to fit or holdout; holdout rows whose shape key occurs
           ///< in the fit groups are dropped (they would leak)
};

/// Splits sample indices into fit and holdout, deterministically for a seed. `holdout_fraction`
/// in (0, 1). For kFile, whole groups are held out (at least one group each side).
void split_samples(const std::vector<Sample>& samples, SplitKind kind, double holdout_fraction,
                   std::uint64_t seed, std::vector<std::size_t>& fit,
                   std::vector<std::size_t>& holdout);

/// Held-out rows a family needs before it gets an interval of its own; fewer, and its ops use
/// the pooled "all" interval (the 10th and 90th percentiles of fewer than 8 rows are mostly the
/// extreme rows themselves).
inline constexpr std::size_t kMinIntervalRows = 8;

/// Prediction intervals from held-out rows: the 10th and 90th percentiles (linear interpolation
/// between order statistics) of measured / predicted device time, with `fitted` predicting each
/// row as predict_sample does. One entry per op family (family_name) with at least `min_rows`
/// usable rows, and "all" pooled over every row when there are at least `min_rows` of them; empty
/// otherwise. Rows with a non-positive measured or predicted time are not usable.
[[nodiscard]] std::map<std::string, ErrorInterval> prediction_intervals(
    const std::vector<Sample>& samples, const std::vector<std::size_t>& holdout,
    const HwSpec& fitted, std::size_t min_rows = kMinIntervalRows);

/// The interval that applies to an op of `family` on `hw`.
struct IntervalLookup {
  ErrorInterval interval;  ///< factors on the model's device time
  std::string source;      ///< the family's own name, or "all" when it falls back to the pool
};

/// The family's own interval, else the pooled "all" one; nullopt when `hw` carries none
/// (uncalibrated).
[[nodiscard]] std::optional<IntervalLookup> interval_for(const HwSpec& hw, OpFamily family);

/// One end of a prediction interval.
enum class IntervalEnd : std::uint8_t { kP10, kP90 };

/// The factor of every op family at one end of `hw`'s intervals, each from interval_for (its own
/// table, else "all"); empty when `hw` is uncalibrated. The families are those of the op table
/// plus the generic one that unknown op types get.
[[nodiscard]] std::map<OpFamily, double> interval_factors(const HwSpec& hw, IntervalEnd end);

/// "holdout of 41 cube rows" / "holdout of 120 rows, all families pooled": where an interval
/// comes from, for reports.
[[nodiscard]] std::string interval_source_text(const IntervalLookup& lookup);

/// The overlay TOML a fit writes: a comment header (provenance), a [meta] table, each
/// identified parameter with its prior and uncertainty in a comment, and the [intervals.NAME]
/// tables (with `interval_comment` lines above them saying which holdout they come from).
[[nodiscard]] std::string overlay_toml(const CalibrationResult& r,
                                       const std::vector<std::string>& header_lines,
                                       const std::vector<std::pair<std::string, std::string>>& meta,
                                       const std::map<std::string, ErrorInterval>& intervals = {},
                                       const std::vector<std::string>& interval_comment = {});

}  // namespace npusim
