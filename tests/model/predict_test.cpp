// Properties every prediction must have, over every family.
#include "model/predict.h"
#include "model/prepared_op.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "tests/model/test_ops.h"

using namespace npusim;
using npusim::test::chip;
using npusim::test::op;

namespace {

const std::vector<OpText>& family_cases() {
  static const std::vector<OpText> cases = [] {
    std::vector<OpText> v;
    auto add = [&](const char* type, const char* shapes, const char* dtypes,
                   std::vector<std::pair<std::string, std::string>> attrs = {}) {
      OpText t;
      t.type = type;
      t.input_shapes = shapes;
      t.input_dtypes = dtypes;
      t.attrs = std::move(attrs);
      v.push_back(t);
    };
    add("MatMulV2", "4096,1024;1024,4096", "BF16");
    add("MatMulV2", "1,32;32,300", "FLOAT16");
    add("BatchMatMulV2", "1024,1,32;32,300", "FLOAT16");
    add("Conv2D", "8,64,56,56;128,64,3,3", "FLOAT16", {{"pads", "1,1,1,1"}});
    add("Add", "1024,4096;1024,4096", "FLOAT16");
    add("Equal", "1,4000;400,1", "INT64");
    add("Mul", "64,400;64,1", "FLOAT");
    add("ReduceSum", "512,1000", "FLOAT", {{"axes", "1"}});
    add("SoftmaxV2", "64,12,128,128", "FLOAT16");
    add("RmsNorm", "4096,4096;4096", "BF16");
    add("Tile", "1,32,300", "FLOAT16", {{"multiples", "128,1,1"}});
    add("ConcatD", "64,400;64,400", "FLOAT16", {{"concat_dim", "1"}});
    add("Transpose", "64,128,256", "FLOAT16", {{"perm", "0,2,1"}});
    add("Cast", "4096,4096", "FLOAT16", {{"dst_type", "FLOAT"}});
    add("TensorMove", "1000000", "FLOAT");
    add("GatherV2", "400,50;64,4000;1", "FLOAT16;INT64;INT32");
    add("GatherV2", "1000000,64;64,4000;1", "FLOAT16;INT32;INT32");
    add("ScatterNd", "8192,1;8192,128", "INT32;FLOAT");
    add("TopKV2", "64,4000", "FLOAT16", {{"k", "100"}});
    add("TopKV2", "64,4000", "INT64", {{"k", "100"}});
    add("Where", "64,4000", "BOOL");
    add("Bucketize", "64,4000", "INT64");
    add("SomeNewFusedOp", "64,4000", "FLOAT16");
    return v;
  }();
  return cases;
}

}  // namespace

TEST_CASE("the critical path sums to the duration for every family", "[predict][property]") {
  const HwSpec& hw = chip("ascend910b3");
  for (const auto& t : family_cases()) {
    const OpCost c = predict(op(t), hw);
    INFO(t.type << " " << t.input_shapes);
    CHECK(c.duration_us > 0);
    CHECK(std::isfinite(c.duration_us));
    CHECK(c.critical_path.sum() == Approx(c.duration_us).epsilon(1e-12));
    CHECK(c.core_time_us == Approx(c.block_dim * c.duration_us));
    CHECK(c.cube_efficiency > 0);
    CHECK(c.cube_efficiency <= 1);
  }
}

TEST_CASE("more bytes never cost less time", "[predict][property]") {
  const HwSpec& hw = chip("ascend910b3");
  const char* types[] = {"Add", "Mul", "TensorMove", "Cast", "ReduceSum", "SoftmaxV2", "Relu"};
  for (const char* type : types) {
    double prev = 0;
    for (int rows = 1; rows <= 8192; rows = rows * 2 + 1) {
      OpText t;
      t.type = type;
      t.input_shapes = fmt::format("{},1000;{},1000", rows, rows);
      if (std::string(type) != "Add" && std::string(type) != "Mul") {
        t.input_shapes = fmt::format("{},1000", rows);
      }
      t.input_dtypes = "FLOAT16";
      const double d = predict(op(t), hw).duration_us;
      INFO(type << " rows " << rows);
      CHECK(d >= prev * (1 - 1e-12));
      prev = d;
    }
  }
  double prev = 0;
  for (int m = 16; m <= 8192; m *= 2) {
    OpText t;
    t.type = "MatMulV2";
    t.input_shapes = fmt::format("{},1024;1024,1024", m);
    t.input_dtypes = "FLOAT16";
    const double d = predict(op(t), hw).duration_us;
    INFO("MatMul M " << m);
    CHECK(d >= prev);
    prev = d;
  }
}

TEST_CASE(
    "cutting the core budget below the block dim never speeds an op up, except through "
    "head overhead",
    "[predict][property]") {
  const HwSpec& hw = chip("ascend910b3");
  for (const auto& t : family_cases()) {
    const OpDesc o = op(t);
    const OpCost full = predict(o, hw);
    for (int cores = 1; cores < full.block_dim; ++cores) {
      const CoreBudget budget{cores, cores};
      const OpCost cut = predict(o, hw, budget);
      INFO(t.type << " " << t.input_shapes << " at " << cores << " cores");
      CHECK(cut.block_dim <= cores);
      const double without_head_cut = cut.duration_us - cut.critical_path.head_us;
      const double without_head_full = full.duration_us - full.critical_path.head_us;
      CHECK(without_head_cut >= without_head_full * (1 - 1e-9));
    }
  }
}

TEST_CASE("an op whose tensors exceed the chip's device memory is flagged, one that fits is not",
          "[predict][warning]") {
  const HwSpec& hw = chip("ascend910b3");  // hbm_bytes = 64 GiB
  REQUIRE(hw.chip.hbm_bytes == 68719476736.0);
  // fp16 Add of 2^33 elements: 16 GiB per tensor, 16 + 16 read + 16 written = 48 GiB: fits
  const OpCost fits = predict(op("Add", "8589934592;8589934592", "FLOAT16"), hw);
  CHECK((fits.warnings & kWarnExceedsDeviceMemory) == 0);
  // 2^34 elements: 32 + 32 + 32 = 96 GiB: no card holds it; the time is still computed
  const OpDesc big = op("Add", "17179869184;17179869184", "FLOAT16");
  const OpCost over = predict(big, hw);
  CHECK((over.warnings & kWarnExceedsDeviceMemory) != 0);
  CHECK(std::isfinite(over.duration_us));
  CHECK((predict(PreparedOp(big), hw).warnings & kWarnExceedsDeviceMemory) != 0);
  // an output the op writes counts, though no output is given: Tile's inferred output (8 GiB x 9)
  const OpCost tiled =
      predict(op("Tile", "4294967296", "FLOAT16", {{"multiples", "9"}}), hw);
  CHECK((tiled.warnings & kWarnExceedsDeviceMemory) != 0);
  CHECK_FALSE(warning_texts(over.warnings, "Add").empty());
}
