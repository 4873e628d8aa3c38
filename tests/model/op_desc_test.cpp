#include "model/op_desc.h"

#include <catch2/catch.hpp>
#include <set>

#include "model/op_table.h"

using namespace npusim;

namespace {
const SourcePos kPos{"<test>", 3, 7};

std::string op_error_of(const OpText& t) {
  try {
    (void)make_op(t, kPos);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("profile-style shape lists parse into one shape per tensor", "[op_desc]") {
  const auto s = parse_shape_list("1,4000;400,1", kPos);
  REQUIRE(s.size() == 2);
  CHECK(s[0] == std::vector<std::int64_t>{1, 4000});
  CHECK(s[1] == std::vector<std::int64_t>{400, 1});
  // msprof writes triple-quoted fields and sometimes a trailing TAB
  CHECK(parse_shape_list("\"\"\"8,16\"\"\"\t", kPos)[0] == std::vector<std::int64_t>{8, 16});
  // an empty item is a scalar
  const auto t = parse_shape_list("4;;2", kPos);
  REQUIRE(t.size() == 3);
  CHECK(t[1].empty());
}

TEST_CASE("every dtype spelling seen in profiles and by hand is accepted", "[op_desc]") {
  for (const char* s : {"FLOAT16", "DT_FLOAT16", "float16", "fp16", "half"}) {
    CHECK(parse_dtype(s) == DType::kFloat16);
  }
  for (const char* s : {"DT_BF16", "bf16", "BFLOAT16"}) CHECK(parse_dtype(s) == DType::kBFloat16);
  for (const char* s : {"FLOAT", "float32", "fp32", "DT_FLOAT"})
    CHECK(parse_dtype(s) == DType::kFloat32);
  CHECK(parse_dtype("INT64") == DType::kInt64);
  CHECK(parse_dtype("int8") == DType::kInt8);
  CHECK_FALSE(parse_dtype("FLOAT17").has_value());
  CHECK(dtype_bytes(DType::kInt64) == 8);
  CHECK(dtype_bytes(DType::kBFloat16) == 2);
}

TEST_CASE("formats and placements accept CANN and profile spellings", "[op_desc]") {
  CHECK(parse_format("FORMAT_ND") == Format::kND);
  CHECK(parse_format("NZ") == Format::kFractalNZ);
  CHECK(parse_format("FRACTAL_NZ") == Format::kFractalNZ);
  CHECK(parse_format("NC1HWC0") == Format::kNC1HWC0);
  CHECK_FALSE(parse_format("ZZTOP").has_value());
  CHECK(parse_placement("AI_CPU") == Placement::kAicpu);
  CHECK(parse_placement("AI_VECTOR_CORE") == Placement::kVector);
  CHECK(parse_placement("MIX_AIC") == Placement::kMix);
  CHECK(parse_placement("host") == Placement::kHost);
}

TEST_CASE("op types resolve through the one table, including V2/V3, D-suffixed and aclnn names",
          "[op_desc]") {
  CHECK(lookup_op_kind("MatMulV2").family == OpFamily::kCube);
  CHECK(lookup_op_kind("BatchMatMulV3").role == OpRole::kBatchMatMul);
  CHECK(lookup_op_kind("ConcatD").family == OpFamily::kDataMovement);
  CHECK(lookup_op_kind("GatherV2").family == OpFamily::kIndex);
  CHECK(lookup_op_kind("TopKV2").family == OpFamily::kSort);
  CHECK(lookup_op_kind("Unique").family == OpFamily::kAicpu);
  CHECK(lookup_op_kind("aclnnAdd").family == OpFamily::kElementwise);
  CHECK(lookup_op_kind("FlibbertyGibbet").family == OpFamily::kGeneric);
  // every table row names a distinct type
  std::set<std::string> seen;
  for (const auto& k : op_table()) CHECK(seen.insert(std::string(k.type)).second);
}

TEST_CASE("make_op broadcasts a single dtype and format to every input", "[op_desc]") {
  OpText t;
  t.type = "Equal";
  t.input_shapes = "1,4000;400,1";
  t.input_dtypes = "INT64";
  const OpDesc op = make_op(t, kPos);
  REQUIRE(op.inputs.size() == 2);
  CHECK(op.inputs[1].dtype == DType::kInt64);
  CHECK(op.inputs[1].format == Format::kND);
  CHECK(op.inputs[0].bytes() == 32000);
}

TEST_CASE("an empty input shape list with one dtype is one scalar input (a profile's \"\")",
          "[op_desc]") {
  OpText t;
  t.type = "Cast";
  t.input_shapes = "";
  t.input_dtypes = "FLOAT";
  t.output_dtypes = "INT32";  // an output dtype without a shape is inferred, not a scalar
  const OpDesc op = make_op(t, kPos);
  REQUIRE(op.inputs.size() == 1);
  CHECK(op.inputs[0].shape.empty());
  CHECK(op.inputs[0].bytes() == 4);
  CHECK(op.outputs.empty());
}

TEST_CASE("bad op descriptions give their exact message at the given position", "[op_desc][bad]") {
  OpText t;
  t.type = "Add";
  t.input_shapes = "4,0;4,4";
  t.input_dtypes = "FLOAT16";
  CHECK(op_error_of(t) == "<test>:3:7: error: shape 0 '4,0': dimension 0 must be > 0");
  t.input_shapes = "4,-2";
  CHECK(op_error_of(t) == "<test>:3:7: error: shape 0 '4,-2': dimension -2 must be > 0");
  t.input_shapes = "4294967296,4294967296";
  CHECK(op_error_of(t) ==
        "<test>:3:7: error: shape 0 '4294967296,4294967296': element count overflows 64 bits");
  t.input_shapes = "4,x";
  CHECK(op_error_of(t) == "<test>:3:7: error: shape 0 '4,x': dimension 'x' is not an integer");
  t.input_shapes = "4,4;4,4;4";
  t.input_dtypes = "FLOAT16;FLOAT16";
  CHECK(op_error_of(t) ==
        "<test>:3:7: error: inputs: 3 shapes but 2 dtypes; give one dtype per shape "
        "(or one for all)");
  t.input_shapes = "4,4";
  t.input_dtypes = "FLOAT17";
  CHECK(op_error_of(t).rfind("<test>:3:7: error: unknown dtype 'FLOAT17'; accepted: FLOAT16", 0) == 0);
  t.input_dtypes = "FLOAT16";
  t.attrs = {{"index_dup_ratio", "1.5"}};
  CHECK(op_error_of(t) ==
        "<test>:3:7: error: attribute 'index_dup_ratio': expected a number in [0, 1], got 1.5");
  t.attrs = {{"index_dup_ratio", "nan"}};
  CHECK(op_error_of(t).find("expected a number, got 'nan'") != std::string::npos);
}
