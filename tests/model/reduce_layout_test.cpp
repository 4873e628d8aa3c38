// Hand-computed cases for reductions planned on their physical layout (model/cost/reduce_layout.h):
// reduced axes from the output shape, size-1 axes dropped and neighbours merged, FRACTAL_NZ and
// NC1HWC0 axes, and the vector-add tree of leading reduced runs.
#include <catch2/catch.hpp>

#include "model/cost/reduce_layout.h"
#include "model/op_table.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec reduce_toy_vector() {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kReduce)] = 7;
  hw.vector.min_bytes_per_core = 4096;
  hw.memory.l2_hit_ratio_default = 0;
  return hw;
}

std::string runs(const cost::ReduceLayout& l) {
  std::string s;
  for (std::size_t i = 0; i < l.count; ++i) {
    s += (l.runs[i].reduced ? "R" : "K") + std::to_string(static_cast<long long>(l.runs[i].size)) +
         " ";
  }
  return s;
}

const CoreBudget kReduceOneVectorCore{0, 1};

}  // namespace

TEST_CASE("reduced axes come from the output shape, and size-1 axes drop and neighbours merge",
          "[mechanism][reduce]") {
  // DeepFM: ReduceSum [12000,39,1] -> [12000,1] names no axes; it sums the 39, not the 1.
  const OpDesc a = npusim::test::op_io("ReduceSum", "12000,39,1", "FLOAT16", "ND", "12000,1", "FLOAT16", "ND");
  CHECK(runs(cost::reduce_layout(a)) == "K12000 R39 ");
  // ReduceMean [12000,1] -> scalar: one row of 12000
  OpDesc m0 = npusim::test::op_io("ReduceMean", "12000,1", "FLOAT16", "ND", "1", "FLOAT16", "ND");
  REQUIRE(m0.outputs.size() == 1);
  m0.outputs[0].shape.clear();  // MindSpore writes a scalar's shape as ""
  CHECK(runs(cost::reduce_layout(m0)) == "R12000 ");
  // keep_dims: [8,3,80] -> [8,1,80] reduces the middle axis
  const OpDesc k = npusim::test::op_io("ReduceSum", "8,3,80", "FLOAT16", "ND", "8,1,80", "FLOAT16", "ND");
  CHECK(runs(cost::reduce_layout(k)) == "K8 R3 K80 ");
  // an attribute wins over the output
  const OpDesc at = npusim::test::op("ReduceSum", "8,3,80", "FLOAT16", {{"axes", "[0]"}});
  CHECK(runs(cost::reduce_layout(at)) == "R8 K240 ");
}

TEST_CASE("a size-1 axis costs nothing: [12000,39,1] reduced like [12000,39] on its last axis",
          "[mechanism][reduce]") {
  const HwSpec hw = reduce_toy_vector();
  const OpCost c3 = predict(
      npusim::test::op_io("ReduceSum", "12000,39,1", "FLOAT16", "ND", "12000,1", "FLOAT16", "ND"), hw);
  const OpCost c2 =
      predict(npusim::test::op_io("ReduceSum", "12000,39", "FLOAT16", "ND", "12000", "FLOAT16", "ND"), hw);
  CHECK(c3.duration_us == Approx(c2.duration_us));
  CHECK(c3.pipes.vector_us == Approx(c2.pipes.vector_us));
  CHECK(c3.pipes.mte2_us == Approx(c2.pipes.mte2_us));
}

TEST_CASE("FRACTAL_NZ rows and NC1HWC0 channels map onto physical runs", "[mechanism][reduce]") {
  // LayerNorm over the logical last axis of a 4096 x 768 NZ tensor [48,256,16,16]: N1 and N0
  const OpDesc ln = npusim::test::op_io("LayerNorm", "48,256,16,16;768;768", "FLOAT16;FLOAT16;FLOAT16",
                         "FRACTAL_NZ;ND;ND", "48,256,16,16", "FLOAT16", "FRACTAL_NZ");
  const cost::ReduceLayout l = cost::reduce_layout(ln);
  CHECK(runs(l) == "R48 K4096 R16 ");
  // The 48 fractal columns fold by a pairwise tree over 65536-element (131072 B) rows: halves of
  // 24, 12, 6, 3, 1, 1 rows = 12288 + 6144 + 3072 + 1536 + 512 + 512 repeats; then 4096 rows of
  // 16 fp16 (32 B) take one vcadd repeat each. A dense pass is 48 x 131072 / 256 = 24576.
  const cost::ReduceRepeats rr = cost::reduce_repeats(l, 2, reduce_toy_vector());
  CHECK(rr.add == Approx(24064));
  CHECK(rr.row == Approx(4096));
  CHECK(rr.dense == Approx(24576));
  // BiasAddGrad on NZ sums every row (M1, M0) and keeps the channels (N1, N0)
  const OpDesc bg = npusim::test::op_io("BiasAddGrad", "48,256,16,16", "FLOAT16", "FRACTAL_NZ", "768", "FLOAT16",
                         "ND");
  CHECK(runs(cost::reduce_layout(bg)) == "K48 R4096 K16 ");
  // BN gradient sums over N, H, W of NC1HWC0 (output [1,C1,1,1,C0])
  const OpDesc bn = npusim::test::op_io("BNTrainingUpdateGrad", "32,4,7,7,16", "FLOAT", "NC1HWC0",
                         "1,4,1,1,16", "FLOAT", "NC1HWC0");
  CHECK(runs(cost::reduce_layout(bn)) == "R32 K4 R49 K16 ");
}

TEST_CASE("BNTrainingUpdateGrad on NC1HWC0: dense passes plus a vector-add tree per channel block",
          "[mechanism][reduce]") {
  const HwSpec hw = reduce_toy_vector();
  // dy, x [2,2,2,2,16] fp32 (256 elements, 1024 B each), mean and var [1,2,1,1,16].
  // Runs R2 K2 R4 K16. R2 over 128-element rows: one level, a vadd of 512 B = 2 repeats. Then
  // R4 over 16-element (64 B) rows, per each of the 2 channel blocks: halves of 2 rows (128 B,
  // 1 repeat) and 1 row (1 repeat) = 2, so 4. Adds: 6 repeats. Dense pass: 1024 / 256 = 4.
  // Passes x - mean, * rsqrt, * dy: 3 x (4 x 2 + 22) = 90 cycles; the two sums: 2 x (6 x 2 + 22)
  // = 68 cycles: 158 cycles in one tile. N = 2 and C1 = 2 are below the toy's cores, so the
  // atomic reduce schedule runs (model/cost/bn_schedules.cpp): a tile per (n, c1) plane, 4 tiles,
  // each issuing the 5 passes: 3 x 5 x 22 = 330 more. 488 cycles at 1 GHz on one core.
  const OpDesc op = npusim::test::op_io("BNTrainingUpdateGrad", "2,2,2,2,16;2,2,2,2,16;1,2,1,1,16;1,2,1,1,16",
                         "FLOAT;FLOAT;FLOAT;FLOAT", "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0",
                         "1,2,1,1,16;1,2,1,1,16", "FLOAT;FLOAT", "NC1HWC0;NC1HWC0");
  const OpCost c = predict(op, hw, kReduceOneVectorCore);
  CHECK(c.pipes.vector_us == Approx(0.488));
  CHECK((c.warnings & kWarnUnknownOpType) == 0);
  // both full-size inputs stream once, the per-channel operands once: 2 x 1024 + 2 x 128 B read
  CHECK(c.bytes_in == Approx(2 * 1024 + 2 * 128));
}

TEST_CASE("batch-norm kernels compute fp16 data in fp32: converts plus passes over fp32 bytes",
          "[mechanism][reduce]") {
  HwSpec hw = reduce_toy_vector();
  // BNTrainingUpdate on x [1,1,4,4,16] fp16 (256 elements) with six per-channel [1,1,1,1,16]
  // fp32 operands; MindSpore lists the four [1,1,1,1,16] statistics outputs before y.
  // The extent is y's 256 elements: in fp32 1024 B = 4 repeats. Passes vmul and vadd with the
  // per-channel multiplier and addend (binary, 2): 2 x (4 x 2 + 22) = 60 cycles; converting x and
  // y (fp16, full size): 2 x (4 x 1 + 22) = 52 cycles. 112 cycles at 1 GHz.
  const std::string c = "1,1,1,1,16";
  const OpDesc op = npusim::test::op_io("BNTrainingUpdate", "1,1,4,4,16;" + c + ";" + c + ";" + c + ";" + c +
                                                 ";" + c + ";" + c,
                         "FLOAT16;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT", "NC1HWC0",
                         c + ";" + c + ";" + c + ";" + c + ";1,1,4,4,16",
                         "FLOAT;FLOAT;FLOAT;FLOAT;FLOAT16", "NC1HWC0");
  const OpCost cost = predict(op, hw, kReduceOneVectorCore);
  CHECK(cost.pipes.vector_us == Approx(0.112));
  CHECK((cost.warnings & kWarnUnknownOpType) == 0);
  // the same kernel on fp32 data converts nothing and runs the passes on the same 4 repeats
  const OpDesc op32 = npusim::test::op_io("BNTrainingUpdate", "1,1,4,4,16;" + c + ";" + c + ";" + c + ";" + c +
                                                   ";" + c + ";" + c,
                           "FLOAT", "NC1HWC0", c + ";" + c + ";" + c + ";" + c + ";1,1,4,4,16",
                           "FLOAT", "NC1HWC0");
  CHECK(predict(op32, hw, kReduceOneVectorCore).pipes.vector_us == Approx(0.060));
}

TEST_CASE("a BN apply fused with ReLUV2 runs the ReLU's passes on its fp16 output, not in fp32",
          "[mechanism][reduce][fusion]") {
  const HwSpec hw = reduce_toy_vector();
  // bn_training_update.py casts its fp32 result back to x's fp16 before the fused relu_v2, so
  // only the BN part's passes run on fp32 bytes.
  const OpKindInfo& fused = lookup_op_kind("FusionOp_BNTrainingUpdate_ReLUV2");
  CHECK(fused.fp32_compute);
  CHECK(fused.pass_count == 4);
  CHECK(fused.fp32_passes == 2);
  // The case above plus the mask output [1,1,4,4,2] (one bit an element): the BN passes and the
  // two converts as there (60 + 52 cycles), then ReLUV2's max (unary, 1) and compare (binary, 2)
  // over y's 256 fp16 elements, 512 B = 2 repeats: (2 x 1 + 22) + (2 x 2 + 22) = 50 cycles
  // (56 over fp32 bytes). 162 cycles at 1 GHz.
  const std::string c = "1,1,1,1,16";
  const OpDesc op = npusim::test::op_io(
      "FusionOp_BNTrainingUpdate_ReLUV2",
      "1,1,4,4,16;" + c + ";" + c + ";" + c + ";" + c + ";" + c + ";" + c,
      "FLOAT16;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT;FLOAT", "NC1HWC0",
      c + ";" + c + ";" + c + ";" + c + ";1,1,4,4,16;1,1,4,4,2",
      "FLOAT;FLOAT;FLOAT;FLOAT;FLOAT16;UINT8", "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0;ND");
  CHECK(predict(op, hw, kReduceOneVectorCore).pipes.vector_us == Approx(0.162));
  // a fusion whose parts all compute in fp32 keeps every pass there
  CHECK(lookup_op_kind("FusionOp_BNTrainingUpdate_BNTrainingReduceGrad").fp32_passes == 0);
}

TEST_CASE("per-row ND statistics against an NZ tensor cost a repeat per 16-element segment",
          "[mechanism][reduce]") {
  HwSpec hw = reduce_toy_vector();
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kMultiplyAdd)] = 6;
  // LayerNormXBackpropV2: dy, x NZ [2,4,16,16] (logical 64 x 32, fp16, 2048 elements), mean
  // and variance ND [64,1], gamma [32]. 2048 / 16 = 128 segments of 32 B, one repeat each, in
  // each of the six passes (reduce 7, binary 2, madd 6, reduce 7, madd 6, madd 6 = 34 cycles):
  // 128 x 34 + 6 x 22 = 4484 cycles.
  const OpDesc op = npusim::test::op_io("LayerNormXBackpropV2", "2,4,16,16;2,4,16,16;64,1;64,1;32",
                         "FLOAT16;FLOAT16;FLOAT;FLOAT;FLOAT16",
                         "FRACTAL_NZ;FRACTAL_NZ;ND;ND;ND", "2,4,16,16", "FLOAT16", "FRACTAL_NZ");
  CHECK(predict(op, hw, kReduceOneVectorCore).pipes.vector_us == Approx(4.484));
}

TEST_CASE("a row norm over an ND last axis pays a scalar round trip per row and reduce pass",
          "[mechanism][reduce]") {
  HwSpec hw = reduce_toy_vector();
  const OpDesc op = npusim::test::op_io("SoftmaxV2", "8,50", "FLOAT16", "ND", "8,50", "FLOAT16", "ND");
  hw.vector.row_reduce_sync_cycles = 0;
  const double base = predict(op, hw, kReduceOneVectorCore).pipes.vector_us;
  hw.vector.row_reduce_sync_cycles = 100;
  // 8 rows x 2 reduce passes (max, sum) x 100 cycles = 1.6 us more on the vector stage
  // (the scalar unit's share is reported with it)
  const OpCost c = predict(op, hw, kReduceOneVectorCore);
  CHECK(c.pipes.vector_us + c.pipes.scalar_us - base == Approx(1.6));
}

TEST_CASE("a leading-axis reduction runs its loads, adds and stores in series, an elementwise op "
          "overlaps them", "[mechanism][reduce]") {
  const HwSpec hw = reduce_toy_vector();
  // BNTrainingUpdateGrad over [8,4,32,32,16] fp32 (2 MiB per input) on one vector core: many UB
  // tiles, so a double-buffered kernel would hide the shorter of MTE2 and the vector passes. The
  // profiles show it does not (vector_ops.cpp): every tile's stages add up, so the critical path
  // holds all the vector time and all the load time.
  const OpDesc op = npusim::test::op_io(
      "BNTrainingUpdateGrad", "8,4,32,32,16;8,4,32,32,16;1,4,1,1,16;1,4,1,1,16",
      "FLOAT;FLOAT;FLOAT;FLOAT", "NC1HWC0;NC1HWC0;NC1HWC0;NC1HWC0", "1,4,1,1,16;1,4,1,1,16",
      "FLOAT;FLOAT", "NC1HWC0;NC1HWC0");
  const OpCost c = predict(op, hw, kReduceOneVectorCore);
  REQUIRE(c.waves > 1);
  const CriticalPath& cp = c.critical_path;
  CHECK(cp.compute_us + cp.tail_us == Approx(c.pipes.vector_us + c.pipes.scalar_us).epsilon(1e-9));
  // (the path's memory part also holds each tile's first-byte latency, which no pipe counts)
  CHECK(cp.memory_us + cp.alignment_us + cp.conflict_us >=
        (c.pipes.mte2_us + c.pipes.mte3_us) * (1 - 1e-9));
  // the same bytes through an elementwise kernel (Mul) overlap: its path is shorter than its pipes
  const OpDesc mul = npusim::test::op_io("Mul", "8,4,32,32,16;8,4,32,32,16", "FLOAT;FLOAT",
                                         "NC1HWC0;NC1HWC0", "8,4,32,32,16", "FLOAT", "NC1HWC0");
  const OpCost m = predict(mul, hw, kReduceOneVectorCore);
  const CriticalPath& mp = m.critical_path;
  CHECK(mp.compute_us + mp.memory_us + mp.alignment_us + mp.conflict_us + mp.tail_us <
        0.9 * (m.pipes.vector_us + m.pipes.mte2_us + m.pipes.mte3_us));
}
