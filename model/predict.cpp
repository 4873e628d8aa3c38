#include "model/predict.h"

#include <algorithm>
#include <optional>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim {

namespace {

// What every AI Core family shares once its plan is built: fused epilogues, tensor streams,
// the unknown-type warning, evaluation, MatMulV3's phases and the dynamic-shape sync.
// Inlined into on_core's two calls: a call and its register saves per prediction (issue #16).
[[gnu::always_inline]] inline OpCost run_plan(cost::KernelPlan& plan, const OpDesc& op,
                                              const OpFacts& f, const HwSpec& hw,
                                              CoreBudget budget, const PredictContext& c,
                                              const cost::CubePhases* phases) {
  const OpKindInfo& kind = *op.kind;
  if (kind.epilogue_count > 0 && !op.outputs.empty()) {
    // A GE fusion of a cube op with vector ops: their passes run over each output tile in the
    // same launch, pipelined with the cube like any other stage.
    double per_tile =
        op.outputs[0].bytes() / static_cast<double>(std::max<std::int64_t>(1, plan.tiles));
    if (kind.fp32_compute && op.outputs[0].dtype == DType::kFloat16) {
      // a fused part computes in fp32 (BNTrainingReduce): the fp16 tile is converted once and
      // the passes run over twice its bytes
      per_tile *= 2;
      plan.vector_cycles += cost::class_pass_cycles(VectorClass::kConvert, per_tile, hw);
    }
    for (std::uint8_t i = 0; i < kind.epilogue_count; ++i) {
      plan.vector_cycles += cost::class_pass_cycles(kind.epilogue[i], per_tile, hw);
    }
  }
  // Tensor streams in and out (a one-element operand is read by the scalar unit, not a DMA).
  plan.read_streams = f.read_tensors;
  if (kind.role == OpRole::kSlice) {
    // Slice's begin/size (StridedSlice's begin/end/strides) are tiling values the host folds
    // into the kernel's arguments, not tensors it loads: the 2023 GPT-3 run's Slice of a
    // [2, 8193] int32 with two [2] int64 offsets spends 1.2-1.4 us on the core (aiv_time), less
    // than three read latencies alone (2.3 us at 1.85 GHz).
    plan.read_streams = 1;
  }
  plan.write_streams = f.write_tensors;
  if (kind.family == OpFamily::kGeneric) {
    plan.warnings |= kWarnUnknownOpType;
  } else {
    plan.warnings &= ~static_cast<std::uint32_t>(kWarnUnknownOpType);
  }
  OpCost cost = cost::evaluate(plan, hw, budget, c);
  if (phases != nullptr && (phases->has_head || phases->has_tail)) {
    // MatMulV3's vector-core phases run in the same launch, one after the other with the GEMM:
    // their time adds, the launch (head) is paid once.
    auto add_phase = [&](const cost::KernelPlan& phase) {
      const OpCost pc = cost::evaluate(phase, hw, budget, c);
      const CriticalPath& p = pc.critical_path;
      CriticalPath& t = cost.critical_path;
      t.compute_us += p.compute_us;
      t.memory_us += p.memory_us;
      t.alignment_us += p.alignment_us;
      t.conflict_us += p.conflict_us;
      t.tail_us += p.tail_us;
      const double phase_us = pc.duration_us - p.head_us;
      cost.duration_us += phase_us;
      cost.core_time_us += pc.block_dim * phase_us;
      cost.bytes_in += pc.bytes_in;
      cost.bytes_out += pc.bytes_out;
      // the vector cores' pipes; their MTE2 is not the cube's (a profile reports it as aiv_mte2)
      cost.pipes.vector_us += pc.pipes.vector_us;
      cost.pipes.scalar_us += pc.pipes.scalar_us;
      cost.pipes.mte3_us += pc.pipes.mte3_us;
    };
    if (phases->has_head) add_phase(phases->head);
    if (phases->has_tail) add_phase(phases->tail);
  }
  if (kind.role == OpRole::kDynamicShape) {
    // the output size still has to reach the host before anything after it can launch
    cost.critical_path.host_us += hw.host.dynamic_shape_sync_us;
    cost.duration_us += hw.host.dynamic_shape_sync_us;
    cost.core_time_us = cost.block_dim * cost.duration_us;
  }
  return cost;
}

}  // namespace

namespace {

// Where an op runs: AI CPU and host ops are costed directly, the rest as AI Core kernels.
Placement runs_on(const OpDesc& op) {
  NPUSIM_CHECK(op.kind != nullptr);
  const OpKindInfo& kind = *op.kind;
  const Placement placement = op.placement.value_or(kind.placement);
  if (placement == Placement::kAicpu || placement == Placement::kHost) return placement;
  // Where/Unique/NonZero default to the AI CPU; a profile may show them as AI Core kernels
  // (newer CANN ships AI Core versions), and then they are costed as such below.
  if (kind.family == OpFamily::kAicpu && !op.placement) return Placement::kAicpu;
  return placement;
}

OpCost on_core(const OpDesc& op, const OpFacts& f, const HwSpec& hw, CoreBudget budget,
               const PredictContext& ctx) {
  const OpKindInfo& kind = *op.kind;
  PredictContext c = ctx;
  if (c.l2_hit_ratio < 0 && f.attrs.has(Attr::kL2HitRatio)) {
    c.l2_hit_ratio = f.attrs.number(Attr::kL2HitRatio, 0, op);
  }
  const Placement unit = kind.family == OpFamily::kCube ? Placement::kCube : Placement::kVector;
  const int cores = std::max(1, cost::available_cores(unit, hw, budget));
  // A row's block dim is the tiler's split: its data over that many blocks, down to one memory
  // block a core (launch_core_bytes, model/cost/launch_head.cpp). Index, sort and cube kernels
  // keep their own tilers.
  const double core_bytes = cost::launch_core_bytes(hw, budget);
  if (kind.family == OpFamily::kCube) {
    // Only a cube op can carry MatMulV3's vector phases, built only when it has them.
    bool has_phases = false;
    cost::KernelPlan plan = cost::plan_cube(op, f, hw, cores, &has_phases);
    if (!has_phases) return run_plan(plan, op, f, hw, budget, c, nullptr);
    const cost::CubePhases phases = cost::cube_phases(op, f, hw);
    return run_plan(plan, op, f, hw, budget, c, &phases);
  }
  cost::KernelPlan plan = [&] {
    switch (kind.family) {
      case OpFamily::kElementwise: return cost::plan_elementwise(op, f, hw, cores, core_bytes);
      case OpFamily::kReduction:
        return kind.role == OpRole::kPool || kind.role == OpRole::kPoolGrad
                   ? cost::plan_pool(op, hw, cores, core_bytes)
                   : cost::plan_reduction(op, f, hw, cores, core_bytes);
      case OpFamily::kDataMovement: return cost::plan_data_movement(op, f, hw, cores, core_bytes);
      case OpFamily::kIndex: return cost::plan_index(op, f, hw, cores);
      case OpFamily::kSort: return cost::plan_sort(op, f, hw, cores);
      case OpFamily::kAicpu:
        if (cost::is_nonzero_kernel(op)) return cost::plan_nonzero(op, hw, cores);
        break;
      case OpFamily::kCube:
      case OpFamily::kGeneric: break;
    }
    return cost::plan_generic(op, f, hw, cores, core_bytes);
  }();
  return run_plan(plan, op, f, hw, budget, c, nullptr);
}

// An op whose inputs and written bytes exceed the chip's device memory cannot run as given: its
// time is still computed (a formula's extrapolation) and flagged, so no caller mistakes it for a
// run that can happen (a Tile with multiples of 1e9 x 1e9 predicted 110 days without a word).
void flag_device_memory(OpCost& c, double input_bytes, const HwSpec& hw) noexcept {
  if (input_bytes + c.bytes_out > hw.chip.hbm_bytes) c.warnings |= kWarnExceedsDeviceMemory;
}

}  // namespace

OpCost predict(const PreparedOp& op, const HwSpec& hw, CoreBudget budget, const PredictContext& ctx) {
  OpCost c = [&] {
    switch (runs_on(op.op())) {
      case Placement::kAicpu: return cost::cost_aicpu(op.op(), hw);
      case Placement::kHost: return cost::cost_host(op.op(), hw);
      default: return on_core(op.op(), op.facts(), hw, budget, ctx);
    }
  }();
  flag_device_memory(c, op.facts().input_bytes, hw);
  return c;
}

OpCost predict(const OpDesc& op, const HwSpec& hw, CoreBudget budget, const PredictContext& ctx) {
  const Placement where = runs_on(op);
  if (where == Placement::kAicpu || where == Placement::kHost) {
    OpCost c = where == Placement::kAicpu ? cost::cost_aicpu(op, hw) : cost::cost_host(op, hw);
    flag_device_memory(c, c.bytes_in, hw);  // off the cores, bytes_in is the inputs' bytes
    return c;
  }
  const OpFacts f = op_facts(op);
  OpCost c = on_core(op, f, hw, budget, ctx);
  flag_device_memory(c, f.input_bytes, hw);
  return c;
}

}  // namespace npusim
