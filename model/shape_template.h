#pragma once
// Shape templates: the dimension grammar of graph files, in one place ("7", "B", "B*k", "k*B"),
// and the operations on shape lists written with it (batch substitution, comparison, splitting).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"

namespace npusim {

/// One dimension of a shape template: k, or k·B when `batch`.
struct DimTemplate {
  std::int64_t k = 1;
  bool batch = false;
};
/// The dimension grammar of shape templates, in one place: an integer ("7", any sign: make_op
/// judges its value), "B", or "B*k" / "k*B" with a positive integer k (spaces allowed around
/// the parts). nullopt for anything else.
[[nodiscard]] std::optional<DimTemplate> parse_dim_template(std::string_view dim) noexcept;

/// Replaces the batch symbol in a shape list ("B,4000;400,1" at 8 -> "8,4000;400,1").
/// Throws InputError at `pos` for a dimension that is neither an integer nor B, B*k, k*B.
[[nodiscard]] std::string substitute_batch(std::string_view shapes, std::int64_t batch,
                                           const SourcePos& pos);
/// True when two shape templates are the same shape ("B*1,4" and "B,4" are; spaces ignored).
[[nodiscard]] bool same_shape_template(std::string_view a, std::string_view b) noexcept;
/// The shapes of a shape list ("a;b;c" -> {"a","b","c"}; "" -> {""}, one scalar).
[[nodiscard]] std::vector<std::string> split_shape_list(std::string_view list);
/// True when a shape list mentions the batch symbol B.
[[nodiscard]] bool mentions_batch(std::string_view shapes) noexcept;

}  // namespace npusim
