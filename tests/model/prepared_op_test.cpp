// PreparedOp (model/prepared_op.h): predict() on a prepared op gives the bits the OpDesc form
// gives, and a rewritten op predicts as a freshly made one once it is prepared again -- the
// facts are the op's own, never a stale copy of an earlier version of it.
#include "model/prepared_op.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "model/graph.h"
#include "model/passes.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

namespace {

using namespace npusim;
namespace test = npusim::test;

// Every field, written shortest round-trip: equal text is equal bits.
std::string text_of(const OpCost& c) {
  const CriticalPath& p = c.critical_path;
  const PipeTimes& q = c.pipes;
  return fmt::format("{} {} {} {} {} {} {} {} [{} {} {} {} {} {} {}] [{} {} {} {} {} {} {}] {} {} {}",
                     c.duration_us, c.block_dim, static_cast<int>(c.bound), c.core_time_us,
                     c.bytes_in, c.bytes_out, c.flops, c.cube_efficiency, p.head_us, p.compute_us,
                     p.memory_us, p.alignment_us, p.conflict_us, p.tail_us, p.host_us, q.cube_us,
                     q.vector_us, q.scalar_us, q.mte1_us, q.mte2_us, q.mte3_us, q.fixpipe_us,
                     c.waves, c.tiles, c.warnings);
}

std::vector<OpDesc> sample_ops() {
  return {
      test::op("MatMulV2", "4096,1024;1024,4096", "BF16"),
      test::op("MatMulV2", "1024,4096;1024,4096", "FLOAT16", {{"transpose_x1", "true"}}),
      test::op("BatchMatMulV2", "1024,1,32;32,300", "FLOAT16"),
      test::op("Conv2D", "8,64,56,56;128,64,3,3", "FLOAT16", {{"pads", "1,1,1,1"}, {"strides", "1,1,2,2"}}),
      test::op("Add", "1024,4096;1024,4096", "FLOAT16"),
      test::op("Equal", "1,4000;400,1", "INT64"),
      test::op("Cast", "64,4000", "FLOAT16", {{"dst_type", "FLOAT"}}),
      test::op("SoftmaxV2", "64,12,128,128", "FLOAT16"),
      test::op("ReduceSum", "64,128,768", "FLOAT16", {{"axes", "1"}}),
      test::op("ConcatD", "64,400;64,400", "FLOAT16", {{"concat_dim", "1"}}),
      test::op("Transpose", "64,12,128,64", "FLOAT16", {{"perm", "0,2,1,3"}}),
      test::op("Tile", "1,768", "FLOAT16", {{"multiples", "512,1"}}),
      test::op("GatherV2", "1000000,64;64,4000;1", "FLOAT16;INT32;INT32", {{"index_dup_ratio", "0.3"}}),
      test::op("TopKV2", "64,4000", "FLOAT16", {{"k", "100"}, {"valid_length", "1000"}}),
      test::op("Unique", "64,4000", "INT64"),
      test::op("MyFusedOp", "64,4000", "FLOAT16", {{"l2_hit_ratio", "0.5"}}),
  };
}

}  // namespace

TEST_CASE("a prepared op predicts the bits its OpDesc predicts", "[prepared]") {
  for (const char* chip : {"ascend910b3", "ascend910"}) {
    const HwSpec& hw = test::chip(chip);
    for (const OpDesc& op : sample_ops()) {
      const PreparedOp prepared(op);
      for (const CoreBudget budget : {CoreBudget{}, CoreBudget{4, 8, 0}, CoreBudget{0, 0, 64}}) {
        for (const double l2 : {-1.0, 0.0, 0.7}) {
          PredictContext ctx;
          ctx.l2_hit_ratio = l2;
          INFO(op.type << " on " << chip << " l2 " << l2);
          CHECK(text_of(predict(prepared, hw, budget, ctx)) == text_of(predict(op, hw, budget, ctx)));
        }
      }
    }
  }
}

TEST_CASE("a prepared op follows its chip: a spec changed between calls changes the answer",
          "[prepared]") {
  // calibration moves spec parameters between calls with the same prepared ops
  HwSpec hw = test::chip("ascend910b3");
  const PreparedOp add(test::op("Add", "1024,4096;1024,4096", "FLOAT16"));
  const double before = predict(add, hw).duration_us;
  hw.memory.hbm_efficiency *= 0.5;
  const double after = predict(add, hw).duration_us;
  CHECK(after > before);
  CHECK(text_of(predict(add, hw)) == text_of(predict(add.op(), hw)));
}

TEST_CASE("a rewritten op, prepared again, predicts as a freshly made one", "[prepared]") {
  const HwSpec& hw = test::chip("ascend910b3");
  // A shape changed by hand on a copy: the old PreparedOp keeps the op it was made from.
  OpDesc op = test::op("Add", "1024,4096;1024,4096", "FLOAT16");
  const PreparedOp old(op);
  op.inputs[0].shape = {2048, 4096};
  op.inputs[1].shape = {2048, 4096};
  const PreparedOp renewed(op);
  const OpDesc fresh = test::op("Add", "2048,4096;2048,4096", "FLOAT16");
  CHECK(text_of(predict(renewed, hw)) == text_of(predict(fresh, hw)));
  CHECK(text_of(predict(old, hw)) != text_of(predict(fresh, hw)));
  CHECK(old.op().inputs[0].shape == std::vector<std::int64_t>{1024, 4096});

  // An attribute a graph pass adds (topk_valid_length): the instantiated op of the rewritten
  // graph, prepared, predicts what a TopK made with that attribute predicts.
  GraphOp gop;
  gop.text.name = "topk";
  gop.text.type = "TopK";
  gop.text.input_shapes = "B,4000;1";
  gop.text.input_dtypes = "FLOAT16;INT32";
  gop.text.attrs = {{"k", "50"}, {"valid_fraction", "0.25"}};
  const Graph g = Graph::build("topk", {gop});
  const PassResult r = topk_valid_length(g);
  REQUIRE(r.changes.size() == 1);
  const PreparedOp before(g.instantiate(0, 20));
  const PreparedOp after(r.graph.instantiate(0, 20));
  // the op of the original graph with the attribute added by hand, predicted fresh
  OpDesc made = g.instantiate(0, 20);
  made.attrs.emplace_back("valid_length", "1000");
  CHECK(text_of(predict(after, hw)) == text_of(predict(made, hw)));
  CHECK(text_of(predict(before, hw)) != text_of(predict(made, hw)));
  CHECK(predict(after, hw).duration_us < predict(before, hw).duration_us);
}

TEST_CASE("a malformed attribute read from a prepared op throws as the OpDesc's does",
          "[prepared]") {
  OpDesc op = test::op("GatherV2", "1000,64;4000", "FLOAT16;INT32");
  op.attrs.emplace_back("index_dup_ratio", "lots");
  const PreparedOp p(op);
  CHECK(p.facts().attrs.has(Attr::kIndexDupRatio));
  CHECK_THROWS_AS(p.facts().attrs.number(Attr::kIndexDupRatio, 0, p.op()), InputError);
  CHECK_THROWS_AS(op.attr_number("index_dup_ratio", 0), InputError);
  // and predict() raises it (plan_index was noexcept, so it terminated the program)
  CHECK_THROWS_AS(predict(p, test::chip("ascend910b3")), InputError);
  const PreparedOp q(test::op("Conv2D", "8,64,56,56;128,64,3,3", "FLOAT16", {{"pads", "1,2,3,4"}}));
  std::array<std::int64_t, 8> v{};
  REQUIRE(q.facts().attrs.ints(Attr::kPads, v) == 4);
  CHECK(v[0] == 1);
  CHECK(v[3] == 4);
  CHECK(q.facts().attrs.ints(Attr::kStrides, v) == 0);
}

TEST_CASE(
    "a sort op's facts hold only parsed attributes, and a malformed one throws from predict()",
    "[prepared]") {
  const HwSpec& hw = test::chip("ascend910b3");
  const PreparedOp good(test::op("TopKV2", "64,4000", "FLOAT16", {{"k", "100"}}));
  REQUIRE(good.facts().sort() != nullptr);
  CHECK(good.facts().sort()->k == 100);
  CHECK(good.facts().sort()->n_eff == 4000);
  CHECK(good.facts().sort()->chunks == 125);  // ceil(4000 / 32)
  CHECK(good.facts().sort()->passes == 4);    // ceil(log4(125)): 4^3 = 64 < 125 <= 256
  // The preparation does not throw; the prediction does, as the OpDesc's does.
  OpDesc bad = test::op("TopKV2", "64,4000", "FLOAT16");
  bad.attrs.emplace_back("k", "many");  // after make_op, which would reject it
  const PreparedOp p(bad);
  CHECK(p.facts().sort() == nullptr);
  CHECK_THROWS_AS(predict(p, hw), InputError);
  CHECK_THROWS_AS(predict(bad, hw), InputError);
  // A sort op other than TopK does not read k: a malformed one changes nothing.
  const OpDesc sort = test::op("Sort", "64,4000", "FLOAT16");
  OpDesc sort_k = sort;
  sort_k.attrs.emplace_back("k", "many");
  CHECK(text_of(predict(PreparedOp(sort_k), hw)) == text_of(predict(sort, hw)));
}

TEST_CASE("a gather's rows are prepared, and a malformed axis throws from predict()", "[prepared]") {
  const HwSpec& hw = test::chip("ascend910b3");
  // IndexSelect-like: the indices are the largest integer tensor after the params, axis 1 of
  // [8, 1000, 64] fp16 gathers 8 x 4000 rows of 64 x 2 bytes
  const OpDesc gather =
      test::op("GatherV2", "8,1000,64;4000;1", "FLOAT16;INT32;INT32", {{"axis", "1"}});
  const PreparedOp p(gather);
  REQUIRE(p.facts().gather() != nullptr);
  const cost::GatherShape& g = *p.facts().gather();
  CHECK(g.rows == 8 * 4000);
  CHECK(g.row_bytes == 128);
  CHECK(g.idx_bytes == 4000 * 4);
  CHECK(g.params_bytes == 8 * 1000 * 64 * 2);
  CHECK(text_of(predict(p, hw)) == text_of(predict(gather, hw)));
  OpDesc bad = gather;
  bad.attrs.clear();
  bad.attrs.emplace_back("axis", "sideways");  // after make_op, which would reject it
  const PreparedOp q(bad);
  CHECK(q.facts().gather() == nullptr);
  CHECK_THROWS_AS(predict(q, hw), InputError);
  CHECK_THROWS_AS(predict(bad, hw), InputError);
}

TEST_CASE("a convolution's operands are prepared, and a malformed groups throws from predict()",
          "[prepared]") {
  const HwSpec& hw = test::chip("ascend910b3");
  // 48 input channels: kept at 48 on the 32-byte fractal K (16 fp16), padded to 64 on a 64-byte one
  const OpDesc conv = test::op("Conv2D", "8,48,56,56;128,48,3,3", "FLOAT16",
                               {{"pads", "1,1,1,1"}, {"strides", "1,1,2,2"}});
  const PreparedOp p(conv);
  REQUIRE(p.facts().conv() != nullptr);
  const cost::ConvOperands& c = *p.facts().conv();
  CHECK(c.valid);
  CHECK(c.fx.c == 48);
  CHECK(c.fw.cout == 128);
  CHECK(c.fw.area == 9);
  CHECK(c.sh == 2);
  CHECK(c.ph == 2);  // pads summed per axis
  // The GEMM is finished per call with the chip's fractal size: a spec with another one moves it.
  HwSpec other = hw;
  other.cube.fractal_k_bytes = hw.cube.fractal_k_bytes * 2;
  CHECK(text_of(predict(p, other)) == text_of(predict(conv, other)));
  CHECK(text_of(predict(p, other)) != text_of(predict(p, hw)));
  OpDesc bad = conv;
  bad.attrs.emplace_back("groups", "several");  // after make_op, which would reject it
  const PreparedOp q(bad);
  CHECK(q.facts().conv() == nullptr);
  CHECK_THROWS_AS(predict(q, hw), InputError);
}

namespace {

// A GEMM's fields as text, shortest round-trip (equal text is equal bits).
std::string conv_gemm_fields(const cost::Gemm& g) {
  return fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}", g.batch, g.m, g.n, g.k,
                     g.trans_a, g.trans_b, g.b_shared, static_cast<int>(g.dtype),
                     static_cast<int>(g.out_dtype), g.a_nz, g.b_nz, g.a_read_factor,
                     g.b_read_factor, g.k_over_batch, g.k_batch, g.warnings);
}

}  // namespace

TEST_CASE("a convolution's prepared GEMM, finished with K0, is the general path's on every chip",
          "[prepared]") {
  // ConvGemmPre (session 19) holds what conv_gemm computes without the chip for maps and
  // filters without C0; finishing it must give the bits of the full computation, whatever the
  // fractal's K bytes (power of two or not) and the op's role, layout and groups.
  const std::vector<OpDesc> ops = {
      test::op("Conv2D", "8,64,56,56;128,64,3,3", "FLOAT16", {{"pads", "1,1,1,1"}}),
      test::op("Conv2D", "8,48,56,56;128,48,3,3", "FLOAT16",
               {{"pads", "1,1,1,1"}, {"strides", "1,1,2,2"}, {"dilations", "1,1,2,2"}}),
      test::op("Conv2D", "1,3,224,224;64,3,7,7", "FLOAT", {{"strides", "1,1,2,2"}}),
      test::op("Conv2D", "4,56,56,64;32,3,3,16", "FLOAT16", {{"groups", "4"}}, "NHWC;NHWC"),
      test::op("Conv2D", "2,8,30,30;16,8,5,5", "INT8"),
      // the gradients need their output: the filter's, the input map's
      test::op_io("Conv2DBackpropFilter", "8,64,56,56;4;8,128,56,56", "FLOAT16;INT32;FLOAT16", "",
                  "128,64,3,3", "FLOAT", ""),
      test::op_io("Conv2DBackpropInput", "4;128,64,3,3;8,128,28,28", "INT32;FLOAT16;FLOAT16", "",
                  "8,64,56,56", "FLOAT16", ""),
  };
  int prepared = 0;
  for (const OpDesc& op : ops) {
    INFO(op.type << " [" << op.inputs.size() << " inputs]");
    const cost::ConvOperands c = cost::conv_operands(op, nullptr);
    REQUIRE(c.valid);
    prepared += c.pre.ready ? 1 : 0;
    cost::ConvOperands general = c;
    general.pre = cost::ConvGemmPre{};  // the full computation
    for (const char* chip : {"ascend910b3", "ascend910", "ascend310p3"}) {
      HwSpec hw = test::chip(chip);
      for (const int k_bytes : {32, 64, 16, 24, 48}) {
        hw.cube.fractal_k_bytes = k_bytes;
        INFO(op.type << " on " << chip << ", fractal K bytes " << k_bytes);
        CHECK(conv_gemm_fields(cost::conv_gemm(c, op.kind->role, hw)) ==
              conv_gemm_fields(cost::conv_gemm(general, op.kind->role, hw)));
      }
    }
  }
  CHECK(prepared == static_cast<int>(ops.size()));  // every one of these has no C0
  // a 5-D map has C0: its element size comes from the chip, so nothing is prepared
  const OpDesc c0 = test::op("Conv2D", "8,4,56,56,16;128,64,3,3", "FLOAT16",
                             {{"pads", "1,1,1,1"}}, "NC1HWC0;NCHW");
  CHECK_FALSE(cost::conv_operands(c0, nullptr).pre.ready);
}
