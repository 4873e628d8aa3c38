#pragma once
// Does anchoring beat the plain model? Predict the rows of one run (the target) whose exact
// shapes another run (the source) never measured, three ways:
//   plain     the model's prediction;
//   anchored  the source's measured time of the nearest measured shape of the same op type,
//             times the model's ratio target / source (model/measured.h, anchored_us);
//   nearest   that measured time as it is (what a lookup table without a model would say);
//   structured  anchored on the nearest measured shape of the same structure (same_structure:
//             the same kernel at another size), the plain prediction where there is none.
// `npusim accuracy TARGET --anchor-from SOURCE` prints it; docs/accuracy.md has the numbers.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "model/accuracy.h"
#include "model/hw_spec.h"

namespace npusim {

/// The exact-shape key of a sample: type, then every input's shape, dtype and format.
[[nodiscard]] std::string shape_key(const OpDesc& op);

/// How far apart two ops of the same type are in shape: the sum over inputs of the absolute log
/// ratios of their dimensions (of their element counts when the ranks differ, plus 1), plus 1
/// per input whose dtype differs; a different input count is never near (+infinity).
[[nodiscard]] double shape_distance(const OpDesc& a, const OpDesc& b) noexcept;

/// True when two ops of a type run the same kernel at other sizes: the same inputs in number,
/// rank and dtype, and size-1 (broadcast) dimensions in the same places.
[[nodiscard]] bool same_structure(const OpDesc& a, const OpDesc& b) noexcept;

/// One compared row.
struct AnchorRow {
  std::size_t target = 0;  ///< index into the target samples
  std::size_t source = 0;  ///< index of the source row whose shape anchors it
  double measured_us = 0;  ///< the target row's measured time
  double plain_us = 0;
  double anchored_us = 0;
  double nearest_us = 0;   ///< the source shape's median measured time
  /// Anchored on the nearest source shape of the same structure (same_structure), or the plain
  /// prediction when the source has none.
  double structured_us = 0;
  bool has_structured = false;
};

/// The three predictions of the target rows with an unseen shape and a same-type source row.
struct AnchorComparison {
  std::size_t target_rows = 0;    ///< rows of the target
  std::size_t seen = 0;           ///< of them, shapes the source measured (left out)
  std::size_t no_same_type = 0;   ///< unseen, and no source row of the type (left out)
  std::size_t compared = 0;       ///< unseen rows predicted the three ways
  ErrorSummary plain;
  ErrorSummary anchored;
  ErrorSummary nearest;
  ErrorSummary structured;        ///< anchored on the same structure, else plain
  std::size_t with_structure = 0; ///< compared rows that had a source shape of the same structure
  ErrorSummary structure_rows_plain;     ///< on those rows only: the plain model
  ErrorSummary structure_rows_anchored;  ///< on those rows only: anchored on the same structure
  std::vector<AnchorRow> rows;  ///< the compared rows, in target order
  /// Per op type with at least 3 compared rows: {plain, anchored}.
  std::map<std::string, std::pair<ErrorSummary, ErrorSummary>> by_type;
};

/// Compares on `target` using the measurements of `source` (both with their L2 hit ratios
/// inferred, see infer_l2_hits). A source shape measured several times anchors on its median.
/// Each prediction uses the row's own block dim as its core budget, as predict_sample does.
[[nodiscard]] AnchorComparison compare_anchoring(const std::vector<Sample>& source,
                                                 const std::vector<Sample>& target,
                                                 const HwSpec& hw);

}  // namespace npusim
