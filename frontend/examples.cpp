// Example ONNX models, built with the protobuf API so that the tests, the README tour and the
// notebooks need no download and no Python: `npusim graph example-onnx NAME -o NAME.onnx`.
// Weights carry their shapes only (no data): shape inference and the NPU model read sizes, not
// values. Integer constants that steer shapes (Reshape targets, TopK's k) carry their values.
#include <onnx/onnx_pb.h>

#include <fmt/format.h>

#include <string>
#include <variant>
#include <vector>

#include "frontend/import.h"
#include "model/error.h"

namespace npusim::frontend {

namespace {

using Dim = std::variant<std::int64_t, std::string>;
using onnx::TensorProto;

class ModelBuilder {
 public:
  ModelBuilder(const std::string& name, std::int64_t opset = 17) {
    m_.set_ir_version(8);
    m_.set_producer_name("npusim examples");
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    g_ = m_.mutable_graph();
    g_->set_name(name);
  }
  void input(const std::string& name, int elem, const std::vector<Dim>& dims) {
    auto* v = g_->add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem);
    auto* s = t->mutable_shape();
    for (const Dim& d : dims) {
      auto* dd = s->add_dim();
      if (std::holds_alternative<std::int64_t>(d)) {
        dd->set_dim_value(std::get<std::int64_t>(d));
      } else {
        dd->set_dim_param(std::get<std::string>(d));
      }
    }
  }
  void output(const std::string& name, int elem) {
    auto* v = g_->add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  /// A weight: shape only.
  void weight(const std::string& name, int elem, const std::vector<std::int64_t>& dims) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(elem);
    for (auto d : dims) t->add_dims(d);
  }
  /// An int64 constant with its values (1-D, or a scalar when `scalar`).
  void ints(const std::string& name, const std::vector<std::int64_t>& v, bool scalar = false) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  onnx::NodeProto* node(const std::string& op, const std::string& name,
                        const std::vector<std::string>& in, const std::vector<std::string>& out) {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : in) n->add_input(i);
    for (const auto& o : out) n->add_output(o);
    return n;
  }
  static void attr(onnx::NodeProto* n, const std::string& key, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const std::string& key, const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_float(onnx::NodeProto* n, const std::string& key, float v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  std::string bytes() const { return m_.SerializeAsString(); }

 private:
  onnx::ModelProto m_;
  onnx::GraphProto* g_ = nullptr;
};

constexpr int kF16 = TensorProto::FLOAT16;
constexpr int kI64 = TensorProto::INT64;

// A DLRM/DeepFM-like coarse-ranking model, the graph of scenarios/default.toml as an exporter
// writes it: a behaviour sequence of 4000 item ids (-1 = missing) masked with an int64 compare and
// a Where before its embedding Gather, a masked sum-pool, a TopK over per-item scores, hashed
// sparse features (int64 Mod) into a field table, a weight Tiled to the batch (multiples from
// Shape -> Slice -> Concat) feeding a broadcasting BatchMatMul, a count of each of 400
// candidates in the user's history (int64 Equal of [1,4000] against [400,1], as in the default
// scenario) expanded to the batch, a Concat and a three-layer MLP.
std::string rec_model() {
  ModelBuilder b("rec_ranking");
  b.input("seq_ids", kI64, {"batch", 4000});
  b.input("sparse", kI64, {"batch", 64});
  b.input("query", kF16, {"batch", 8, 1, 32});
  b.input("hist_ids", kI64, {1, 4000});
  b.input("cand_ids", kI64, {400, 1});
  b.output("prob", kF16);
  b.weight("item_table", kF16, {400, 50});
  b.weight("field_table", kF16, {1000, 16});
  b.weight("cross_w", kF16, {1, 8, 32, 300});
  b.weight("w1", kF16, {3924, 256});
  b.weight("b1", kF16, {256});
  b.weight("w2", kF16, {256, 64});
  b.weight("b2", kF16, {64});
  b.weight("w3", kF16, {64, 1});
  b.ints("zero", {0}, true);
  b.ints("hash_buckets", {1000}, true);
  b.ints("axis1", {1});
  b.ints("axis2", {2});
  b.ints("topk_k", {50});
  b.ints("slice_0", {0});
  b.ints("slice_1", {1});
  b.ints("ones3", {1, 1, 1});
  b.ints("flat_fields", {-1, 1024});
  b.ints("flat_cross", {-1, 2400});
  b.ints("n_cand", {400});

  b.node("GreaterOrEqual", "seq_valid", {"seq_ids", "zero"}, {"valid"});
  b.node("Where", "seq_clean", {"valid", "seq_ids", "zero"}, {"clean_ids"});
  auto* g = b.node("Gather", "emb", {"item_table", "clean_ids"}, {"emb"});
  ModelBuilder::attr(g, "axis", std::int64_t{0});
  b.node("Unsqueeze", "mask_dim", {"valid", "axis2"}, {"valid3"});
  auto* c = b.node("Cast", "mask_cast", {"valid3"}, {"mask"});
  ModelBuilder::attr(c, "to", std::int64_t{kF16});
  b.node("Mul", "emb_masked", {"emb", "mask"}, {"emb_m"});
  auto* pool = b.node("ReduceSum", "seq_pool", {"emb_m", "axis1"}, {"pooled"});
  ModelBuilder::attr(pool, "keepdims", std::int64_t{0});
  auto* score = b.node("ReduceSum", "seq_score", {"emb_m", "axis2"}, {"scores"});
  ModelBuilder::attr(score, "keepdims", std::int64_t{0});
  b.node("TopK", "seq_topk", {"scores", "topk_k"}, {"top_vals", "top_idx"});
  b.node("Mod", "feat_hash", {"sparse", "hash_buckets"}, {"hashed"});
  auto* fg = b.node("Gather", "field_emb", {"field_table", "hashed"}, {"fields"});
  ModelBuilder::attr(fg, "axis", std::int64_t{0});
  b.node("Reshape", "field_flat", {"fields", "flat_fields"}, {"fields_2d"});
  b.node("Shape", "batch_of", {"query"}, {"qshape"});
  b.node("Slice", "batch_dim", {"qshape", "slice_0", "slice_1"}, {"qbatch"});
  auto* mult = b.node("Concat", "tile_multiples", {"qbatch", "ones3"}, {"multiples"});
  ModelBuilder::attr(mult, "axis", std::int64_t{0});
  b.node("Tile", "w_tile", {"cross_w", "multiples"}, {"cross_w_b"});
  b.node("MatMul", "cross_bmm", {"query", "cross_w_b"}, {"cross"});
  b.node("Reshape", "cross_flat", {"cross", "flat_cross"}, {"cross_2d"});
  b.node("Equal", "cand_match", {"hist_ids", "cand_ids"}, {"match"});
  auto* mc = b.node("Cast", "match_cast", {"match"}, {"match_f"});
  ModelBuilder::attr(mc, "to", std::int64_t{kF16});
  auto* cnt = b.node("ReduceSum", "match_count", {"match_f", "axis1"}, {"counts"});
  ModelBuilder::attr(cnt, "keepdims", std::int64_t{0});
  auto* shp = b.node("Concat", "count_shape", {"qbatch", "n_cand"}, {"count_shape"});
  ModelBuilder::attr(shp, "axis", std::int64_t{0});
  b.node("Expand", "count_rows", {"counts", "count_shape"}, {"count_b"});
  auto* cat = b.node("Concat", "concat", {"cross_2d", "fields_2d", "pooled", "top_vals", "count_b"},
                     {"features"});
  ModelBuilder::attr(cat, "axis", std::int64_t{1});
  b.node("Gemm", "mlp1", {"features", "w1", "b1"}, {"h1"});
  b.node("Relu", "relu1", {"h1"}, {"a1"});
  b.node("Gemm", "mlp2", {"a1", "w2", "b2"}, {"h2"});
  b.node("Relu", "relu2", {"h2"}, {"a2"});
  b.node("MatMul", "mlp3", {"a2", "w3"}, {"logit"});
  b.node("Sigmoid", "out", {"logit"}, {"prob"});
  return b.bytes();
}

// A small CNN on 1x3x32x32 images (fixed shapes, batch 1): two convolutions with ReLU and max
// pooling, a global average pool, flatten and a classifier.
std::string cnn_model() {
  ModelBuilder b("small_cnn");
  b.input("image", kF16, {1, 3, 32, 32});
  b.output("logits", kF16);
  b.weight("c1_w", kF16, {16, 3, 3, 3});
  b.weight("c1_b", kF16, {16});
  b.weight("c2_w", kF16, {32, 16, 3, 3});
  b.weight("c2_b", kF16, {32});
  b.weight("fc_w", kF16, {32, 10});
  b.weight("fc_b", kF16, {10});
  auto* c1 = b.node("Conv", "conv1", {"image", "c1_w", "c1_b"}, {"x1"});
  ModelBuilder::attr(c1, "kernel_shape", std::vector<std::int64_t>{3, 3});
  ModelBuilder::attr(c1, "pads", std::vector<std::int64_t>{1, 1, 1, 1});
  b.node("Relu", "relu1", {"x1"}, {"r1"});
  auto* p1 = b.node("MaxPool", "pool1", {"r1"}, {"p1"});
  ModelBuilder::attr(p1, "kernel_shape", std::vector<std::int64_t>{2, 2});
  ModelBuilder::attr(p1, "strides", std::vector<std::int64_t>{2, 2});
  auto* c2 = b.node("Conv", "conv2", {"p1", "c2_w", "c2_b"}, {"x2"});
  ModelBuilder::attr(c2, "kernel_shape", std::vector<std::int64_t>{3, 3});
  ModelBuilder::attr(c2, "strides", std::vector<std::int64_t>{2, 2});
  b.node("Relu", "relu2", {"x2"}, {"r2"});
  b.node("GlobalAveragePool", "gap", {"r2"}, {"g"});
  b.node("Flatten", "flatten", {"g"}, {"f"});
  b.node("Gemm", "fc", {"f", "fc_w", "fc_b"}, {"logits"});
  return b.bytes();
}

// One attention block (batch symbolic, 128 tokens, 4 heads of 32): Q/K/V projections, reshape
// and transpose into heads, scaled scores, softmax, the weighted sum, the output projection and a
// LayerNormalization over the residual.
std::string attention_model() {
  ModelBuilder b("attention_block");
  b.input("x", kF16, {"batch", 128, 128});
  b.output("y", kF16);
  for (const char* w : {"wq", "wk", "wv", "wo"}) b.weight(w, kF16, {128, 128});
  b.weight("ln_scale", kF16, {128});
  b.weight("ln_bias", kF16, {128});
  b.weight("scale", kF16, {});
  b.ints("heads_shape", {0, 128, 4, 32});
  b.ints("merged_shape", {0, 128, 128});
  for (const char* p : {"q", "k", "v"}) {
    const std::string s(p);
    b.node("MatMul", s + "_proj", {"x", "w" + s}, {s + "_2d"});
    b.node("Reshape", s + "_heads", {s + "_2d", "heads_shape"}, {s + "_4d"});
    auto* t = b.node("Transpose", s + "_t", {s + "_4d"}, {s + "_h"});
    ModelBuilder::attr(t, "perm", s == "k" ? std::vector<std::int64_t>{0, 2, 3, 1}
                                           : std::vector<std::int64_t>{0, 2, 1, 3});
  }
  b.node("MatMul", "scores", {"q_h", "k_h"}, {"s"});
  b.node("Mul", "scaled", {"s", "scale"}, {"s_scaled"});
  auto* sm = b.node("Softmax", "softmax", {"s_scaled"}, {"p"});
  ModelBuilder::attr(sm, "axis", std::int64_t{-1});
  b.node("MatMul", "context", {"p", "v_h"}, {"ctx"});
  auto* t = b.node("Transpose", "ctx_t", {"ctx"}, {"ctx_t"});
  ModelBuilder::attr(t, "perm", std::vector<std::int64_t>{0, 2, 1, 3});
  b.node("Reshape", "ctx_merge", {"ctx_t", "merged_shape"}, {"ctx_3d"});
  b.node("MatMul", "o_proj", {"ctx_3d", "wo"}, {"o"});
  b.node("Add", "residual", {"o", "x"}, {"r"});
  auto* ln = b.node("LayerNormalization", "ln", {"r", "ln_scale", "ln_bias"}, {"y"});
  ModelBuilder::attr(ln, "axis", std::int64_t{-1});
  return b.bytes();
}

// An MLP whose batch is symbolic ("N"): Flatten, Gemm with transB, ReLU, Gemm, Softmax.
std::string mlp_model() {
  ModelBuilder b("mlp");
  b.input("x", kF16, {"N", 16, 16});
  b.output("p", kF16);
  b.weight("w1", kF16, {512, 256});  // transB: [out, in]
  b.weight("b1", kF16, {512});
  b.weight("w2", kF16, {512, 10});
  b.node("Flatten", "flatten", {"x"}, {"f"});
  auto* g1 = b.node("Gemm", "fc1", {"f", "w1", "b1"}, {"h"});
  ModelBuilder::attr(g1, "transB", std::int64_t{1});
  b.node("Relu", "relu", {"h"}, {"a"});
  auto* g2 = b.node("Gemm", "fc2", {"a", "w2"}, {"z"});
  ModelBuilder::attr_float(g2, "alpha", 0.5F);
  auto* sm = b.node("Softmax", "softmax", {"z"}, {"p"});
  ModelBuilder::attr(sm, "axis", std::int64_t{1});
  return b.bytes();
}

}  // namespace

const std::vector<std::string>& example_model_names() {
  static const std::vector<std::string> names = {"rec", "cnn", "attention", "mlp"};
  return names;
}

std::string example_onnx_model(const std::string& name) {
  if (name == "rec") return rec_model();
  if (name == "cnn") return cnn_model();
  if (name == "attention") return attention_model();
  if (name == "mlp") return mlp_model();
  throw InputError({"<command line>", 0, 0},
                   fmt::format("unknown example model '{}'; expected rec, cnn, attention or mlp",
                               name));
}

}  // namespace npusim::frontend
