#pragma once
// The evaluation protocol of issue #12: how wrong the model is on runs it was never tuned on.
// Leave-one-run-out (the headline): for each run, fit on every other run, test on it. Leave-one-
// workload-out (stricter): every run of the left-out workload at once (all batch sizes of BERT).
// Per run: uncalibrated and calibrated MAPE, median, P90 and step-total error; over runs, the
// median and the worst. The shape split pools every run and holds out 30 % of the shape keys,
// averaged over several seeds. Calibration is the transfer fit (model/transfer_fit.h).

#include <cstdint>
#include <string>
#include <vector>

#include "model/accuracy.h"
#include "model/correction.h"
#include "model/hw_spec.h"
#include "model/transfer_fit.h"

namespace npusim {

/// One run of the corpus, loaded.
struct CvRun {
  std::string name;
  std::string workload;
  std::string chip;            ///< chip key (the chip file's name)
  HwSpec spec;                 ///< with the run's measured clock when it has cycle counts
  bool clock_measured = true;
  std::vector<Sample> samples;
};

/// One run's figures.
struct CvRunResult {
  std::string name, workload, chip;
  ErrorSummary uncalibrated;
  ErrorSummary loro;           ///< calibrated on every other run
  ErrorSummary lowo;           ///< calibrated on every run of other workloads
  std::string loro_verdict, lowo_verdict;
  bool loro_kept_spec = false, lowo_kept_spec = false;
  /// With the learned correction (CvOptions::correction) trained on the same fold's training
  /// runs, predicted with the fold's calibrated overlay; rows it left uncorrected as outside
  /// its training. Equal to loro / lowo when the correction is none.
  ErrorSummary loro_corrected, lowo_corrected;
  std::size_t loro_ood = 0, lowo_ood = 0;
  /// Per row, in the run's sample order (CvOptions::keep_rows only): the uncalibrated, the
  /// leave-one-run-out and (with a correction) the corrected prediction, µs.
  std::vector<double> uncal_us, loro_us, loro_corrected_us;
};

/// Median and worst of one figure over runs.
struct OverRuns {
  double median = 0, worst = 0;
};

/// The shape split of one seed.
struct CvShapeSplit {
  std::uint64_t seed = 0;
  ErrorSummary uncalibrated, calibrated;  ///< pooled over every run's held-out rows
  ErrorSummary corrected;                 ///< calibrated and corrected
  std::size_t ood = 0;
  bool kept_spec = false;
};

struct CvOptions {
  bool leave_one_workload_out = true;
  int shape_seeds = 4;           ///< 0: no shape split
  double shape_holdout = 0.3;
  TransferOptions fit;
  CorrectionOptions correction;  ///< kind none: no correction
  bool keep_rows = false;        ///< keep every row's predictions in CvRunResult
};

struct CvReport {
  std::vector<CvRunResult> runs;
  std::vector<CvShapeSplit> shape;
  /// Over runs: MAPE and step-total error, uncalibrated / leave-one-run-out / -workload-out.
  OverRuns uncal_mape, loro_mape, lowo_mape, uncal_total, loro_total, lowo_total;
  double shape_uncal_mape = 0, shape_cal_mape = 0;  ///< means over seeds
  /// The same with the correction; rows left uncorrected over every run (LORO, LOWO).
  OverRuns loro_corr_mape, lowo_corr_mape, loro_corr_total, lowo_corr_total;
  double shape_corr_mape = 0;
  std::size_t loro_ood = 0, lowo_ood = 0, loro_rows = 0;
  double correction_seconds = 0;  ///< wall time spent building training sets and training
  int corrections_trained = 0;
};

/// Runs the protocol. Needs at least two runs.
[[nodiscard]] CvReport cross_validate(const std::vector<CvRun>& runs, const CvOptions& options);

/// Median and worst (largest) of `v` (0, 0 when empty). The median of an even count is the mean
/// of the two middle values.
[[nodiscard]] OverRuns over_runs(std::vector<double> v);

}  // namespace npusim
