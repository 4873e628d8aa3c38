#pragma once
// A learned correction on top of the op model (issue #12 item 5), in the spirit of hybrid
// predictors (NeuSight, Habitat): the analytical model predicts, and a small regressor trained on
// measured rows predicts the log of measured / predicted from the model's own features
// (model/correction_features.h). Two regressors: ridge regression on standardised features
// (Eigen) and gradient-boosted trees (XGBoost, model/correction_gbt.h). A training run weighs
// the square root of its rows in total (CorrectionOptions::run_weight_power), so a run of 5,892
// rows does not drown one of 32.
//
// A row outside what the correction was trained on (a family it never saw, a feature beyond its
// training range by a margin, or farther from every training row than the training's runs lie
// from each other: model/correction_domain.h) gets no correction and is counted: the model's
// answer stands.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/accuracy.h"
#include "model/correction_domain.h"
#include "model/correction_features.h"
#include "model/correction_gbt.h"
#include "model/hw_spec.h"

namespace npusim {

enum class CorrectionKind : std::uint8_t { kNone, kRidge, kGbt };
[[nodiscard]] const char* correction_kind_name(CorrectionKind k) noexcept;
/// "none", "ridge", "gbt"; nullopt otherwise.
[[nodiscard]] std::optional<CorrectionKind> parse_correction_kind(std::string_view s) noexcept;

struct CorrectionOptions {
  CorrectionKind kind = CorrectionKind::kNone;
  FeatureSet features;        ///< optional features (hashed op type, chip figures)
  double ood_margin = 0.1;    ///< FeatureRange::margin
  DomainOptions domain;       ///< the distance test (model/correction_domain.h)
  /// A training run's total weight is proportional to its rows to this power: 0 each run the
  /// same, 1 each row the same. 0.5 measured best on the corpus (docs/accuracy_mechanisms.md).
  double run_weight_power = 0.5;
  double max_log_target = 3;  ///< training targets clipped to ±this (a factor of 20)
  double ridge_alpha = 1;     ///< ridge penalty per unit of total row weight, standardised features
  GbtOptions gbt;
};

/// Training rows: features, target log(measured / predicted), weight.
struct CorrectionSet {
  std::vector<CorrectionFeatures> x;
  std::vector<double> y, w;
  std::vector<int> run;  ///< which training run (or input group) each row is from
  /// Appends the rows `rows` of `samples` predicted on `hw`, each weighted `weight`; rows with no
  /// positive measured or predicted time are skipped. Returns how many were added.
  std::size_t add_run(const std::vector<Sample>& samples, const std::vector<std::size_t>& rows,
                      const HwSpec& hw, double weight, FeatureSet features, int run_index = 0);
};

/// Builds a set from several runs' rows so that each run's rows weigh rows^run_weight_power in
/// total (0: every run the same) and the mean row weight is 1. `runs[i]` is (samples, rows, hw);
/// each row's `run` is its index among the runs that gave rows.
struct CorrectionRunRows {
  const std::vector<Sample>* samples = nullptr;
  std::vector<std::size_t> rows;
  HwSpec hw;
};
[[nodiscard]] CorrectionSet balanced_set(const std::vector<CorrectionRunRows>& runs,
                                         FeatureSet features, double run_weight_power);

/// One row's answer.
struct CorrectionApplied {
  double factor = 1;  ///< multiply the model's prediction by this
  double raw_factor = 1;  ///< the regressor's answer, applied or not
  bool ood = false;   ///< outside the training: factor is 1
  std::string why;    ///< when ood, the reason
};

class Correction {
 public:
  /// An empty correction (kind none): factor 1 everywhere, nothing out of distribution.
  Correction() = default;
  [[nodiscard]] static Correction train(const CorrectionSet& set, const CorrectionOptions& options);
  [[nodiscard]] std::vector<CorrectionApplied> apply(const std::vector<CorrectionFeatures>& x) const;
  [[nodiscard]] CorrectionKind kind() const noexcept { return options_.kind; }
  [[nodiscard]] const CorrectionOptions& options() const noexcept { return options_; }
  [[nodiscard]] std::size_t training_rows() const noexcept { return rows_; }
  [[nodiscard]] const CorrectionDomain& domain() const noexcept { return domain_; }
  [[nodiscard]] const FeatureRange& range() const noexcept { return range_; }

  /// The correction as a text file (model/correction_io.cpp): options, feature ranges, the
  /// regressor (ridge coefficients or XGBoost's JSON model). `parse` reads it back; a malformed
  /// file throws InputError at `file`:line.
  [[nodiscard]] std::string serialize() const;
  [[nodiscard]] static Correction parse(const std::string& text, const std::string& file);

 private:
  CorrectionOptions options_;
  FeatureRange range_;
  CorrectionDomain domain_;
  std::size_t rows_ = 0;
  std::vector<double> mean_, scale_, beta_;  ///< ridge, on standardised features
  double intercept_ = 0;
  GbtModel gbt_;
};

/// The error of `rows` of `samples` on `hw` with the correction: overall and per family, and the
/// rows left uncorrected, counted by reason (the feature named first in the reason, or
/// "family X").
struct CorrectedReport {
  ErrorSummary overall;
  std::map<std::string, ErrorSummary> by_family;
  std::size_t ood = 0;
  std::map<std::string, std::size_t> ood_reasons;
};
[[nodiscard]] CorrectedReport evaluate_corrected(const std::vector<Sample>& samples,
                                                 const std::vector<std::size_t>& rows,
                                                 const HwSpec& hw, const Correction& c);

/// Predictions of `rows` of `samples` on `hw` after the correction; counts the rows left
/// uncorrected as out of distribution in `*ood` when given.
[[nodiscard]] std::vector<double> corrected_predictions(const std::vector<Sample>& samples,
                                                        const std::vector<std::size_t>& rows,
                                                        const HwSpec& hw, const Correction& c,
                                                        std::size_t* ood = nullptr);

}  // namespace npusim
