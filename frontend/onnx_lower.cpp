#include "frontend/onnx_lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace npusim::frontend {

namespace {

// Default-domain ONNX op -> the CANN type ATC's plugin emits (../shared/research/
// onnx_to_cann_ops.tsv, opsets 8-18). Ops the .tsv lists as expanded and that lower_node() does
// not expand below are costed as their main CANN op, with a warning saying so.
struct OpMap {
  std::string_view cann;
  bool expanded = false;  // ATC makes several CANN ops of it
};

const std::unordered_map<std::string_view, OpMap>& op_map() {
  static const std::unordered_map<std::string_view, OpMap> m = {
      {"Abs", {"Abs"}}, {"Acos", {"Acos"}}, {"Acosh", {"Acosh"}}, {"Add", {"Add"}},
      {"And", {"LogicalAnd"}}, {"ArgMax", {"ArgMaxV2", true}}, {"ArgMin", {"ArgMin", true}},
      {"Asin", {"Asin"}}, {"Asinh", {"Asinh"}}, {"Atan", {"Atan"}}, {"Atanh", {"Atanh"}},
      {"AveragePool", {"AvgPoolV2", true}}, {"BatchNormalization", {"BatchNorm"}},
      {"Bernoulli", {"StatelessBernoulliV2", true}}, {"BitShift", {"LeftShift", true}},
      {"BitwiseAnd", {"BitwiseAnd"}}, {"BitwiseNot", {"Invert"}}, {"BitwiseOr", {"BitwiseOr"}},
      {"BitwiseXor", {"BitwiseXor"}}, {"Cast", {"Cast"}}, {"CastLike", {"CastLike"}},
      {"Ceil", {"Ceil"}}, {"Celu", {"Celu"}}, {"Clip", {"ClipByValue", true}},
      {"Compress", {"GatherV2", true}}, {"Concat", {"ConcatD", true}},
      {"ConcatFromSequence", {"ConcatFromSequence"}}, {"ConstantOfShape", {"Fill", true}},
      {"Conv", {"Conv2D", true}}, {"ConvTranspose", {"Conv2DTranspose", true}},
      {"Cos", {"Cos"}}, {"Cosh", {"Cosh"}}, {"CumSum", {"Cumsum"}},
      {"DepthToSpace", {"DepthToSpace"}}, {"Det", {"MatrixDeterminant"}}, {"Div", {"RealDiv"}},
      {"Dropout", {"Dropout"}}, {"Einsum", {"Einsum"}}, {"Elu", {"Elu"}}, {"Equal", {"Equal"}},
      {"Erf", {"Erf"}}, {"Exp", {"Exp"}}, {"Expand", {"Expand"}},
      {"EyeLike", {"MatrixDiagV2", true}}, {"Flatten", {"Flatten"}}, {"Floor", {"Floor"}},
      {"GRU", {"CommonGRU"}}, {"Gather", {"GatherV2", true}},
      {"GatherElements", {"GatherElements"}}, {"GatherND", {"GatherNd"}},
      {"Gemm", {"MatMulV2", true}}, {"GlobalAveragePool", {"GlobalAveragePool"}},
      {"GlobalLpPool", {"GlobalLpPool"}}, {"GlobalMaxPool", {"ReduceMax", true}},
      {"Greater", {"Greater"}}, {"GreaterOrEqual", {"GreaterEqual"}},
      {"HardSigmoid", {"HardSigmoid"}}, {"HardSwish", {"HardSwish"}}, {"Hardmax", {"HardMax"}},
      {"Identity", {"Identity"}}, {"If", {"If"}}, {"InstanceNormalization", {"InstanceNorm"}},
      {"IsInf", {"IsInf"}}, {"IsNaN", {"IsNan"}}, {"LRN", {"LRN"}}, {"LSTM", {"CommonLSTM"}},
      {"LayerNormalization", {"LayerNorm", true}}, {"LeakyRelu", {"LeakyRelu"}},
      {"Less", {"Less"}}, {"LessOrEqual", {"LessEqual"}}, {"Log", {"Log"}},
      {"LogSoftmax", {"LogSoftmaxV2"}}, {"LpNormalization", {"LpNormV2", true}},
      {"LpPool", {"AvgPoolV2", true}}, {"MatMul", {"BatchMatMulV2"}}, {"Max", {"Maximum", true}},
      {"MaxPool", {"MaxPool", true}}, {"MaxUnpool", {"ScatterElements", true}},
      {"Mean", {"AccumulateNV2", true}}, {"MeanVarianceNormalization", {"MVNV2"}},
      {"Min", {"Minimum", true}}, {"Mish", {"Mish"}}, {"Mod", {"Mod"}}, {"Mul", {"Mul"}},
      {"Multinomial", {"Multinomial", true}}, {"Neg", {"Neg"}}, {"NonZero", {"NonZero", true}},
      {"Not", {"LogicalNot"}}, {"OneHot", {"OneHot", true}}, {"Or", {"LogicalOr"}},
      {"PRelu", {"PRelu"}}, {"Pad", {"PadV3"}}, {"Pow", {"Pow"}},
      {"RandomNormal", {"RandomStandardNormal", true}},
      {"RandomNormalLike", {"RandomStandardNormal", true}},
      {"RandomUniform", {"RandomUniform", true}}, {"RandomUniformLike", {"RandomUniform", true}},
      {"Range", {"Range"}}, {"Reciprocal", {"Reciprocal"}}, {"ReduceL1", {"LpNormV2"}},
      {"ReduceL2", {"LpNormV2"}}, {"ReduceLogSum", {"ReduceLogSum"}},
      {"ReduceLogSumExp", {"ReduceLogSumExp"}}, {"ReduceMax", {"ReduceMax"}},
      {"ReduceMean", {"ReduceMean"}}, {"ReduceMin", {"ReduceMin"}},
      {"ReduceProd", {"ReduceProd"}}, {"ReduceSum", {"ReduceSum"}},
      {"ReduceSumSquare", {"SquareSumV1"}}, {"Relu", {"Relu"}}, {"Reshape", {"Reshape"}},
      {"Resize", {"Resize", true}}, {"ReverseSequence", {"ReverseSequence"}},
      {"Round", {"Round"}}, {"Scatter", {"ScatterElements"}},
      {"ScatterElements", {"ScatterElements"}}, {"ScatterND", {"ScatterNdUpdate"}},
      {"Selu", {"Selu"}}, {"Shape", {"Shape"}}, {"Shrink", {"Shrink"}},
      {"Sigmoid", {"Sigmoid"}}, {"Sign", {"Sign"}}, {"Sin", {"Sin"}}, {"Sinh", {"Sinh"}},
      {"Size", {"Size"}}, {"Slice", {"StridedSliceV2"}}, {"Softmax", {"SoftmaxV2"}},
      {"SoftmaxCrossEntropyLoss", {"SoftmaxCrossEntropyLoss"}}, {"Softplus", {"Softplus"}},
      {"Softsign", {"Softsign"}}, {"SpaceToDepth", {"SpaceToDepth"}},
      {"Split", {"SplitV", true}}, {"Sqrt", {"Sqrt"}}, {"Squeeze", {"Squeeze"}},
      {"Sub", {"Sub"}}, {"Sum", {"AccumulateNV2"}}, {"Tan", {"Tan"}}, {"Tanh", {"Tanh"}},
      {"ThresholdedRelu", {"Threshold", true}}, {"Tile", {"Tile"}}, {"TopK", {"TopK"}},
      {"Transpose", {"Transpose"}}, {"Trilu", {"Trilu", true}},
      {"Unique", {"UniqueWithCountsAndSorting", true}}, {"Unsqueeze", {"Unsqueeze"}},
      {"Where", {"SelectV2"}}, {"Xor", {"BitwiseXor", true}},
  };
  return m;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view key) {
  for (const auto& a : n.attribute()) {
    if (a.name() == key) return &a;
  }
  return nullptr;
}
std::int64_t attr_int(const onnx::NodeProto& n, std::string_view key, std::int64_t fallback) {
  const auto* a = find_attr(n, key);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}
double attr_float(const onnx::NodeProto& n, std::string_view key, double fallback) {
  const auto* a = find_attr(n, key);
  return a != nullptr && a->type() == onnx::AttributeProto::FLOAT ? a->f() : fallback;
}
std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, std::string_view key) {
  const auto* a = find_attr(n, key);
  if (a == nullptr || a->type() != onnx::AttributeProto::INTS) return {};
  return {a->ints().begin(), a->ints().end()};
}
std::string join_ints(const std::vector<std::int64_t>& v) {
  std::string s;
  for (const auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}
std::int64_t norm_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

LTensor scalar_const(const std::string& dtype, std::vector<DimTemplate> shape = {}) {
  return LTensor{"", std::move(shape), dtype};
}

// The node's inputs in order, without the optional ones left out.
std::vector<LTensor> present_inputs(const NodeView& v) {
  std::vector<LTensor> out;
  for (const auto& t : v.inputs) {
    if (t) out.push_back(*t);
  }
  return out;
}

// The plain one-op lowering: every input, every output, the node's integer attributes.
LOp direct(const NodeView& v, std::string_view type) {
  LOp op;
  op.type = std::string(type);
  op.inputs = present_inputs(v);
  op.outputs = v.outputs;
  return op;
}

std::string tmp_id(const NodeView& v, std::string_view suffix) {
  return fmt::format("{}/{}:0", v.name, suffix);
}

Lowering lower_gemm(const NodeView& v) {
  // MatMulV2 (transpose_x1/x2 from transA/transB), then alpha as Muls and the bias C as Add.
  Lowering l;
  const auto& n = *v.node;
  const double alpha = attr_float(n, "alpha", 1.0);
  const double beta = attr_float(n, "beta", 1.0);
  const bool has_c = v.inputs.size() > 2 && v.inputs[2].has_value();
  LOp mm;
  mm.type = "MatMulV2";
  mm.inputs = {*v.inputs.at(0), *v.inputs.at(1)};
  mm.attrs = {{"transpose_x1", attr_int(n, "transA", 0) != 0 ? "true" : "false"},
              {"transpose_x2", attr_int(n, "transB", 0) != 0 ? "true" : "false"}};
  LTensor cur = v.outputs.at(0);
  const bool scaled = alpha != 1.0;
  if (scaled || has_c) {
    mm.suffix = "MatMulV2";
    cur.id = tmp_id(v, "MatMulV2");
  }
  mm.outputs = {cur};
  l.ops.push_back(mm);
  if (scaled) {
    LOp mu;
    mu.type = "Muls";
    mu.suffix = has_c ? "Muls" : "";
    mu.inputs = {cur};
    mu.attrs = {{"value", fmt::format("{}", alpha)}};
    cur.id = has_c ? tmp_id(v, "Muls") : v.outputs.at(0).id;
    mu.outputs = {cur};
    l.ops.push_back(mu);
  }
  if (has_c) {
    LTensor c = *v.inputs[2];
    if (beta != 1.0) {
      LOp mc;
      mc.type = "Muls";
      mc.suffix = "Muls_bias";
      mc.inputs = {c};
      mc.attrs = {{"value", fmt::format("{}", beta)}};
      c.id = tmp_id(v, "Muls_bias");
      mc.outputs = {c};
      l.ops.push_back(mc);
    }
    LOp add;
    add.type = "Add";
    add.inputs = {cur, c};
    add.outputs = {v.outputs.at(0)};
    l.ops.push_back(add);
  }
  return l;
}

Lowering lower_conv(const NodeView& v, bool transpose) {
  Lowering l;
  const auto& n = *v.node;
  const std::size_t rank = v.inputs.at(0)->shape.size();
  std::string type = transpose ? "Conv2DTranspose" : "Conv2D";
  if (rank == 5) type = transpose ? "Conv3DTranspose" : "Conv3D";
  LOp op = direct(v, type);
  op.attrs = {{"strides", join_ints(attr_ints(n, "strides"))},
              {"pads", join_ints(attr_ints(n, "pads"))},
              {"dilations", join_ints(attr_ints(n, "dilations"))},
              {"groups", std::to_string(attr_int(n, "group", 1))},
              {"data_format", rank == 5 ? "NCDHW" : "NCHW"}};
  std::erase_if(op.attrs, [](const auto& kv) { return kv.second.empty(); });
  if (rank == 3) {
    // ATC runs a 1-D convolution as Unsqueeze -> Conv2D -> Squeeze on an H axis of 1.
    LTensor x = *v.inputs[0];
    LTensor w = *v.inputs[1];
    LTensor y = v.outputs.at(0);
    auto unsq = [](LTensor t, std::string id) {
      t.shape.insert(t.shape.begin() + 2, DimTemplate{1, false});
      t.id = std::move(id);
      return t;
    };
    LOp ux{"Unsqueeze_x", "Unsqueeze", {x}, {unsq(x, tmp_id(v, "Unsqueeze_x"))}, {{"axes", "2"}}};
    LOp uw{"Unsqueeze_w", "Unsqueeze", {w}, {unsq(w, tmp_id(v, "Unsqueeze_w"))}, {{"axes", "2"}}};
    op.suffix = type;
    op.inputs[0] = ux.outputs[0];
    op.inputs[1] = uw.outputs[0];
    op.outputs = {unsq(y, tmp_id(v, type))};
    for (auto& [k, val] : op.attrs) {
      if (k == "strides" || k == "dilations") val = "1," + val;
      if (k == "pads" && !val.empty()) {
        const auto p = attr_ints(n, "pads");
        if (p.size() == 2) val = fmt::format("0,{},0,{}", p[0], p[1]);
      }
    }
    LOp sq{"", "Squeeze", {op.outputs[0]}, {y}, {{"axes", "2"}}};
    l.ops = {ux, uw, op, sq};
    return l;
  }
  l.ops.push_back(op);
  return l;
}

Lowering lower_argmax(const NodeView& v, std::string_view type) {
  // ArgMaxV2 drops the axis; keepdims=1 (the default) puts it back with ExpandDims.
  Lowering l;
  const auto& n = *v.node;
  const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), v.inputs.at(0)->shape.size());
  LOp op;
  op.type = std::string(type);
  op.inputs = {*v.inputs[0], scalar_const("INT32")};
  op.attrs = {{"dimension", std::to_string(axis)}};
  if (attr_int(n, "keepdims", 1) == 0) {
    op.outputs = {v.outputs.at(0)};
    l.ops.push_back(op);
    return l;
  }
  LTensor r = v.outputs.at(0);
  if (axis >= 0 && static_cast<std::size_t>(axis) < r.shape.size()) {
    r.shape.erase(r.shape.begin() + axis);
  }
  r.id = tmp_id(v, op.type);
  op.suffix = op.type;
  op.outputs = {r};
  LOp ex{"", "ExpandDims", {r, scalar_const("INT32", {{1, false}})}, {v.outputs.at(0)},
         {{"axis", std::to_string(axis)}}};
  l.ops = {op, ex};
  return l;
}

Lowering lower_nary(const NodeView& v, std::string_view binary) {
  // Max/Min of n inputs: a chain of n-1 binary ops (one input: Identity).
  Lowering l;
  const std::vector<LTensor> ins = present_inputs(v);
  if (ins.size() < 2) {
    l.ops.push_back(direct(v, "Identity"));
    return l;
  }
  LTensor cur = ins[0];
  for (std::size_t i = 1; i < ins.size(); ++i) {
    LOp op;
    op.type = std::string(binary);
    const bool last = i + 1 == ins.size();
    op.suffix = last ? "" : fmt::format("{}_{}", binary, i);
    op.inputs = {cur, ins[i]};
    LTensor out = v.outputs.at(0);
    if (!last) out.id = tmp_id(v, op.suffix);
    op.outputs = {out};
    cur = out;
    l.ops.push_back(op);
  }
  return l;
}

}  // namespace

std::string shape_text(const std::vector<DimTemplate>& shape) {
  std::string s;
  for (const DimTemplate& d : shape) {
    if (!s.empty()) s += ',';
    if (!d.batch) {
      s += std::to_string(d.k);
    } else {
      s += d.k == 1 ? std::string("B") : fmt::format("B*{}", d.k);
    }
  }
  return s;
}

bool atc_maps(const std::string& onnx_type) { return op_map().count(onnx_type) > 0; }

Lowering lower_node(const NodeView& v) {
  const auto& n = *v.node;
  const std::string& t = n.op_type();
  Lowering l;
  if (t == "Gemm") return lower_gemm(v);
  if (t == "Conv" || t == "ConvTranspose") return lower_conv(v, t == "ConvTranspose");
  if (t == "ArgMax") return lower_argmax(v, "ArgMaxV2");
  if (t == "ArgMin") return lower_argmax(v, "ArgMin");
  if (t == "Max") return lower_nary(v, "Maximum");
  if (t == "Min") return lower_nary(v, "Minimum");

  const auto it = op_map().find(t);
  if (it == op_map().end()) {
    // Not in ATC's plugins: kept under its ONNX name, costed by the generic model.
    l.ops.push_back(direct(v, t));
    l.warnings.push_back({"onnx-unmapped-op",
                          fmt::format("node '{}' ({}): ATC has no mapping for this op; kept as "
                                      "'{}' and costed by the generic model",
                                      v.name, t, t)});
    return l;
  }
  LOp op = direct(v, it->second.cann);
  const std::size_t rank0 = v.inputs.empty() || !v.inputs[0] ? 0 : v.inputs[0]->shape.size();
  if (t == "MatMul") {
    op.attrs = {{"adj_x1", "false"}, {"adj_x2", "false"}};
  } else if (t == "Concat") {
    if (op.inputs.size() == 1) op.type = "Identity";
    op.attrs = {{"concat_dim", std::to_string(norm_axis(attr_int(n, "axis", 0), rank0))},
                {"N", std::to_string(op.inputs.size())}};
  } else if (t == "Gather") {
    // GatherV2(x, indices, axis): the axis becomes a one-element input; the op model also reads
    // it as an attribute.
    const std::int64_t axis = norm_axis(attr_int(n, "axis", 0), rank0);
    op.inputs.push_back(scalar_const("INT32", {{1, false}}));
    op.attrs = {{"axis", std::to_string(axis)}, {"batch_dims", "0"}};
  } else if (t == "Transpose") {
    auto perm = attr_ints(n, "perm");
    if (perm.empty()) {
      for (std::size_t i = rank0; i > 0; --i) perm.push_back(static_cast<std::int64_t>(i - 1));
    }
    op.attrs = {{"perm", join_ints(perm)}};
  } else if (t == "Softmax" || t == "LogSoftmax") {
    op.attrs = {{"axes", std::to_string(norm_axis(attr_int(n, "axis", -1), rank0))}};
  } else if (t.rfind("Reduce", 0) == 0) {
    std::vector<std::int64_t> axes = attr_ints(n, "axes");
    if (axes.empty() && v.inputs.size() > 1 && v.inputs[1]) {  // opset 18 / ReduceSum 13: input
      if (auto vals = v.int_values(1)) axes = *vals;
    }
    for (auto& a : axes) a = norm_axis(a, rank0);
    if (!axes.empty()) op.attrs.emplace_back("axes", join_ints(axes));
    op.attrs.emplace_back("keep_dims", attr_int(n, "keepdims", 1) != 0 ? "true" : "false");
  } else if (t == "TopK") {
    if (auto k = v.int_values(1); k && k->size() == 1) op.attrs = {{"k", std::to_string((*k)[0])}};
    op.attrs.emplace_back("dim", std::to_string(norm_axis(attr_int(n, "axis", -1), rank0)));
    op.attrs.emplace_back("largest", attr_int(n, "largest", 1) != 0 ? "true" : "false");
    op.attrs.emplace_back("sorted", attr_int(n, "sorted", 1) != 0 ? "true" : "false");
  } else if (t == "Tile") {
    if (auto m = v.int_values(1)) op.attrs = {{"multiples", join_ints(*m)}};
  } else if (t == "Cast") {
    op.attrs = {{"dst_type", v.outputs.empty() ? "" : v.outputs[0].dtype}};
  } else if (t == "MaxPool" || t == "AveragePool") {
    const auto pads = attr_ints(n, "pads");
    const bool padded = std::any_of(pads.begin(), pads.end(), [](auto p) { return p != 0; });
    if (t == "MaxPool") op.type = rank0 == 5 ? "MaxPool3D" : (padded ? "MaxPoolV3" : "MaxPool");
    if (t == "AveragePool" && rank0 == 5) op.type = "AvgPool3D";
    op.attrs = {{"ksize", join_ints(attr_ints(n, "kernel_shape"))},
                {"strides", join_ints(attr_ints(n, "strides"))},
                {"pads", join_ints(pads)}};
    std::erase_if(op.attrs, [](const auto& kv) { return kv.second.empty(); });
    if (op.outputs.size() > 1) op.outputs.resize(1);  // MaxPool's optional Indices output
    l.ops.push_back(op);
    return l;
  } else if (t == "Split") {
    op.attrs = {{"split_dim", std::to_string(norm_axis(attr_int(n, "axis", 0), rank0))},
                {"num_split", std::to_string(op.outputs.size())}};
  } else if (t == "LayerNormalization") {
    const std::int64_t axis = norm_axis(attr_int(n, "axis", -1), rank0);
    op.attrs = {{"begin_norm_axis", std::to_string(axis)},
                {"begin_params_axis", std::to_string(axis)}};
    if (op.outputs.size() > 1) op.outputs.resize(1);  // Mean / InvStdDev: training outputs
  } else if (t == "Squeeze" || t == "Unsqueeze") {
    auto axes = attr_ints(n, "axes");
    if (axes.empty() && v.inputs.size() > 1 && v.inputs[1]) {
      if (auto vals = v.int_values(1)) axes = *vals;
    }
    if (!axes.empty()) op.attrs = {{"axes", join_ints(axes)}};
  } else if (it->second.expanded && t != "Clip" && t != "NonZero" && t != "Unique") {
    l.warnings.push_back({"onnx-expansion-approximated",
                          fmt::format("node '{}' ({}): ATC expands it into several CANN ops; "
                                      "costed as one {}",
                                      v.name, t, op.type)});
  }
  l.ops.push_back(op);
  return l;
}

}  // namespace npusim::frontend
