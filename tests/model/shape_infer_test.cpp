// Shape inference, one rule at a time, on cases worked out by hand (the numbers in each comment
// are the arithmetic the rule must do).
#include "model/shape_infer.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using Attrs = std::vector<std::pair<std::string, std::string>>;

npusim::InferredOutputs infer(const std::string& type, std::vector<std::string> shapes,
                              std::vector<std::string> dtypes, Attrs attrs = {}) {
  npusim::OpText t;
  t.name = "op";
  t.type = type;
  t.attrs = std::move(attrs);
  const auto r = npusim::infer_output_templates(t, shapes, dtypes, {"<test>", 3, 1});
  REQUIRE(r.has_value());
  return *r;
}

std::string out0(const std::string& type, std::vector<std::string> shapes,
                 std::vector<std::string> dtypes, Attrs attrs = {}) {
  return infer(type, std::move(shapes), std::move(dtypes), std::move(attrs)).shapes.at(0);
}

std::string infer_error_of(const std::string& type, std::vector<std::string> shapes,
                     std::vector<std::string> dtypes, Attrs attrs = {}) {
  npusim::OpText t;
  t.name = "op";
  t.type = type;
  t.attrs = std::move(attrs);
  try {
    (void)npusim::infer_output_templates(t, shapes, dtypes, {"<test>", 3, 1});
  } catch (const npusim::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("elementwise ops broadcast from the right and compares give BOOL", "[shape]") {
  // (B,4000,50) * (B,4000,1): the last axis broadcasts 1 -> 50
  CHECK(out0("Mul", {"B,4000,50", "B,4000,1"}, {"FLOAT16", "FLOAT16"}) == "B,4000,50");
  // (1,4000) == (400,1) -> (400,4000)
  const auto eq = infer("Equal", {"1,4000", "400,1"}, {"INT64", "INT64"});
  CHECK(eq.shapes == std::vector<std::string>{"400,4000"});
  CHECK(eq.dtypes == std::vector<std::string>{"BOOL"});
  // a scalar broadcasts against anything
  CHECK(out0("FloorMod", {"B,64", ""}, {"INT64", "INT64"}) == "B,64");
  CHECK(out0("Add", {"B*2,8", "8"}, {"FLOAT16", "FLOAT16"}) == "B*2,8");
  CHECK_THAT(infer_error_of("Add", {"B,16", "B,8"}, {"FLOAT16", "FLOAT16"}),
             Catch::Contains("<test>:3:1") && Catch::Contains("do not broadcast"));
  // B against a constant other than 1 cannot be decided for every batch size: an error
  CHECK_THAT(infer_error_of("Add", {"B,16", "4,16"}, {"FLOAT16", "FLOAT16"}),
             Catch::Contains("do not broadcast"));
  // select(cond, x, y) takes x's dtype
  CHECK(infer("SelectV2", {"B,1", "B,8", "1"}, {"BOOL", "FLOAT32", "FLOAT32"}).dtypes[0] ==
        "FLOAT");  // the canonical spelling of fp32
  // SwiGlu halves its last axis: 2 x 4096 -> 4096
  CHECK(out0("SwiGlu", {"B,8192"}, {"BFLOAT16"}) == "B,4096");
}

TEST_CASE("MatMul and BatchMatMul honour transposes and broadcast the batch", "[shape]") {
  CHECK(out0("MatMulV2", {"B,7200", "7200,256"}, {"FLOAT16", "FLOAT16"}) == "B,256");
  // x2 transposed: (64,256)^T = (256,64) -> (B,64)
  CHECK(out0("MatMulV2", {"B,256", "64,256"}, {"FLOAT16", "FLOAT16"},
             {{"transpose_x2", "true"}}) == "B,64");
  // x1 transposed: (32,B)^T (32,16) -> (B,16)
  CHECK(out0("MatMul", {"32,B", "32,16"}, {"FLOAT16", "FLOAT16"}, {{"transpose_x1", "1"}}) ==
        "B,16");
  // the seed: (B,8,1,32) x (1,8,32,300): batch (B,8) broadcast with (1,8) -> (B,8,1,300)
  CHECK(out0("BatchMatMul", {"B,8,1,32", "1,8,32,300"}, {"FLOAT16", "FLOAT16"}) == "B,8,1,300");
  // ranks differ: (8,B,1,32) x (8,32,300) -> batch (8,B) with (8) right-aligned... (8) vs B: no
  CHECK_THAT(infer_error_of("BatchMatMulV2", {"8,B,1,32", "8,32,300"}, {"FLOAT16", "FLOAT16"}),
             Catch::Contains("do not broadcast"));
  // adj_x2: (4,300,32)^T per batch -> K 32 matches
  CHECK(out0("BatchMatMul", {"4,1,32", "4,300,32"}, {"FLOAT16", "FLOAT16"},
             {{"adj_x2", "true"}}) == "4,1,300");
  CHECK_THAT(infer_error_of("MatMulV2", {"B,64", "65,1"}, {"FLOAT16", "FLOAT16"}),
             Catch::Contains("K differs"));
  // int8 GEMMs accumulate into int32
  CHECK(infer("MatMulV2", {"16,32", "32,8"}, {"INT8", "INT8"}).dtypes[0] == "INT32");
}

TEST_CASE("Tile multiplies by its multiples, B included, and Concat adds along its axis",
          "[shape]") {
  CHECK(out0("Tile", {"1,8,32,300", "4"}, {"FLOAT16", "INT64"}, {{"multiples", "128,1,1,1"}}) ==
        "128,8,32,300");
  CHECK(out0("Tile", {"1,8,32,300", "4"}, {"FLOAT16", "INT64"}, {{"multiples", "B,1,1,1"}}) ==
        "B,8,32,300");
  // more multiples than axes: the input is promoted with leading 1s
  CHECK(out0("TileD", {"32,300"}, {"FLOAT16"}, {{"multiples", "[2, 1, 3]"}}) == "2,32,900");
  // B,2400 three times on axis 1 -> 7200; B,8 and B*3,8 on axis 0 -> B*4
  CHECK(out0("ConcatD", {"B,2400", "B,2400", "B,2400"}, {"FLOAT16", "FLOAT16", "FLOAT16"},
             {{"concat_dim", "1"}}) == "B,7200");
  CHECK(out0("ConcatV2D", {"B,8", "B*3,8"}, {"FLOAT16", "FLOAT16"}, {{"axis", "0"}}) == "B*4,8");
  // ConcatV2 carries its axis as a last one-element integer input, which is not data
  CHECK(out0("ConcatV2", {"B,8", "B,8", "1"}, {"FLOAT16", "FLOAT16", "INT32"},
             {{"axis", "-1"}}) == "B,16");
  // B + 4 is not k or k*B
  CHECK_THAT(infer_error_of("ConcatD", {"B,8", "4,8"}, {"FLOAT16", "FLOAT16"}, {{"concat_dim", "0"}}),
             Catch::Contains("not a dimension of the form k or k*B"));
  CHECK(out0("Pack", {"B,8", "B,8"}, {"FLOAT16", "FLOAT16"}, {{"axis", "1"}}) == "B,2,8");
}

TEST_CASE("reductions drop or keep their axes, and ArgMax gives INT32", "[shape]") {
  CHECK(out0("ReduceSum", {"B,4000,50"}, {"FLOAT16"}, {{"axes", "1"}}) == "B,50");
  CHECK(out0("ReduceMeanD", {"B,4000,50"}, {"FLOAT16"}, {{"axes", "-1"}, {"keep_dims", "true"}}) ==
        "B,4000,1");
  // no axes and no axes input: all of them, to a scalar
  CHECK(out0("ReduceMax", {"B,16"}, {"FLOAT32"}) == "");
  const auto am = infer("ArgMaxV2", {"B,10"}, {"FLOAT16"}, {{"dimension", "1"}});
  CHECK(am.shapes[0] == "B");
  CHECK(am.dtypes[0] == "INT32");
}

TEST_CASE("Gather takes axis and batch_dims, and TopK returns values and INT32 indices",
          "[shape]") {
  // params (400,50), indices (B,4000), axis 0 -> (B,4000,50)
  CHECK(out0("GatherV2", {"400,50", "B,4000", "1"}, {"FLOAT16", "INT64", "INT32"}) == "B,4000,50");
  // axis 1: (400,50) with indices (7) -> (400,7)
  CHECK(out0("GatherV2D", {"400,50", "7"}, {"FLOAT16", "INT32"}, {{"axis", "1"}}) == "400,7");
  // batch_dims 1: params (B,100,16), indices (B,5), axis 1 -> (B) + (5) + (16)
  CHECK(out0("GatherV2", {"B,100,16", "B,5"}, {"FLOAT16", "INT32"},
             {{"axis", "1"}, {"batch_dims", "1"}}) == "B,5,16");
  CHECK_THAT(infer_error_of("GatherV2", {"4,100,16", "B,5"}, {"FLOAT16", "INT32"},
                      {{"axis", "1"}, {"batch_dims", "1"}}),
             Catch::Contains("batch axis 0"));
  const auto tk = infer("TopK", {"B,4000", "1"}, {"FLOAT16", "INT32"}, {{"k", "50"}});
  CHECK(tk.shapes == std::vector<std::string>{"B,50", "B,50"});
  CHECK(tk.dtypes == std::vector<std::string>{"FLOAT16", "INT32"});
  CHECK_THAT(infer_error_of("TopK", {"B,40"}, {"FLOAT16"}, {{"k", "50"}}), Catch::Contains("k = 50"));
  // GatherNd: indices (B,3,2) into params (10,20,8) -> (B,3) + (8)
  CHECK(out0("GatherNd", {"10,20,8", "B,3,2"}, {"FLOAT16", "INT32"}) == "B,3,8");
}

TEST_CASE("Transpose, Reshape, Squeeze, Unsqueeze, Flatten and Cast", "[shape]") {
  CHECK(out0("Transpose", {"B,8,1,32"}, {"FLOAT16"}, {{"perm", "1,0,2,3"}}) == "8,B,1,32");
  CHECK(out0("Transpose", {"2,3,4"}, {"FLOAT16"}) == "4,3,2");  // no perm: reversed
  // (B,4000,50) -> (B,-1): 4000 x 50 = 200000
  CHECK(out0("Reshape", {"B,4000,50"}, {"FLOAT16"}, {{"shape", "B,-1"}}) == "B,200000");
  // (B,8,32) -> (-1,32): B x 8 -> B*8
  CHECK(out0("Reshape", {"B,8,32"}, {"FLOAT16"}, {{"shape", "-1,32"}}) == "B*8,32");
  CHECK_THAT(infer_error_of("Reshape", {"B,8"}, {"FLOAT16"}, {{"shape", "3,-1"}}),
             Catch::Contains("cannot reshape"));
  CHECK(out0("Squeeze", {"B,1,32,1"}, {"FLOAT16"}) == "B,32");
  CHECK(out0("Squeeze", {"B,1,32,1"}, {"FLOAT16"}, {{"axis", "1"}}) == "B,32,1");
  CHECK(out0("Unsqueeze", {"B,4000"}, {"BOOL"}, {{"axes", "-1"}}) == "B,4000,1");
  CHECK(out0("Flatten", {"B,8,4,4"}, {"FLOAT16"}) == "B,128");
  const auto c = infer("Cast", {"B,4000,1"}, {"BOOL"}, {{"dst_type", "DT_FLOAT16"}});
  CHECK(c.shapes[0] == "B,4000,1");
  CHECK(c.dtypes[0] == "FLOAT16");
}

TEST_CASE("Slice and StridedSlice clip to the axis, and only a whole batch axis is kept",
          "[shape]") {
  // offsets (0,10) size (-1,20) on (B,64) -> (B,20)
  CHECK(out0("SliceD", {"B,64"}, {"FLOAT16"}, {{"offsets", "0,10"}, {"size", "-1,20"}}) == "B,20");
  // begin 1, end 10, stride 2 on 64 -> 1,3,5,7,9: 5
  CHECK(out0("StridedSlice", {"B,64"}, {"FLOAT16"},
             {{"begin", "0,1"}, {"end", "0,10"}, {"strides", "1,2"}, {"begin_mask", "1"},
              {"end_mask", "1"}}) == "B,5");
  // shrink axis 1 at index 3 -> (B)
  CHECK(out0("StridedSliceD", {"B,64"}, {"FLOAT16"},
             {{"begin", "0,3"}, {"end", "0,4"}, {"begin_mask", "1"}, {"end_mask", "1"},
              {"shrink_axis_mask", "2"}}) == "B");
  // the first 2 rows of a B axis are not k or k*B
  CHECK_THAT(infer_error_of("SliceD", {"B,64"}, {"FLOAT16"}, {{"offsets", "0,0"}, {"size", "2,64"}}),
             Catch::Contains("batch axis 0"));
}

TEST_CASE("Conv2D and pooling follow the window arithmetic", "[shape]") {
  // 224 + 3 + 3 - 1*(7-1) - 1 = 223; 223 / 2 = 111; + 1 = 112
  CHECK(out0("Conv2D", {"B,3,224,224", "64,3,7,7"}, {"FLOAT16", "FLOAT16"},
             {{"strides", "1,1,2,2"}, {"pads", "3,3,3,3"}}) == "B,64,112,112");
  // dilation 2, kernel 3, no pad: 32 - 2*2 - 1 = 27; 27 / 1 + 1 = 28
  CHECK(out0("Conv2D", {"1,8,32,32", "16,8,3,3"}, {"FLOAT16", "FLOAT16"},
             {{"dilations", "1,1,2,2"}}) == "1,16,28,28");
  // NHWC: strides given for 4 axes as N,H,W,C
  CHECK(out0("Conv2D", {"B,32,32,8", "16,8,3,3"}, {"FLOAT16", "FLOAT16"},
             {{"data_format", "NHWC"}, {"strides", "1,2,2,1"}, {"pads", "1,1,1,1"}}) ==
        "B,16,16,16");
  // max pool 3x3 stride 2 pad 1 on 112: 112 + 2 - 2 - 1 = 111; 111 / 2 = 55; + 1 = 56
  CHECK(out0("MaxPool", {"B,64,112,112"}, {"FLOAT16"},
             {{"ksize", "1,1,3,3"}, {"strides", "1,1,2,2"}, {"pads", "1,1,1,1"}}) ==
        "B,64,56,56");
  CHECK(out0("GlobalAveragePool", {"B,512,7,7"}, {"FLOAT16"}) == "B,512,1,1");
  // Groups: the filter holds C / groups input channels; ONNX spells the attribute `group`.
  CHECK(out0("Conv2D", {"1,8,32,32", "16,4,3,3"}, {"FLOAT16", "FLOAT16"}, {{"groups", "2"}}) ==
        "1,16,30,30");
  CHECK(out0("Conv2D", {"1,8,32,32", "16,2,3,3"}, {"FLOAT16", "FLOAT16"}, {{"group", "4"}}) ==
        "1,16,30,30");
  CHECK_THAT(infer_error_of("Conv2D", {"1,3,224,224", "64,3,7,7"}, {"FLOAT16", "FLOAT16"},
                            {{"groups", "2"}}),
             Catch::Contains("the input has 3 channels but the filter 3 x groups 2"));
  CHECK_THAT(infer_error_of("Conv2D", {"1,3,224,224", "64,4,7,7"}, {"FLOAT16", "FLOAT16"}),
             Catch::Contains("the input has 3 channels but the filter 4 x groups 1"));
  CHECK_THAT(infer_error_of("Conv2D", {"1,6,32,32", "16,2,3,3"}, {"FLOAT16", "FLOAT16"},
                            {{"groups", "3"}}),
             Catch::Contains("the groups (3) do not divide the filter's 16 output channels"));
}

TEST_CASE("data-dependent outputs are an upper bound, and say so", "[shape]") {
  const auto nz = infer("NonZero", {"B,16"}, {"FLOAT16"});
  CHECK_FALSE(nz.exact);
  CHECK(nz.shapes[0] == "B*16,2");
  CHECK_THAT(nz.note, Catch::Contains("upper bound"));
  // Where with three inputs is a select: exact
  const auto w = infer("Where", {"B,4000", "B,4000", "1"}, {"BOOL", "INT64", "INT64"});
  CHECK(w.exact);
  CHECK(w.shapes[0] == "B,4000");
  CHECK(w.dtypes[0] == "INT64");
  const auto ms = infer("MaskedSelect", {"B,8", "B,8"}, {"FLOAT16", "BOOL"});
  CHECK_FALSE(ms.exact);
  CHECK(ms.shapes[0] == "B*8");
}

TEST_CASE("an op type without a rule, or a rule missing its attribute, infers nothing",
          "[shape]") {
  npusim::OpText t;
  t.name = "x";
  t.type = "MyCustomOp";
  CHECK_FALSE(npusim::infer_output_templates(t, {"B,4"}, {"FLOAT16"}, {}).has_value());
  t.type = "Reshape";  // no `shape` attribute: the target is data
  CHECK_FALSE(npusim::infer_output_templates(t, {"B,4"}, {"FLOAT16"}, {}).has_value());
  t.type = "Tile";
  CHECK_FALSE(npusim::infer_output_templates(t, {"B,4", "2"}, {"FLOAT16", "INT64"}, {}).has_value());
}
