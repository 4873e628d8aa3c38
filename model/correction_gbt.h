#pragma once
// Gradient-boosted regression trees through XGBoost's C API (Debian's libxgboost-dev), set for
// determinism: one thread, a fixed seed, no row or column sampling, the histogram tree method.
// Owns its booster; the learned correction (model/correction.h) is its only user.

#include <cstdint>
#include <memory>
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

class GbtModel {
 public:
  GbtModel();
  ~GbtModel();
  GbtModel(GbtModel&&) noexcept;
  GbtModel& operator=(GbtModel&&) noexcept;
  GbtModel(const GbtModel&) = delete;
  GbtModel& operator=(const GbtModel&) = delete;

  /// Fits rows of `cols` features each (row-major `x`), targets `y`, weights `w`. Throws
  /// std::runtime_error with XGBoost's message on failure.
  [[nodiscard]] static GbtModel train(const std::vector<float>& x, std::size_t cols,
                                      const std::vector<float>& y, const std::vector<float>& w,
                                      const GbtOptions& options);
  /// Predictions for rows of `cols` features (row-major).
  [[nodiscard]] std::vector<double> predict(const std::vector<float>& x, std::size_t cols) const;
  /// The booster as XGBoost's JSON model, and back.
  [[nodiscard]] std::string save() const;
  [[nodiscard]] static GbtModel load(const std::string& json);
  [[nodiscard]] bool empty() const noexcept { return handle_ == nullptr; }

 private:
  void* handle_ = nullptr;  ///< BoosterHandle
};

}  // namespace npusim
