// Hand-computed cases for two small-kernel mechanisms: NonZero on AI Cores (a count, a
// cross-core barrier and a compaction: model/cost/nonzero.cpp) and Slice's offset operands,
// which are tiling values, not tensor streams (model/predict.cpp).
#include <catch2/catch.hpp>

#include "model/cost/kernel_plan.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec toy_latency_chip() {
  HwSpec hw = npusim::test::toy_vector_chip();  // 1000 MHz
  hw.memory.read_latency_cycles = 1400;
  hw.memory.write_latency_cycles = 300;
  hw.memory.read_stream_share = 1;
  hw.memory.write_stream_share = 1;
  return hw;
}

OpDesc nonzero_on_core(const std::string& shape) {
  OpDesc o = test::op_io("NonZero", shape, "BOOL", "ND", "1," + shape, "INT32", "ND");
  o.placement = Placement::kMix;  // the profile's MIX_AIV
  return o;
}

}  // namespace

TEST_CASE("NonZero on AI Cores pays a chain of GM round trips and one barrier add per core",
          "[mechanism][nonzero]") {
  const HwSpec hw = toy_latency_chip();
  // 16 elements: one core each (16 of the 40 vector cores); beyond evaluate()'s one read and
  // one write latency, the spin's and the counts' reads (2 x 1400), the count's and the shape's
  // writes (2 x 300) and 16 serialised barrier adds (16 x 300): 8200 cycles.
  const cost::KernelPlan p16 = cost::plan_nonzero(nonzero_on_core("16"), hw, 40);
  CHECK(p16.tiles == 16);
  CHECK(p16.scalar_cycles == Approx(2 * 1400 + 2 * 300 + 16 * 300));
  // 4 elements, 4 cores: 2800 + 600 + 1200 = 4600
  const cost::KernelPlan p4 = cost::plan_nonzero(nonzero_on_core("4"), hw, 40);
  CHECK(p4.tiles == 4);
  CHECK(p4.scalar_cycles == Approx(4600));
  // 100 elements on 40 cores: 40 cores
  CHECK(cost::plan_nonzero(nonzero_on_core("100"), hw, 40).tiles == 40);

  // predict(): a profile's AI Core NonZero runs this plan on 16 cores; without a placement it
  // is the AI CPU task
  const OpCost c = predict(nonzero_on_core("16"), hw);
  CHECK(c.block_dim == 16);
  CHECK(c.pipes.scalar_us == Approx(8.2));
  OpDesc cpu = nonzero_on_core("16");
  cpu.placement.reset();
  CHECK(predict(cpu, hw).block_dim == 1);
}

TEST_CASE("Slice's begin and size operands are not read as tensor streams", "[mechanism][slice]") {
  const HwSpec hw = toy_latency_chip();
  // [2, 8193] int32 sliced to [2, 8192]: with the offsets as two [2] int64 inputs (as aclnn
  // profiles list them) or as attributes, the kernel reads one tensor: one read latency.
  const OpDesc with_operands =
      test::op_io("Slice", "2,8193;2;2", "INT32;INT64;INT64", "ND;ND;ND", "2,8192", "INT32", "ND");
  const OpDesc with_attrs = test::op_io("Slice", "2,8193", "INT32", "ND", "2,8192", "INT32", "ND");
  const OpCost a = predict(with_operands, hw);
  const OpCost b = predict(with_attrs, hw);
  CHECK(a.critical_path.memory_us == Approx(b.critical_path.memory_us));
  CHECK(a.duration_us == Approx(b.duration_us));
  // the one read latency and one write latency are in it: 1.4 + 0.3 us at 1000 MHz
  CHECK(b.critical_path.memory_us >= Approx(1.7));
  CHECK(b.critical_path.memory_us < 1.7 + 1.4);
}

// AtomicAddrClean (MindSpore on the 910) names a tensor. Launched on several blocks it zeroes
// that tensor when the tensor is an atomic-add target (a fractal [..., 16, 16] cube output, a
// 2-D sum); otherwise, and on one block, it zeroes the named kernel's few-KB statistics: one
// 32-byte block.
TEST_CASE("AtomicAddrClean zeroes a fractal or 2-D tensor it names, an activation's stats only",
          "[mechanism][atomic]") {
  const HwSpec hw = npusim::test::toy_vector_chip();
  const auto clean = [](const std::string& shape) {
    OpText t;
    t.name = "clean";
    t.type = "AtomicAddrClean";
    t.input_shapes = shape;
    t.input_dtypes = "FLOAT";
    OpDesc o = make_op(t, SourcePos{"<test>", 0, 0});
    o.outputs.clear();  // as the profile rows give it: the named tensor only
    return o;
  };
  const auto out_bytes = [&](const cost::KernelPlan& p) {
    return p.out.bytes * static_cast<double>(p.tiles);
  };
  // 48 x 8 x 16 x 16 fp32 = 393216 B over 8 blocks
  const cost::KernelPlan w = cost::plan_data_movement(clean("48,8,16,16"), hw, 8);
  CHECK(out_bytes(w) == Approx(393216));
  CHECK(w.tiles >= 8);
  const cost::KernelPlan e = cost::plan_data_movement(clean("512,768"), hw, 8);
  CHECK(out_bytes(e) == Approx(512 * 768 * 4));
  // the same fractal on one block, and an NC1HWC0 activation on 8: one block of 32 B
  for (const auto& [shape, cores] : {std::pair<std::string, int>{"48,8,16,16", 1},
                                     std::pair<std::string, int>{"32,8,28,28,16", 8},
                                     std::pair<std::string, int>{"64,50,768", 8}}) {
    INFO(shape << " on " << cores);
    const cost::KernelPlan s = cost::plan_data_movement(clean(shape), hw, cores);
    CHECK(s.tiles == 1);
    CHECK(out_bytes(s) == Approx(hw.memory.block_bytes));
  }
}
