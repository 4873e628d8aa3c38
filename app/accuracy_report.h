#pragma once
// Formatting of accuracy reports, shared by `npusim accuracy` and `npusim calibrate`.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/accuracy.h"

namespace npusim::app {

/// {rows, mape, median_ape, p90_ape, pearson_r_log, step_total_error} (errors as fractions).
[[nodiscard]] nlohmann::ordered_json summary_json(const ErrorSummary& e);
/// {overall, by_family, by_type, by_regime}.
[[nodiscard]] nlohmann::ordered_json report_json(const AccuracyReport& r);
/// A table: overall, per family, per regime, per op type.
[[nodiscard]] std::string report_text(const AccuracyReport& r, const std::string& title);
/// The op types with the largest time-weighted error, each with its pipe-level discrepancy
/// (median predicted/measured ratio of MTE2, vector, cube, scalar, MTE3 busy time).
[[nodiscard]] std::string worst_types_text(const std::vector<Sample>& samples,
                                           const AccuracyReport& r, std::size_t n);
[[nodiscard]] nlohmann::ordered_json worst_types_json(const std::vector<Sample>& samples,
                                                      const AccuracyReport& r, std::size_t n);
/// One CSV line per row: source, type, family, block_dim, measured_us, predicted_us, ape, bound,
/// and measured/predicted pipe times.
[[nodiscard]] std::string rows_csv(const std::vector<Sample>& samples, const AccuracyReport& r);

}  // namespace npusim::app
