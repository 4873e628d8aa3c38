#pragma once
// How wrong the op model is against measured rows: per-row comparison and the summaries a
// performance engineer reads (MAPE, median and P90 absolute percentage error, Pearson r of log
// durations, the time-weighted error of the step total), overall and per family, op type and
// regime. Pure model code: the app turns profile rows into Samples.

#include <map>
#include <string>
#include <vector>

#include "model/hw_spec.h"
#include "model/op_cost.h"
#include "model/op_desc.h"
#include "model/prepared_op.h"

namespace npusim {

/// One measured execution of one op.
struct Sample {
  OpDesc op;
  double measured_us = 0;      ///< device duration (Task Duration)
  int block_dim = 0;           ///< measured block dim (0 = unknown: the whole chip)
  bool has_pipes = false;      ///< measured pipe times present
  PipeTimes measured_pipes;    ///< per-core pipe busy times as the profile gives them
  std::string source;          ///< file:line of the row
  std::string group;           ///< which input it came from (file, rank) for --split file
  std::int64_t start_ns = 0;   ///< start time, for the order of ops within a group
  double l2_hit_ratio = -1;    ///< share of input bytes found in L2 (-1: the spec's default)
};

/// Estimates each sample's L2 hit ratio from the ops before it in its group (in start order):
/// an input whose shape and dtype match the output of an earlier op, with less than the L2's
/// capacity written since, is read from L2 (DESIGN.md: whether an input is L2-resident is a
/// graph-level fact). Tensors that fit nowhere near L2 never hit.
void infer_l2_hits(std::vector<Sample>& samples, const HwSpec& hw);

/// The model's answer for a sample, as compared.
struct SamplePrediction {
  OpCost cost;
  double predicted_us = 0;  ///< duration minus host-side time (what a Task Duration measures)
  double ape = 0;           ///< |predicted - measured| / measured
};

/// Error figures over a set of rows; errors are fractions (0.12 = 12 %).
struct ErrorSummary {
  std::size_t rows = 0;
  double mape = 0;
  double median_ape = 0;
  double p90_ape = 0;
  double pearson_r_log = 0;     ///< correlation of log durations (0 when fewer than 3 rows)
  double step_total_error = 0;  ///< |Σ predicted − Σ measured| / Σ measured
  double measured_total_us = 0;
  double predicted_total_us = 0;
};

/// Everything `npusim accuracy` prints.
struct AccuracyReport {
  ErrorSummary overall;
  std::map<std::string, ErrorSummary> by_family;
  std::map<std::string, ErrorSummary> by_type;    ///< op types with at least min_rows_per_type rows
  std::map<std::string, ErrorSummary> by_regime;  ///< tiny/large, aligned/unaligned, partial/full cores
  std::vector<SamplePrediction> rows;             ///< one per sample, same order
};

/// Predicts one sample with its measured block dim as the core budget.
[[nodiscard]] SamplePrediction predict_sample(const Sample& s, const HwSpec& hw);
/// As above with `op` = s.op prepared once (model/prepared_op.h): what a fit that predicts the
/// same rows under many candidate specs calls.
[[nodiscard]] SamplePrediction predict_sample(const Sample& s, const PreparedOp& op, const HwSpec& hw);

/// Summary of parallel arrays of measured and predicted durations.
[[nodiscard]] ErrorSummary summarize(const std::vector<double>& measured,
                                     const std::vector<double>& predicted);

/// The regimes a sample belongs to: "tiny (<10 us)" or "large (>=10 us)"; "aligned last axis" or
/// "unaligned last axis"; "block dim below core count" or "block dim at core count".
[[nodiscard]] std::vector<std::string> regimes_of(const Sample& s, const HwSpec& hw);

/// Predicts every sample and summarises.
[[nodiscard]] AccuracyReport evaluate_accuracy(const std::vector<Sample>& samples, const HwSpec& hw,
                                               std::size_t min_rows_per_type = 3);

/// Subset of a report's samples (by index), summarised the same way.
[[nodiscard]] AccuracyReport evaluate_accuracy_subset(const std::vector<Sample>& samples,
                                                      const std::vector<std::size_t>& indices,
                                                      const HwSpec& hw,
                                                      std::size_t min_rows_per_type = 3);

}  // namespace npusim
