#pragma once
// The one table of op types (CONVENTIONS.md: "The only place that lists op types and cost-model
// families is one table"). Each CANN op type maps to a family, a role inside the family, a default
// placement and the vector instruction passes its kernel makes per element.

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "model/hw_spec.h"
#include "model/op_desc.h"

namespace npusim {

/// What an op does inside its family; selects the plan builder's shape rules.
enum class OpRole : std::uint8_t {
  kMatMul, kBatchMatMul, kAttention,                 // cube (attention: a MIX kernel)
  kConv2D, kConvBackpropInput, kConvBackpropFilter,  // cube, implicit GEMM (model/cost/conv.cpp)
  kElementwise,                                      // elementwise with broadcast
  kReduce, kRowwise,                                 // reductions; softmax/norms keep the shape
  kPool, kPoolGrad,                                  // pooling windows (model/cost/pool.cpp)
  kTile, kConcat, kTranspose, kTransData, kCast, kSlice, kCopy, kSplit, kPad,  // data movement
  kGather, kGatherElements, kScatter,                // index
  kTopK, kSort,                                      // sort
  kDynamicShape, kAicpuStatic,                       // AI CPU
  kGeneric
};

/// One row of the table.
struct OpKindInfo {
  std::string_view type;   ///< CANN spelling
  OpFamily family;
  OpRole role;
  Placement placement;     ///< default placement
  std::array<VectorClass, 32> passes{};  ///< vector passes per element (elementwise, reductions)
  std::uint8_t pass_count = 0;
  /// A GE fusion (FusionOp_A_B_C) whose main op is a cube op: the other ops' vector passes, run
  /// over each element of the main op's output in the same launch (an epilogue).
  std::array<VectorClass, 32> epilogue{};
  std::uint8_t epilogue_count = 0;
  bool int64_vector = false;  ///< has a vector path for int64 (vconv); otherwise scalar fallback
  bool compare = false;       ///< output is BOOL regardless of inputs (Equal, Less, ...)
  bool writes_only = false;   ///< reads no input data, only writes (ZerosLike, Fill, Range)
  /// Computes in fp32 whatever the data's dtype (the TBE batch-norm kernels): fp16 tensors are
  /// converted and every pass runs over fp32 bytes. For a fusion, set when a fused part does.
  bool fp32_compute = false;
  /// With fp32_compute, how many of the leading passes run in fp32 (0: all). A GE fusion whose
  /// main op computes in fp32 and whose other parts do not (FusionOp_BNTrainingUpdate_ReLUV2)
  /// runs the others' passes on the main op's output in the data's own dtype: the BN apply casts
  /// its result back to fp16 before the fused ReLUV2 (bn_training_update.py, relu_v2.py).
  std::uint8_t fp32_passes = 0;
  /// The TBE kernel splits an NC1HWC0 map over the cores by whole images (its batch axis), so a
  /// core runs ceil(N / block dim) images (model/cost/launch_waves.cpp). For a fusion, set when
  /// its main op does.
  bool whole_images = false;
  /// Writes ReLUV2's packed bit mask (one bit an element, uint8). For a fusion, set when any
  /// part does.
  bool relu_mask = false;
  /// The TBE BN apply (bn_update_schedule.py): fused with ReLUV2 (relu_mask), a UB tile whose
  /// mask is not a whole number of 32-byte blocks runs its load, passes and store in series
  /// (model/cost/bn_schedules.cpp). For a fusion, set when its main op does.
  bool bn_apply = false;
  /// BNTrainingUpdateGrad's atomic reduce schedule below the core count in N and C1: one image a
  /// core, tiles of whole rows dividing H (model/cost/bn_schedules.cpp).
  bool atomic_rows = false;
  /// SoftmaxCrossEntropyWithLogits: on the coupled-core parts, TBE's logits_2d schedule
  /// (model/cost/softmax_xent.cpp) rather than the generic row-wise reduction.
  bool logits_2d = false;
  /// The kernel keeps so many full-size tensors live in UB that its schedule does not
  /// double-buffer: each tile's loads, passes and stores run in series (LAMB's weight step).
  bool ub_serial = false;
};

/// The row for `type` (exact CANN spelling; also accepts the aclnn-prefixed kernel names and
/// case differences). Unknown types return the generic row, whose `type` is "<generic>".
/// A GE fusion `FusionOp_A_B_C` gets a row of its own, built once from the rows of A, B, C:
/// one launch costed as its main op (the first cube op among them, else the first known one)
/// with the vector passes of the others added per element (appended to a vector main op's
/// passes, or as a cube main op's epilogue). Names it cannot split resolve to the generic row.
[[nodiscard]] const OpKindInfo& lookup_op_kind(std::string_view type) noexcept;

/// Every row of the table, for documentation and tests.
[[nodiscard]] const std::vector<OpKindInfo>& op_table();

}  // namespace npusim
