// GE graph dumps: synthetic ge_onnx_*_Build.pbtxt files written from the documented encoding
// (../shared/research/onnx_import.md section 4), since no public dump exists.
#include <catch2/catch.hpp>

#include <string>

#include "frontend/import.h"
#include "model/error.h"
#include "tests/frontend/onnx_test_util.h"

using npusim::InputError;
using npusim::frontend::import_ge_dump;
using npusim::test::op_named;
using npusim::test::TempFile;

namespace {

std::string ints_attr(const std::string& name, std::initializer_list<int> dims) {
  std::string s = "attribute { name: \"" + name + "\" type: INTS";
  for (const int d : dims) s += " ints: " + std::to_string(d);
  return s + " }\n";
}
std::string str_attr(const std::string& name, const std::string& v) {
  return "attribute { name: \"" + name + "\" s: \"" + v + "\" type: STRING }\n";
}
std::string int_attr(const std::string& name, int v) {
  return "attribute { name: \"" + name + "\" i: " + std::to_string(v) + " type: INT }\n";
}
// One tensor descriptor: logical shape in origin_shape, the device layout in shape.
std::string desc(const std::string& side, int i, std::initializer_list<int> logical,
                 std::initializer_list<int> device, const std::string& layout,
                 const std::string& dtype = "DT_FLOAT16") {
  const std::string k = side + "_desc_";
  const std::string n = ":" + std::to_string(i);
  return ints_attr(k + "origin_shape" + n, logical) + ints_attr(k + "shape" + n, device) +
         str_attr(k + "layout" + n, layout) + str_attr(k + "origin_layout" + n, "ND") +
         str_attr(k + "dtype" + n, dtype) + str_attr(k + "origin_dtype" + n, dtype);
}

// x [16,64] -> TransData (ND -> FRACTAL_NZ) -> MatMulV2 with a Const weight [64,32] -> Cast to
// fp32 (with a control edge from the TransData) -> NetOutput.
// With `cast_mismatch`, the Cast describes its input as [16,16] (not the MatMul's [16,32]).
std::string dump(bool drop_weight_desc, bool cast_mismatch = false) {
  std::string s = "ir_version: 6\nproducer_name: \"GE\"\ngraph {\n name: \"ge_default_1\"\n";
  s += "node { name: \"x\" op_type: \"ge:Data\"\n" + desc("output", 0, {16, 64}, {16, 64}, "ND") +
       "}\n";
  s += "node { name: \"w\" op_type: \"ge:Const\"\n" +
       desc("output", 0, {64, 32}, {2, 4, 16, 16}, "FRACTAL_NZ") + "}\n";
  s += "node { name: \"trans_x\" op_type: \"ge:TransData\" input: \"x:0\"\n" +
       desc("input", 0, {16, 64}, {16, 64}, "ND") +
       desc("output", 0, {16, 64}, {4, 1, 16, 16}, "FRACTAL_NZ") + int_attr("stream_id", 0) +
       str_attr("src_format", "ND") + str_attr("dst_format", "FRACTAL_NZ") + "}\n";
  s += "node { name: \"mm\" op_type: \"ge:MatMulV2\" input: \"trans_x:0\" input: \"w:0\" input: "
       "\"\"\n" +
       desc("input", 0, {16, 64}, {4, 1, 16, 16}, "FRACTAL_NZ") +
       (drop_weight_desc ? "" : desc("input", 1, {64, 32}, {2, 4, 16, 16}, "FRACTAL_NZ")) +
       desc("output", 0, {16, 32}, {2, 1, 16, 16}, "FRACTAL_NZ") + int_attr("transpose_x1", 0) +
       int_attr("transpose_x2", 0) + int_attr("input_desc_nums", 3) +
       int_attr("output_desc_nums", 1) + "}\n";
  s += "node { name: \"cast\" op_type: \"ge:Cast\" input: \"mm:0\" input: \"trans_x:-1\"\n" +
       (cast_mismatch ? desc("input", 0, {16, 16}, {16, 16}, "ND") +
                            desc("output", 0, {16, 16}, {16, 16}, "ND", "DT_FLOAT")
                      : desc("input", 0, {16, 32}, {16, 32}, "ND") +
                            desc("output", 0, {16, 32}, {16, 32}, "ND", "DT_FLOAT")) +
       int_attr("dst_type", 0) + "}\n";
  s += "node { name: \"out\" op_type: \"ge:NetOutput\" input: \"cast:0\"\n" +
       desc("input", 0, {16, 32}, {16, 32}, "ND", "DT_FLOAT") + "}\n";
  return s + "}\n";
}

}  // namespace

TEST_CASE("a GE dump imports with logical shapes, data and control edges", "[frontend][ge]") {
  const TempFile f("ge_onnx_00000001_graph_1_Build.pbtxt", dump(false));
  const auto r = import_ge_dump(f.path());
  const auto& g = r.graph;
  REQUIRE(g.size() == 3);  // Data, Const and NetOutput are not kernels
  CHECK(r.constants == 1);
  const auto& td = op_named(g, "trans_x");
  CHECK(td.text.type == "TransData");
  CHECK(td.text.input_shapes == "16,64");
  CHECK(td.text.output_shapes == "16,64");  // origin_shape, not the fractal [4,1,16,16]
  const auto& mm = op_named(g, "mm");
  CHECK(mm.text.type == "MatMulV2");
  CHECK(mm.text.input_shapes == "16,64;64,32");  // the optional bias input "" is left out
  CHECK(mm.text.input_dtypes == "DT_FLOAT16;DT_FLOAT16");
  CHECK(mm.text.output_shapes == "16,32");
  const auto& cast = op_named(g, "cast");
  CHECK(cast.text.output_dtypes == "DT_FLOAT");
  CHECK(g.predecessors(*g.find("mm")) == std::vector<std::size_t>{*g.find("trans_x")});
  // The control edge trans_x:-1 orders the Cast after the TransData too.
  CHECK(g.predecessors(*g.find("cast")) ==
        std::vector<std::size_t>{*g.find("trans_x"), *g.find("mm")});
  bool has_transpose_attr = false;
  for (const auto& [k, v] : mm.text.attrs) has_transpose_attr |= k == "transpose_x1" && v == "0";
  CHECK(has_transpose_attr);
}

TEST_CASE("a GE dump's data inputs become tensor edges, and Data and Const become graph inputs",
          "[frontend][ge][edges]") {
  const TempFile f("ge_onnx_00000004_graph_1_Build.pbtxt", dump(false));
  const auto r = import_ge_dump(f.path());
  const auto& g = r.graph;
  CHECK(r.warnings.empty());
  CHECK(*op_named(g, "trans_x").inputs == std::vector<std::string>{"x"});
  // The optional bias left out ("") has no entry, as it has no shape; the control edge none.
  CHECK(*op_named(g, "mm").inputs == std::vector<std::string>{"trans_x:0", "w"});
  CHECK(*op_named(g, "cast").inputs == std::vector<std::string>{"mm:0"});
  REQUIRE(g.graph_inputs().size() == 2);
  CHECK(g.graph_inputs()[0].name == "x");
  CHECK(g.graph_inputs()[0].shape == "16,64");
  CHECK_FALSE(g.graph_inputs()[0].constant);
  CHECK(g.graph_inputs()[1].name == "w");
  CHECK(g.graph_inputs()[1].shape == "64,32");  // origin_shape, not the fractal one
  CHECK(g.graph_inputs()[1].constant);
  const std::size_t mm = *g.find("mm");
  CHECK(g.producer(mm, 0) == g.find("trans_x"));
  CHECK(g.source(mm, 1).kind == npusim::TensorSource::Kind::kGraphInput);
  CHECK(g.uses(*g.find("mm")).size() == 1);
  // The graph writes and reads back with its edges.
  const npusim::Graph again = npusim::load_graph_file(
      TempFile("ge_edges.toml", npusim::graph_to_toml(g)).path());
  CHECK(*op_named(again, "mm").inputs == std::vector<std::string>{"trans_x:0", "w"});
}

TEST_CASE("a GE edge whose two descriptors disagree is left out with a named warning",
          "[frontend][ge][edges]") {
  const TempFile f("ge_onnx_00000005_graph_1_Build.pbtxt", dump(false, true));
  const auto r = import_ge_dump(f.path());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].code == "ge-edge-mismatch");
  CHECK_THAT(r.warnings[0].message,
             Catch::Contains("node 'cast'") && Catch::Contains("'mm:0'") &&
                 Catch::Contains("[16,16]") && Catch::Contains("[16,32]"));
  const auto& g = r.graph;
  CHECK(*op_named(g, "cast").inputs == std::vector<std::string>{""});
  // Still ordered after the MatMul.
  CHECK(g.predecessors(*g.find("cast")) ==
        std::vector<std::size_t>{*g.find("trans_x"), *g.find("mm")});
}

TEST_CASE("a GE dump with a missing descriptor is an error naming the node and descriptor",
          "[frontend][ge][bad]") {
  const TempFile f("ge_onnx_00000002_graph_1_Build.pbtxt", dump(true));
  try {
    (void)import_ge_dump(f.path());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.pos().file == f.path().string());
    CHECK_THAT(e.detail(), Catch::Contains("node 'mm' (MatMulV2)") &&
                               Catch::Contains("input_desc_origin_shape:1") &&
                               Catch::Contains("DUMP_GE_GRAPH=3"));
  }
}

TEST_CASE("a GE dump that is not text format is an error at its line and column",
          "[frontend][ge][bad]") {
  const TempFile f("ge_onnx_00000003_graph_1_Build.pbtxt", "ir_version: 6\ngraph {\n  node { nme: 1 }\n}\n");
  try {
    (void)import_ge_dump(f.path());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 3);
    CHECK_THAT(e.detail(), Catch::Contains("nme"));
  }
}
