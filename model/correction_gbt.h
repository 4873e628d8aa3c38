#pragma once
// Gradient-boosted regression trees: trained through XGBoost's C API (Debian's libxgboost-dev),
// set for determinism (one thread, a fixed seed, no row or column sampling, the histogram tree
// method), then copied out of XGBoost into plain arrays that this file evaluates itself. A tree
// read from a file is checked node by node (children after their parent, feature indices in
// range, finite values) before it is used: XGBoost's own loader takes a damaged model and
// crashes on it at prediction (found by fuzz/fuzz_correction.cpp), so it never sees a file.

#include <cstdint>
#include <string>
#include <vector>

namespace npusim {

struct GbtOptions {
  int rounds = 150;
  int max_depth = 6;
  double eta = 0.1;
  double min_child_weight = 20;  ///< in units of row weight (mean row weight is 1)
  double lambda = 1;
  std::uint64_t seed = 0;
};

/// One tree; node 0 is the root. A leaf has left = right = -1 and its output in `value`; an
/// inner node goes left when x[feature] < value (compared in float, as XGBoost does).
struct GbtTree {
  std::vector<int> left, right, feature;
  std::vector<float> value;
};

class GbtModel {
 public:
  GbtModel() = default;
  /// Checks the trees against `features` columns; throws std::invalid_argument saying what is
  /// wrong (tree and node).
  GbtModel(double base_score, std::vector<GbtTree> trees, std::size_t features);

  /// Fits rows of `cols` features each (row-major `x`), targets `y`, weights `w`. Throws
  /// std::runtime_error with XGBoost's message on failure.
  [[nodiscard]] static GbtModel train(const std::vector<float>& x, std::size_t cols,
                                      const std::vector<float>& y, const std::vector<float>& w,
                                      const GbtOptions& options);
  /// Predictions for rows of `cols` features (row-major).
  [[nodiscard]] std::vector<double> predict(const std::vector<float>& x, std::size_t cols) const;

  [[nodiscard]] double base_score() const noexcept { return base_; }
  [[nodiscard]] const std::vector<GbtTree>& trees() const noexcept { return trees_; }

 private:
  double base_ = 0;
  std::vector<GbtTree> trees_;
};

}  // namespace npusim
