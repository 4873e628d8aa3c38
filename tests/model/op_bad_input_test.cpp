// Op defects written in a file (a graph's op table) are reported at that file's line, with the
// same words as on the command line (tests/app/cli_test.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "model/graph.h"
#include "model/hw_spec.h"
#include "model/predict.h"
#include "tests/test_paths.h"

using namespace npusim;

namespace {

std::string load_error(const std::string& name) {
  const std::string path = std::string(NPUSIM_TEST_DATA_DIR) + "/bad/" + name;
  try {
    (void)load_graph_file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string at(const std::string& name, int line, int col) {
  return std::string(NPUSIM_TEST_DATA_DIR) + "/bad/" + name + ":" + std::to_string(line) + ":" +
         std::to_string(col) + ": error: ";
}

}  // namespace

TEST_CASE("op files with a bad dimension, dtype or count fail with their exact file:line message",
          "[op_desc][bad]") {
  CHECK(load_error("op_zero_dim.toml") ==
        at("op_zero_dim.toml", 5, 1) + "shape 0 '4,0': dimension 0 must be > 0");
  CHECK(load_error("op_negative_dim.toml") ==
        at("op_negative_dim.toml", 5, 1) + "shape 0 '4,-3': dimension -3 must be > 0");
  CHECK(load_error("op_overflow.toml") ==
        at("op_overflow.toml", 5, 1) +
            "shape 0 '4294967296,4294967296': element count overflows 64 bits");
  CHECK(load_error("op_unknown_dtype.toml").rfind(
            at("op_unknown_dtype.toml", 5, 1) + "unknown dtype 'FLOAT17'; accepted: FLOAT16", 0) == 0);
  CHECK(load_error("op_count_mismatch.toml") ==
        at("op_count_mismatch.toml", 5, 1) +
            "inputs: 3 shapes but 2 dtypes; give one dtype per shape (or one for all)");
}

// Found by fuzz_op_text (fuzz/): a FlashAttentionScore whose head_num was text reached
// plan_attention, a noexcept cost model, and the throw there aborted the process.
TEST_CASE("attributes the cost models count or index with are checked when the op is made",
          "[op_desc][bad][fuzz]") {
  const auto make = [](const std::string& type, const std::string& shapes, const std::string& key,
                       const std::string& value) {
    OpText t;
    t.name = "x";
    t.type = type;
    t.input_shapes = shapes;
    t.input_dtypes = "FLOAT16";
    t.attrs = {{key, value}};
    return make_op(t, SourcePos{"<cli>", 0, 0});
  };
  const std::string qkv = "1,4096,4096;1,4096,4096;1,4096,4096";
  CHECK_THROWS_AS(make("FlashAttentionScore", qkv, "head_num", "x"), InputError);
  CHECK_THROWS_AS(make("FlashAttentionScore", qkv, "head_num", "0"), InputError);
  CHECK_THROWS_AS(make("FlashAttentionScore", qkv, "sparse_mode", "1e300"), InputError);
  CHECK_THROWS_AS(make("ConcatD", "4,8;4,8", "concat_dim", "1e300"), InputError);
  CHECK_NOTHROW(make("FlashAttentionScore", qkv, "head_num", "32"));
  CHECK_NOTHROW(make("ConcatD", "4,8;4,8", "concat_dim", "1"));
}

// Found by fuzz_op_text: a shape whose element count fits 64 bits but whose vector tile count
// (6.6e19) does not reached an undefined double-to-int64 conversion in the tile planner. The
// counts saturate; the prediction stays a finite, positive number.
TEST_CASE("an absurd but representable shape predicts a finite time", "[op_desc][bad][fuzz]") {
  const HwSpec hw =
      load_hw_spec(std::string(NPUSIM_SOURCE_DIR) + "/hw_specs/ascend910b3.toml");
  // ... and the second finding: a broadcast Add whose row count (1.2e22) passed int64.
  for (const std::string type : {"MatMulV2", "Add", "ReduceSum", "ConcatD", "SoftmaxV2"}) {
    INFO(type);
    OpText t;
    t.name = "x";
    t.type = type;
    t.input_shapes = "4096,40964,5964,54,56,56;44444025";
    t.input_dtypes = "DT_BF16;DT_BF16";
    t.input_formats = "ND;ND";
    if (type == "Add") {  // each input fits 64 bits, their broadcast (1.6e19 rows) does not
      t.input_shapes = "4000000000,1,1;1,4000000000,1";
      t.input_dtypes = "FLOAT16";
      t.input_formats = "";
    }
    const OpDesc op = make_op(t, SourcePos{"<cli>", 0, 0});
    const double us = predict(op, hw).duration_us;
    CHECK(std::isfinite(us));
    CHECK(us > 0);
  }
}

// An index or sort op missing the tensors its cost model needs (a gather with no indices, a
// scatter with no updates, a sort with nothing to sort) is costed best effort with the generic
// model; the user is told its inputs do not fit, not that its type is unknown (it is known).
TEST_CASE("index and sort ops missing their tensors warn of a shape mismatch", "[op_desc][bad]") {
  const HwSpec hw =
      load_hw_spec(std::string(NPUSIM_SOURCE_DIR) + "/hw_specs/ascend910b3.toml");
  struct Case {
    const char* type;
    const char* shapes;
    const char* dtypes;
  };
  for (const Case c : {Case{"GatherV2", "400,50", "FLOAT16"},
                       Case{"ScatterNdUpdate", "400,50;8,50", "FLOAT16;FLOAT16"},
                       Case{"TopKV2", "", ""}}) {
    INFO(c.type);
    OpText t;
    t.type = c.type;
    t.input_shapes = c.shapes;
    t.input_dtypes = c.dtypes;
    t.output_shapes = "400,50";
    t.output_dtypes = "FLOAT16";
    const OpDesc op = make_op(t, SourcePos{"<test>", 0, 0});
    const OpCost cost = predict(op, hw);
    CHECK((cost.warnings & kWarnShapeMismatch) != 0);
    CHECK((cost.warnings & kWarnUnknownOpType) == 0);
    CHECK(std::isfinite(cost.duration_us));
    CHECK(cost.duration_us > 0);
  }
}
