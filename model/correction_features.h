#pragma once
// The features of the learned correction (issue #12 item 5): what the op model itself knows about
// a row — its family, its predicted time and how that time splits over pipes and critical-path
// parts, the bound, bytes and FLOPs, the launch geometry and the chip's figures. No op-type name
// is a feature by default (a name does not transfer to ops the training never saw); an optional
// hashed type feature exists to measure exactly that. Also the out-of-distribution test: the
// range of each feature and the families the training saw.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/accuracy.h"
#include "model/hw_spec.h"

namespace npusim {

/// Number of features per row; names in correction_feature_names().
inline constexpr std::size_t kCorrectionFeatures = 47;
/// The first kFamilyFeatures features are the family one-hot (OpFamily order).
inline constexpr std::size_t kFamilyFeatures = 8;

using CorrectionFeatures = std::array<double, kCorrectionFeatures>;

/// Which optional features are filled (the others are 0).
struct FeatureSet {
  bool hashed_type = false;  ///< the last feature: a hash of the op type in [0, 1)
  bool chip = true;          ///< cube and vector core counts and the clock
};

/// The features of `s` predicted as `p` on `hw` (p.predicted_us > 0).
[[nodiscard]] CorrectionFeatures correction_features(const Sample& s, const SamplePrediction& p,
                                                     const HwSpec& hw, FeatureSet set = {});

/// Short names of the features, for reports and model files.
[[nodiscard]] const std::array<const char*, kCorrectionFeatures>& correction_feature_names();

/// The OOD test: a row is outside the training when its family was never trained on, or when a
/// checked feature lies beyond the training range by more than margin × max(range, 1) (the
/// features are logs, fractions or core counts). One-hot, bound, format and hash features are not
/// range-checked.
struct FeatureRange {
  CorrectionFeatures lo{}, hi{};
  std::array<bool, kFamilyFeatures> family_seen{};
  double margin = 0.1;

  /// Widens the ranges to include `x` and marks its family seen.
  void add(const CorrectionFeatures& x);
  /// Empty when `x` is inside; otherwise why not ("family Sort never trained on",
  /// "log_pred_us 9.21 outside [0.1, 7.3]").
  [[nodiscard]] std::string outside(const CorrectionFeatures& x) const;
  bool any = false;  ///< at least one row added
};

}  // namespace npusim
