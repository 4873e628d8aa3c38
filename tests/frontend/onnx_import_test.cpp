// ONNX import: the example models imported, their inferred shapes checked against hand-computed
// ones, and the bad inputs each named.
#include <catch2/catch.hpp>

#include <google/protobuf/text_format.h>

#include <string>

#include "frontend/import.h"
#include "model/error.h"
#include "model/passes.h"
#include "model/predict.h"
#include "tests/frontend/onnx_test_util.h"

using npusim::Graph;
using npusim::GraphOp;
using npusim::InputError;
using npusim::frontend::example_onnx_model;
using npusim::frontend::import_onnx;
using npusim::frontend::ImportResult;
using npusim::frontend::OnnxImportOptions;
using npusim::test::add_node;
using npusim::test::op_named;
using npusim::test::TempFile;
using npusim::test::tiny_model;

namespace {

ImportResult import_example(const std::string& name, const OnnxImportOptions& o = {}) {
  const TempFile f(name + ".onnx", example_onnx_model(name));
  return import_onnx(f.path(), o);
}

// type, input shapes, input dtypes, output shapes, output dtypes of one op
void check_op(const Graph& g, const std::string& name, const std::string& type,
              const std::string& shapes, const std::string& dtypes, const std::string& out_shapes,
              const std::string& out_dtypes) {
  INFO("op " << name);
  const GraphOp& op = op_named(g, name);
  CHECK(op.text.type == type);
  CHECK(op.text.input_shapes == shapes);
  CHECK(op.text.input_dtypes == dtypes);
  CHECK(op.text.output_shapes == out_shapes);
  CHECK(op.text.output_dtypes == out_dtypes);
}

std::string attr(const GraphOp& op, const std::string& key) {
  for (const auto& [k, v] : op.text.attrs) {
    if (k == key) return v;
  }
  return "<absent>";
}

// The InputError message of importing `m` (empty when it imports).
std::string import_error(const onnx::ModelProto& m, const OnnxImportOptions& o = {}) {
  const TempFile f("bad.onnx", m.SerializeAsString());
  try {
    (void)import_onnx(f.path(), o);
  } catch (const InputError& e) {
    CHECK(e.pos().file == f.path().string());
    return e.detail();
  }
  return "";
}

}  // namespace

TEST_CASE("the recommendation model imports with B for its symbolic batch and ATC's op types",
          "[frontend][onnx]") {
  const ImportResult r = import_example("rec");
  const Graph& g = r.graph;
  CHECK(r.batch_symbol == "batch");
  CHECK(r.nodes == 30);
  // Shape -> Slice -> Concat (the Tile's multiples) fold into constants, as GE folds them.
  CHECK_FALSE(g.find("batch_of"));
  CHECK_FALSE(g.find("batch_dim"));
  CHECK_FALSE(g.find("tile_multiples"));
  CHECK_FALSE(g.find("count_shape"));
  CHECK(g.size() == 28);  // 26 of the 30 nodes run; each Gemm becomes MatMulV2 + Add

  check_op(g, "seq_valid", "GreaterEqual", "B,4000;", "INT64;INT64", "B,4000", "BOOL");
  check_op(g, "seq_clean", "SelectV2", "B,4000;B,4000;", "BOOL;INT64;INT64", "B,4000", "INT64");
  check_op(g, "emb", "GatherV2", "400,50;B,4000;1", "FLOAT16;INT64;INT32", "B,4000,50",
           "FLOAT16");
  CHECK(attr(op_named(g, "emb"), "axis") == "0");
  check_op(g, "mask_dim", "Unsqueeze", "B,4000;1", "BOOL;INT64", "B,4000,1", "BOOL");
  check_op(g, "mask_cast", "Cast", "B,4000,1", "BOOL", "B,4000,1", "FLOAT16");
  check_op(g, "emb_masked", "Mul", "B,4000,50;B,4000,1", "FLOAT16;FLOAT16", "B,4000,50",
           "FLOAT16");
  check_op(g, "seq_pool", "ReduceSum", "B,4000,50;1", "FLOAT16;INT64", "B,50", "FLOAT16");
  CHECK(attr(op_named(g, "seq_pool"), "axes") == "1");
  CHECK(attr(op_named(g, "seq_pool"), "keep_dims") == "false");
  check_op(g, "seq_score", "ReduceSum", "B,4000,50;1", "FLOAT16;INT64", "B,4000", "FLOAT16");
  check_op(g, "seq_topk", "TopK", "B,4000;1", "FLOAT16;INT64", "B,50;B,50", "FLOAT16;INT64");
  CHECK(attr(op_named(g, "seq_topk"), "k") == "50");
  check_op(g, "feat_hash", "Mod", "B,64;", "INT64;INT64", "B,64", "INT64");
  check_op(g, "field_emb", "GatherV2", "1000,16;B,64;1", "FLOAT16;INT64;INT32", "B,64,16",
           "FLOAT16");
  check_op(g, "field_flat", "Reshape", "B,64,16;2", "FLOAT16;INT64", "B,1024", "FLOAT16");
  // The multiples (B,1,1,1) change with the batch: the output shape carries them, no attribute.
  check_op(g, "w_tile", "Tile", "1,8,32,300;4", "FLOAT16;INT64", "B,8,32,300", "FLOAT16");
  CHECK(attr(op_named(g, "w_tile"), "multiples") == "<absent>");
  check_op(g, "cross_bmm", "BatchMatMulV2", "B,8,1,32;B,8,32,300", "FLOAT16;FLOAT16", "B,8,1,300",
           "FLOAT16");
  check_op(g, "cross_flat", "Reshape", "B,8,1,300;2", "FLOAT16;INT64", "B,2400", "FLOAT16");
  check_op(g, "cand_match", "Equal", "1,4000;400,1", "INT64;INT64", "400,4000", "BOOL");
  check_op(g, "match_count", "ReduceSum", "400,4000;1", "FLOAT16;INT64", "400", "FLOAT16");
  check_op(g, "count_rows", "Expand", "400;2", "FLOAT16;INT64", "B,400", "FLOAT16");
  // 2400 + 1024 + 50 + 50 + 400 = 3924
  check_op(g, "concat", "ConcatD", "B,2400;B,1024;B,50;B,50;B,400",
           "FLOAT16;FLOAT16;FLOAT16;FLOAT16;FLOAT16", "B,3924", "FLOAT16");
  CHECK(attr(op_named(g, "concat"), "concat_dim") == "1");
  check_op(g, "mlp1/MatMulV2", "MatMulV2", "B,3924;3924,256", "FLOAT16;FLOAT16", "B,256",
           "FLOAT16");
  check_op(g, "mlp1", "Add", "B,256;256", "FLOAT16;FLOAT16", "B,256", "FLOAT16");
  check_op(g, "mlp3", "BatchMatMulV2", "B,64;64,1", "FLOAT16;FLOAT16", "B,1", "FLOAT16");
  check_op(g, "out", "Sigmoid", "B,1", "FLOAT16", "B,1", "FLOAT16");

  // Dependencies follow the data: the Add of mlp1 runs after its MatMulV2, the BMM after the Tile.
  const auto mlp1 = *g.find("mlp1");
  CHECK(g.predecessors(mlp1) == std::vector<std::size_t>{*g.find("mlp1/MatMulV2")});
  const auto bmm_preds = g.predecessors(*g.find("cross_bmm"));
  CHECK(bmm_preds == std::vector<std::size_t>{*g.find("w_tile")});
  CHECK(g.predecessors(*g.find("seq_valid")).empty());
  // Tensor edges: producers by output, graph inputs and constants by name, added inputs none.
  const auto edges = [&](const std::string& op) { return *op_named(g, op).inputs; };
  CHECK(edges("cross_bmm") == std::vector<std::string>{"query", "w_tile:0"});
  CHECK(edges("w_tile") == std::vector<std::string>{"cross_w", "multiples"});
  CHECK(edges("emb") == std::vector<std::string>{"item_table", "seq_clean:0", ""});
  CHECK(edges("mlp1") == std::vector<std::string>{"mlp1/MatMulV2:0", "b1"});
  CHECK(edges("concat") == std::vector<std::string>{"cross_flat:0", "field_flat:0",
                                                     "seq_pool:0", "seq_topk:0",
                                                     "count_rows:0"});
  for (const auto& in : g.graph_inputs()) {
    INFO("graph input " << in.name);
    const bool model_input = in.name == "seq_ids" || in.name == "sparse" || in.name == "query" ||
                             in.name == "hist_ids" || in.name == "cand_ids";
    CHECK(in.constant == !model_input);
  }
  // Every op instantiates at a real batch size.
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto op = g.instantiate(i, 16);
    CHECK_FALSE(op.inputs.empty());
  }
  CHECK(g.instantiate(*g.find("concat"), 16).outputs.at(0).shape ==
        std::vector<std::int64_t>{16, 3924});
}

TEST_CASE("fuse_masked_gather applies to the recommendation model as exported (SelectV2)",
          "[frontend][onnx][passes]") {
  // ATC maps ONNX's Where to SelectV2, an AI Core op: the pass matches the select by its edges
  // (the Gather's indices come from it, the Gather's rows are multiplied by the row mask).
  const Graph g = import_example("rec").graph;
  REQUIRE(op_named(g, "seq_clean").text.type == "SelectV2");
  const npusim::PassResult r = npusim::fuse_masked_gather(g);
  REQUIRE(r.changes.size() == 1);
  CHECK(r.changes[0].ops == std::vector<std::string>{"emb", "seq_clean", "emb_masked",
                                                     "mask_cast", "mask_dim", "seq_valid"});
  CHECK_THAT(r.changes[0].why, Catch::Contains("SelectV2 on the AI Core"));
  const Graph& f = r.graph;
  CHECK(f.size() == g.size() - 5);
  for (const char* gone : {"seq_clean", "emb_masked", "mask_cast", "mask_dim", "seq_valid"}) {
    CHECK_FALSE(f.find(gone).has_value());
  }
  // The Gather reads the raw ids (negative = missing) and zeroes their rows; what read the
  // masked rows reads the Gather.
  CHECK(*op_named(f, "emb").inputs == std::vector<std::string>{"item_table", "seq_ids", ""});
  CHECK(attr(op_named(f, "emb"), "negative_index") == "zero");
  CHECK(f.source_ref(*f.find("seq_pool"), 0) == "emb");
  CHECK(f.source_ref(*f.find("seq_score"), 0) == "emb");
  // Five fewer kernels: the graph is faster at any batch.
  double before = 0, after = 0;
  const npusim::HwSpec hw = npusim::load_hw_spec(npusim::resolve_hw_spec(
      "ascend910b3", {std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs"}));
  for (std::size_t i = 0; i < g.size(); ++i) before += npusim::predict(g.instantiate(i, 16), hw).duration_us;
  for (std::size_t i = 0; i < f.size(); ++i) after += npusim::predict(f.instantiate(i, 16), hw).duration_us;
  CHECK(after < before);
}

TEST_CASE("the small CNN imports with fixed shapes: Conv2D, MaxPool, Gemm as MatMulV2 + Add",
          "[frontend][onnx]") {
  const ImportResult r = import_example("cnn");
  const Graph& g = r.graph;
  CHECK(r.batch_symbol.empty());
  check_op(g, "conv1", "Conv2D", "1,3,32,32;16,3,3,3;16", "FLOAT16;FLOAT16;FLOAT16",
           "1,16,32,32", "FLOAT16");
  CHECK(attr(op_named(g, "conv1"), "pads") == "1,1,1,1");
  check_op(g, "pool1", "MaxPool", "1,16,32,32", "FLOAT16", "1,16,16,16", "FLOAT16");
  // (16 - 3) / 2 + 1 = 7
  check_op(g, "conv2", "Conv2D", "1,16,16,16;32,16,3,3;32", "FLOAT16;FLOAT16;FLOAT16",
           "1,32,7,7", "FLOAT16");
  check_op(g, "gap", "GlobalAveragePool", "1,32,7,7", "FLOAT16", "1,32,1,1", "FLOAT16");
  check_op(g, "flatten", "Flatten", "1,32,1,1", "FLOAT16", "1,32", "FLOAT16");
  check_op(g, "fc/MatMulV2", "MatMulV2", "1,32;32,10", "FLOAT16;FLOAT16", "1,10", "FLOAT16");
  check_op(g, "fc", "Add", "1,10;10", "FLOAT16;FLOAT16", "1,10", "FLOAT16");
  CHECK(g.size() == 9);
}

TEST_CASE("the attention block imports: heads by Reshape and Transpose, batched scores",
          "[frontend][onnx]") {
  const ImportResult r = import_example("attention");
  const Graph& g = r.graph;
  CHECK(r.batch_symbol == "batch");
  check_op(g, "q_proj", "BatchMatMulV2", "B,128,128;128,128", "FLOAT16;FLOAT16", "B,128,128",
           "FLOAT16");
  check_op(g, "q_heads", "Reshape", "B,128,128;4", "FLOAT16;INT64", "B,128,4,32", "FLOAT16");
  check_op(g, "q_t", "Transpose", "B,128,4,32", "FLOAT16", "B,4,128,32", "FLOAT16");
  CHECK(attr(op_named(g, "k_t"), "perm") == "0,2,3,1");
  check_op(g, "k_t", "Transpose", "B,128,4,32", "FLOAT16", "B,4,32,128", "FLOAT16");
  check_op(g, "scores", "BatchMatMulV2", "B,4,128,32;B,4,32,128", "FLOAT16;FLOAT16",
           "B,4,128,128", "FLOAT16");
  check_op(g, "scaled", "Mul", "B,4,128,128;", "FLOAT16;FLOAT16", "B,4,128,128", "FLOAT16");
  check_op(g, "softmax", "SoftmaxV2", "B,4,128,128", "FLOAT16", "B,4,128,128", "FLOAT16");
  CHECK(attr(op_named(g, "softmax"), "axes") == "3");
  check_op(g, "context", "BatchMatMulV2", "B,4,128,128;B,4,128,32", "FLOAT16;FLOAT16",
           "B,4,128,32", "FLOAT16");
  check_op(g, "ctx_merge", "Reshape", "B,128,4,32;3", "FLOAT16;INT64", "B,128,128", "FLOAT16");
  check_op(g, "ln", "LayerNorm", "B,128,128;128;128", "FLOAT16;FLOAT16;FLOAT16", "B,128,128",
           "FLOAT16");
}

TEST_CASE("a symbolic batch becomes B, or a fixed size with --set-dim", "[frontend][onnx]") {
  const ImportResult r = import_example("mlp");
  CHECK(r.batch_symbol == "N");
  check_op(r.graph, "flatten", "Flatten", "B,16,16", "FLOAT16", "B,256", "FLOAT16");
  // Gemm transB: x [B,256] times w1^T, w1 [512,256]
  check_op(r.graph, "fc1/MatMulV2", "MatMulV2", "B,256;512,256", "FLOAT16;FLOAT16", "B,512",
           "FLOAT16");
  CHECK(attr(op_named(r.graph, "fc1/MatMulV2"), "transpose_x2") == "true");
  // alpha 0.5 without C: MatMulV2 then Muls, which keeps the node's name.
  check_op(r.graph, "fc2", "Muls", "B,10", "FLOAT16", "B,10", "FLOAT16");
  CHECK(attr(op_named(r.graph, "fc2"), "value") == "0.5");

  OnnxImportOptions fixed;
  fixed.set_dims = {{"N", 4}};
  const ImportResult f = import_example("mlp", fixed);
  CHECK(f.batch_symbol.empty());
  CHECK(op_named(f.graph, "flatten").text.output_shapes == "4,256");

  OnnxImportOptions named;
  named.batch_dim = "N";
  CHECK(import_example("mlp", named).batch_symbol == "N");

  OnnxImportOptions wrong;
  wrong.set_dims = {{"seq", 4}};
  CHECK_THROWS_WITH(import_example("mlp", wrong),
                    Catch::Contains("--set-dim seq=4") && Catch::Contains("symbolic dimensions: N"));
}

TEST_CASE("a truncated .onnx file is an error, not a partial graph", "[frontend][onnx][bad]") {
  const std::string bytes = example_onnx_model("rec");
  const TempFile f("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_WITH(import_onnx(f.path()), Catch::Contains("does not parse") &&
                                               Catch::Contains("truncated"));
  const TempFile none("missing_dir_ok.onnx", "");
  CHECK_THROWS_WITH(import_onnx(none.path()), Catch::Contains("no graph"));
}

TEST_CASE("a graph with a cycle is an error naming the nodes on it", "[frontend][onnx][bad]") {
  auto m = tiny_model();
  add_node(m, "Add", "a", {"x", "c"}, {"a_out"});
  add_node(m, "Relu", "b", {"a_out"}, {"b_out"});
  add_node(m, "Relu", "c_node", {"b_out"}, {"c"});
  const std::string e = import_error(m);
  CHECK_THAT(e, Catch::Contains("is on a cycle") && Catch::Contains("a -> b -> c_node -> a"));
}

TEST_CASE("an op without a shape is an error naming the node and why", "[frontend][onnx][bad]") {
  auto m = tiny_model();
  add_node(m, "Relu", "ok", {"x"}, {"y"});
  add_node(m, "NoSuchOp", "mystery", {"y"}, {"z"});
  add_node(m, "Relu", "after", {"z"}, {"w"});
  CHECK_THAT(import_error(m), Catch::Contains("node 'mystery' (NoSuchOp)") &&
                                  Catch::Contains("no schema") && Catch::Contains("'z'"));
}

TEST_CASE("a constant whose dims overflow a 64-bit element count is no small shape to read",
          "[frontend][onnx][bad][fuzz]") {
  // fuzz_onnx's finding (3916 executions): an initializer of 208175963630469120 x 97 elements
  // overflowed the element count before its size was tested (undefined behaviour under UBSan).
  auto m = tiny_model();
  add_node(m, "Relu", "r", {"x"}, {"y"});
  auto* init = m.mutable_graph()->add_initializer();
  init->set_name("huge");
  init->set_data_type(onnx::TensorProto::INT64);
  init->add_dims(208175963630469120);
  init->add_dims(97);
  std::string e;
  CHECK_NOTHROW(e = import_error(m));  // imported, or an InputError at the file: never a crash
  INFO(e);
}

TEST_CASE("a zero stride, dilation or kernel size is an error naming the node, not a SIGFPE",
          "[frontend][onnx][bad][fuzz]") {
  // fuzz_onnx's finding: the small CNN with a MaxPool stride of 0 reached a division by zero
  // inside libonnx's convPoolShapeInference.
  for (const std::string key : {"strides", "kernel_shape", "dilations"}) {
    INFO(key);
    onnx::ModelProto m;
    REQUIRE(m.ParseFromString(example_onnx_model("cnn")));
    for (auto& n : *m.mutable_graph()->mutable_node()) {
      if (n.op_type() != "MaxPool") continue;
      auto* a = n.add_attribute();
      for (auto& old : *n.mutable_attribute()) {
        if (old.name() == key) old.set_name("replaced_" + key);
      }
      a->set_name(key);
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(0);
      a->add_ints(2);
    }
    CHECK_THAT(import_error(m), Catch::Contains("node 'pool1' (MaxPool): attribute " + key +
                                                " holds 0; ONNX requires every value of it to "
                                                "be > 0"));
  }
}

TEST_CASE("a Conv whose weight's rank differs from its input's is an error, not a SEGV",
          "[frontend][onnx][bad][fuzz]") {
  // fuzz_onnx's finding: x [4, 8] (one spatial axis fewer than the 4-D weight) and no
  // kernel_shape made libonnx's convPoolShapeInference read past its per-axis attributes.
  auto m = tiny_model();
  auto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT16);
  for (const std::int64_t d : {2, 8, 3, 3}) w->add_dims(d);
  add_node(m, "Conv", "conv", {"x", "w"}, {"y"});
  CHECK_THAT(import_error(m), Catch::Contains("node 'conv' (Conv)") &&
                                  Catch::Contains("without a full shape"));
  w->set_dims(3, 0);
  CHECK_THAT(import_error(m), Catch::Contains("node 'conv' (Conv): its weight 'w' has a "
                                              "dimension of 0"));
}

TEST_CASE("an op of an unknown domain is an error naming the node and the domain",
          "[frontend][onnx][bad]") {
  auto m = tiny_model();
  auto* o = m.add_opset_import();
  o->set_domain("com.acme");
  o->set_version(1);
  add_node(m, "FusedThing", "fused", {"x"}, {"y"}, "com.acme");
  CHECK_THAT(import_error(m), Catch::Contains("node 'fused' (com.acme::FusedThing)") &&
                                  Catch::Contains("domain 'com.acme'"));
}

TEST_CASE("Loop, an opset newer than ATC maps and a dangling input are errors",
          "[frontend][onnx][bad]") {
  auto loop = tiny_model();
  add_node(loop, "Loop", "body", {"", "", "x"}, {"y"});
  CHECK_THAT(import_error(loop), Catch::Contains("node 'body' (Loop)") &&
                                     Catch::Contains("unroll"));
  // fuzz_onnx's finding: a Scan without its body graph was a SEGV inside libonnx's inference;
  // control flow is checked before inference runs, and an If without its branches fails its
  // schema there.
  auto scan = tiny_model();
  add_node(scan, "Scan", "scan", {"x"}, {"y"});
  CHECK_THAT(import_error(scan), Catch::Contains("node 'scan' (Scan)") &&
                                     Catch::Contains("unroll"));
  // ... and a node that does not match its schema (a Shape with two inputs) is refused before
  // libonnx's inference functions, which assume the checker ran, see it.
  auto two_input_shape = tiny_model();
  add_node(two_input_shape, "Shape", "shape", {"x", "x"}, {"y"});
  CHECK_THAT(import_error(two_input_shape),
             Catch::Contains("node 'shape' (Shape): not a valid Shape of opset 17"));
  auto branchless = tiny_model();
  add_node(branchless, "If", "cond", {"x"}, {"y"});
  CHECK_THAT(import_error(branchless), Catch::Contains("node 'cond' (If): not a valid If") &&
                                           Catch::Contains("branch"));

  auto new_opset = tiny_model(19);
  add_node(new_opset, "Relu", "r", {"x"}, {"y"});
  CHECK_THAT(import_error(new_opset), Catch::Contains("opset 19") && Catch::Contains("8-18"));

  auto dangling = tiny_model();
  add_node(dangling, "Add", "add", {"x", "nowhere"}, {"y"});
  CHECK_THAT(import_error(dangling), Catch::Contains("node 'add' (Add) reads 'nowhere'"));
}

TEST_CASE("an op ATC does not map is kept under its name with a named warning",
          "[frontend][onnx]") {
  auto m = tiny_model();
  // GroupNormalization-18 is not in ONNX 1.12; Celu is mapped; HammingWindow (17) has no plugin.
  auto* n = add_node(m, "Shape", "shape", {"x"}, {"s"});
  (void)n;
  add_node(m, "Relu", "r", {"x"}, {"y"});
  add_node(m, "Hardmax", "hm", {"y"}, {"z"});
  add_node(m, "MatMulInteger", "mmi", {"i8", "i8"}, {"q"});
  auto* i8 = m.mutable_graph()->add_input();
  i8->set_name("i8");
  auto* t = i8->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::INT8);
  t->mutable_shape()->add_dim()->set_dim_value(4);
  t->mutable_shape()->add_dim()->set_dim_value(4);
  const TempFile f("unmapped.onnx", m.SerializeAsString());
  const ImportResult r = import_onnx(f.path());
  CHECK(op_named(r.graph, "hm").text.type == "HardMax");
  CHECK(op_named(r.graph, "mmi").text.type == "MatMulInteger");
  CHECK(op_named(r.graph, "mmi").text.output_dtypes == "INT32");
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].code == "onnx-unmapped-op");
  CHECK_THAT(r.warnings[0].message, Catch::Contains("node 'mmi' (MatMulInteger)"));
}

TEST_CASE("a model in protobuf text format imports like its binary form", "[frontend][onnx]") {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(example_onnx_model("attention")));
  std::string text;
  REQUIRE(google::protobuf::TextFormat::PrintToString(m, &text));
  const TempFile f("attention.prototxt", text);
  const ImportResult from_text = import_onnx(f.path());
  const ImportResult from_binary = import_example("attention");
  REQUIRE(from_text.graph.size() == from_binary.graph.size());
  for (std::size_t i = 0; i < from_text.graph.size(); ++i) {
    CHECK(from_text.graph.ops()[i].text.input_shapes ==
          from_binary.graph.ops()[i].text.input_shapes);
  }
  const TempFile bad("bad.prototxt", "ir_version: 8\ngraph {\n  node { op_type: 7 }\n}\n");
  try {
    (void)import_onnx(bad.path());
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.pos().line == 3);
  }
}

TEST_CASE("NonZero is sized at its upper bound, and opset 18 is imported with a warning",
          "[frontend][onnx]") {
  auto m = tiny_model(18);
  add_node(m, "NonZero", "nz", {"x"}, {"idx"});
  const TempFile f("nonzero.onnx", m.SerializeAsString());
  const ImportResult r = import_onnx(f.path());
  // x is [4, 8]: at most 32 non-zero elements, each with 2 coordinates
  CHECK(op_named(r.graph, "nz").text.output_shapes == "2,32");
  std::vector<std::string> codes;
  for (const auto& w : r.warnings) codes.push_back(w.code);
  CHECK(codes == std::vector<std::string>{"onnx-opset-18", "onnx-data-dependent-shape"});
}
