#pragma once
// The learned correction's domain (issue #12 item 5): which rows lie close enough to its training
// for its answer to be trusted. The per-feature range test (FeatureRange) misses a workload the
// training never saw whose every feature lies inside the corpus's ranges (the CNN and BERT held
// out as workloads: corrected, their error doubled). This test measures the distance of a row to
// its nearest training row in standardised feature space (root mean square over the features
// that vary, in standard deviations) and compares it with how close the training's runs lie to
// one another: the threshold is a quantile of the distance from each training run's rows to the
// nearest row of another run, weighted as the training weighs its runs. A row farther from the
// training than that is left uncorrected. Rows repeated exactly in another run count at distance
// 0; when the quantile falls on them, the smallest distance above 0 stands in.

#include <cstdint>
#include <string>
#include <vector>

#include "model/correction_features.h"

namespace npusim {

struct DomainOptions {
  /// Quantile of the training's run-to-other-runs distances taken as the threshold; <= 0 turns
  /// the test off. Chosen on the corpus (docs/accuracy_mechanisms.md).
  double quantile = 0.6;
  /// At most this many distinct training rows are kept as reference points (an even sample
  /// beyond it), and as many are probed for the threshold.
  std::size_t max_points = 6000;
};

class CorrectionDomain {
 public:
  CorrectionDomain() = default;
  /// From the training rows `x`, their run index `run` and weight `w` (balanced_set's run
  /// weights). With a single run, each distinct row is measured against the others.
  [[nodiscard]] static CorrectionDomain build(const std::vector<CorrectionFeatures>& x,
                                              const std::vector<int>& run,
                                              const std::vector<double>& w,
                                              const DomainOptions& o);
  /// Whether the test is on (built from two or more distinct rows with quantile > 0).
  [[nodiscard]] bool active() const noexcept { return threshold_ > 0 && !points_.empty(); }
  /// Distance of `x` to its nearest reference point, in standard deviations; when `stop` > 0 the
  /// search may stop at any point closer than `stop` (the answer is then only known to be below).
  [[nodiscard]] double distance(const CorrectionFeatures& x, double stop = 0) const;
  /// Empty when `x` is inside; otherwise the reason ("distance 3.2 to the nearest training row,
  /// beyond 1.1").
  [[nodiscard]] std::string outside(const CorrectionFeatures& x) const;
  [[nodiscard]] double threshold() const noexcept { return threshold_; }

  /// For the correction file: the standardisation, the threshold and the points.
  std::vector<double> mean, scale;  ///< scale 0: a feature left out (constant in training)
  [[nodiscard]] const std::vector<std::vector<float>>& points() const noexcept { return points_; }
  /// Restores a domain read from a file; throws std::invalid_argument when inconsistent.
  [[nodiscard]] static CorrectionDomain restore(std::vector<double> mean, std::vector<double> scale,
                                                double threshold,
                                                std::vector<std::vector<float>> points);

 private:
  [[nodiscard]] std::vector<float> standardise(const CorrectionFeatures& x) const;
  double threshold_ = 0;
  std::vector<std::size_t> used_;  ///< features with scale > 0
  std::vector<std::vector<float>> points_;  ///< standardised, over used_ only
};

}  // namespace npusim
