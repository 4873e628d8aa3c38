#pragma once
// predict(): the op model's one entry point.

#include "model/hw_spec.h"
#include "model/op_cost.h"
#include "model/op_desc.h"
#include "model/prepared_op.h"

namespace npusim {

/// How many cores of each kind the op may use (its stream's core limit). 0 = the whole chip.
struct CoreBudget {
  int cube_cores = 0;
  int vector_cores = 0;
  /// The kernel's launch block dim when known (a profile row); 0 = unknown. A launch of more
  /// blocks than the chip has cores runs its blocks in waves (model/cost/kernel_plan.cpp).
  int launch_blocks = 0;
};

/// Context the simulator knows and a lone op does not.
struct PredictContext {
  /// Fraction of the op's GM reads that hit L2; negative = the spec's default.
  double l2_hit_ratio = -1;
  /// Fraction of the chip's HBM bandwidth this op may use (the simulator shares it); (0, 1].
  double hbm_share = 1;
};

/// Predicts one execution of `op` on `hw` within `budget`. Never throws on a well-formed OpDesc;
/// never allocates on a prepared op. Every part of the result traces to a field of `hw` or of `op`.
/// The PreparedOp form is the fast path for an op predicted more than once (model/prepared_op.h);
/// the OpDesc form prepares the op first and gives the same bits.
[[nodiscard]] OpCost predict(const PreparedOp& op, const HwSpec& hw, CoreBudget budget = {},
                             const PredictContext& ctx = {});
[[nodiscard]] OpCost predict(const OpDesc& op, const HwSpec& hw, CoreBudget budget = {},
                             const PredictContext& ctx = {});

}  // namespace npusim
