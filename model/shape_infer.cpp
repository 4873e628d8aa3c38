#include "model/shape_infer.h"

#include "model/shape_infer_rules.h"

namespace npusim::shape_rules {

// ---- the rules, one per role ------------------------------------------------------------------

Result elementwise(const Ctx& c, const OpKindInfo& kind) {
  const std::string& t = c.op.type;
  if (one_of(t, {"ApplyAdamWV2", "ApplyAdamWD", "FusedAdamW", "ApplyAdam"})) return std::nullopt;
  if (kind.writes_only) {
    if (one_of(t, {"ZerosLike", "OnesLike"}) && !c.in.empty()) return one(c.in[0], c.dt[0]);
    return std::nullopt;  // Fill, Range...: the shape is data; declare output_shapes
  }
  if (c.in.empty()) return std::nullopt;
  if (one_of(t, {"SwiGlu", "GeGlu"})) {
    Shape s = c.input(0);
    if (s.empty()) c.fail("expected a tensor, got a scalar");
    const std::size_t a = c.axis(c.int_attr({"dim", "axis"}).value_or(-1), s.size(), "dim");
    if (s[a].k % 2 != 0) c.fail(fmt::format("dimension {} ({}) is not even", a, dim_text(s[a])));
    s[a].k /= 2;
    return one(s, c.dt[0]);
  }
  if (t == "SwiGluGrad") return one(c.input(1), c.dt[1]);
  Shape s = broadcast(c, c.in);
  std::string dtype = c.dt[0];
  if (kind.compare) {
    dtype = "BOOL";
  } else if (one_of(t, {"Select", "SelectV2"}) && c.dt.size() >= 2) {
    dtype = c.dt[1];  // select(condition, x, y)
  }
  return one(std::move(s), dtype);
}

Result reduce(const Ctx& c) {
  const std::string& t = c.op.type;
  const Shape& x = c.input(0);
  const bool arg = t.rfind("Arg", 0) == 0;
  std::vector<std::size_t> axes;
  if (arg) {
    axes.push_back(c.axis(c.int_attr({"axis", "dimension", "dim"}).value_or(0), x.size(), "axis"));
  } else if (const auto a = c.ints({"axes", "axis", "dim"})) {
    for (const std::int64_t v : *a) axes.push_back(c.axis(v, x.size(), "axis"));
    if (a->empty() && !c.flag({"noop_with_empty_axes"})) {
      for (std::size_t d = 0; d < x.size(); ++d) axes.push_back(d);
    }
  } else if (c.in.size() == 1) {
    for (std::size_t d = 0; d < x.size(); ++d) axes.push_back(d);  // no axes: all of them
  } else {
    return std::nullopt;  // axes given as a tensor: its values are data
  }
  const bool keep = c.flag({"keep_dims", "keepdims", "keep_dim"});
  Shape out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
      out.push_back(x[d]);
    } else if (keep) {
      out.push_back(lit(1));
    }
  }
  std::string dtype = c.dt[0];
  if (arg) dtype = canon(c.attr({"dtype", "output_type"}).value_or("INT32"));
  if (t == "BNTrainingReduce") return std::nullopt;
  return one(out, dtype);
}

// Softmax and the norms keep the shape; the statistics a norm also returns drop the axes its
// gamma spans (set to 1).
Result rowwise(const Ctx& c) {
  const std::string& t = c.op.type;
  const Shape& x = c.input(0);
  auto stats = [&](std::size_t gamma) {
    Shape s = x;
    const std::size_t r = c.in.size() > gamma ? c.in[gamma].size() : 1;
    for (std::size_t d = 0; d < std::min(r, s.size()); ++d) s[s.size() - 1 - d] = lit(1);
    return s;
  };
  if (one_of(t, {"RmsNorm"})) return Out{{x, stats(1)}, {c.dt[0], "FLOAT32"}, true, {}};
  if (t == "AddRmsNorm") {
    return Out{{x, stats(2), x}, {c.dt[0], "FLOAT32", c.dt[0]}, true, {}};
  }
  if (one_of(t, {"LayerNorm", "LayerNormV3", "LayerNormV4"})) {
    return Out{{x, stats(1), stats(1)}, {c.dt[0], "FLOAT32", "FLOAT32"}, true, {}};
  }
  if (t == "RmsNormGrad" && c.in.size() >= 4) {
    return Out{{c.in[1], c.in[3]}, {c.dt[1], "FLOAT32"}, true, {}};  // (dy, x, rstd, gamma)
  }
  if (t == "LayerNormGrad" && c.in.size() >= 5) {
    return Out{{c.in[1], c.in[4], c.in[4]}, {c.dt[1], c.dt[4], c.dt[4]}, true, {}};
  }
  if (t == "SoftmaxCrossEntropyWithLogits") {
    if (x.empty()) c.fail("expected logits of rank >= 1");
    return Out{{Shape(x.begin(), x.end() - 1), x}, {c.dt[0], c.dt[0]}, true, {}};
  }
  if (one_of(t, {"RmsNormGrad", "LayerNormGrad", "BatchNorm", "BNInfer", "GroupNorm",
                 "InstanceNorm", "AddLayerNorm"})) {
    return Out{{x}, {c.dt[0]}, true, "first output only; declare the others"};
  }
  // Softmax and its kin keep the shape; the axes they work along must exist.
  if (const auto axes = c.ints({"axes", "axis", "dim"})) {
    for (const std::int64_t a : *axes) (void)c.axis(a, x.size(), "axis");
  }
  return one(x, c.dt[0]);
}

namespace {
bool attr_true(const Ctx& c, std::initializer_list<std::string_view> keys) { return c.flag(keys); }
}  // namespace

// MatMul (2-D) and BatchMatMul (broadcast batch), with the transposes each spelling uses.
Result matmul(const Ctx& c, bool batched) {
  const Shape& a = c.input(0);
  const Shape& b = c.input(1);
  if (a.size() < 2 || b.size() < 2) return std::nullopt;  // a vector operand: declare outputs
  if (!batched && (a.size() != 2 || b.size() != 2)) batched = true;
  const bool ta = attr_true(c, {"transpose_x1", "transpose_a", "adj_x1", "adj_x", "trans_a"});
  const bool tb = attr_true(c, {"transpose_x2", "transpose_b", "adj_x2", "adj_y", "trans_b"});
  const Dim m = a[a.size() - (ta ? 1 : 2)];
  const Dim ka = a[a.size() - (ta ? 2 : 1)];
  const Dim kb = b[b.size() - (tb ? 1 : 2)];
  const Dim n = b[b.size() - (tb ? 2 : 1)];
  if (!same(ka, kb)) {
    c.fail(fmt::format("K differs: '{}'{} has {}, '{}'{} has {}", shape_text(a),
                       ta ? " (transposed)" : "", dim_text(ka), shape_text(b),
                       tb ? " (transposed)" : "", dim_text(kb)));
  }
  Shape s;
  if (batched) {
    s = broadcast(c, {Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)});
  }
  s.push_back(m);
  s.push_back(n);
  std::string dtype = c.dt[0];
  if (dtype == "INT8" || dtype == "INT4") dtype = "INT32";
  if (const auto d = c.attr({"dtype", "output_dtype"})) {
    if (const auto p = parse_dtype(trim_blanks(*d))) dtype = dtype_name(*p);
  }
  return one(s, dtype);
}

namespace {

// A window over the spatial axes: out = floor((n + pads - dilation*(k-1) - 1) / stride) + 1.
Dim window(const Ctx& c, Dim n, std::int64_t k, std::int64_t stride, std::int64_t pad_sum,
           std::int64_t dilation, bool ceil_mode, std::size_t axis) {
  if (n.b != 0) c.fail(fmt::format("spatial axis {} is {}: a window over B is not of the form k or k*B", axis, dim_text(n)));
  if (stride < 1 || dilation < 1) c.fail("strides and dilations must be >= 1");
  const std::int64_t span = n.k + pad_sum - dilation * (k - 1) - 1;
  if (span < 0) c.fail(fmt::format("the window ({}) is larger than spatial axis {} ({} padded)", k, axis, n.k + pad_sum));
  return lit((ceil_mode ? (span + stride - 1) / stride : span / stride) + 1);
}

// The spatial values of a 2-D attribute written for 4 axes (CANN "1,1,2,2") or for 2 ("2,2").
std::array<std::int64_t, 2> spatial(const Ctx& c, std::initializer_list<std::string_view> keys,
                                    std::int64_t fallback, bool nhwc) {
  const auto v = c.ints(keys);
  if (!v || v->empty()) return {fallback, fallback};
  if (v->size() == 1) return {v->front(), v->front()};
  if (v->size() == 2) return {(*v)[0], (*v)[1]};
  if (v->size() == 4) return nhwc ? std::array{(*v)[1], (*v)[2]} : std::array{(*v)[2], (*v)[3]};
  c.fail(fmt::format("attribute {}: expected 1, 2 or 4 values", *keys.begin()));
}
// pads: top, bottom, left, right (CANN) -> the sum per spatial axis.
std::array<std::int64_t, 2> pad_sums(const Ctx& c) {
  const auto v = c.ints({"pads"});
  if (!v || v->empty()) return {0, 0};
  for (const std::int64_t p : *v) {
    if (p < 0) c.fail(fmt::format("attribute pads: {} is negative", p));
  }
  if (v->size() == 4) return {(*v)[0] + (*v)[1], (*v)[2] + (*v)[3]};
  if (v->size() == 2) return {2 * (*v)[0], 2 * (*v)[1]};
  c.fail("attribute pads: expected 4 values (top, bottom, left, right)");
}

}  // namespace

Result conv(const Ctx& c) {
  const std::string& t = c.op.type;
  if (!one_of(t, {"Conv2D", "Conv2DV2", "DepthwiseConv2D", "Convolution"})) return std::nullopt;
  const Shape& x = c.input(0);
  const Shape& w = c.input(1);
  if (x.size() != 4 || w.size() != 4) return std::nullopt;
  const bool nhwc = c.attr({"data_format"}).value_or("NCHW") == "NHWC";
  // Filter: OIHW (ONNX, CANN NCHW) unless filter_format says HWCN.
  const bool hwcn = c.attr({"filter_format"}).value_or("") == "HWCN";
  const Dim kh = hwcn ? w[0] : w[2];
  const Dim kw = hwcn ? w[1] : w[3];
  Dim o = hwcn ? w[3] : w[0];
  if (kh.b != 0 || kw.b != 0) c.fail("the filter's spatial size mentions B");
  if (t == "DepthwiseConv2D") {
    o = mul(c, nhwc ? x[3] : x[1], hwcn ? w[3] : w[1]);
  } else {
    // The filter's input channels times the groups are the input's channels, and the groups
    // divide the output channels (a Conv2D of 3 channels with groups = 2 was costed as given).
    const std::int64_t g = c.int_attr({"groups", "group"}).value_or(1);
    if (g < 1) c.fail(fmt::format("attribute groups: {} is not a count >= 1", g));
    const Dim cin = nhwc ? x[3] : x[1];
    const Dim wc = hwcn ? w[2] : w[1];
    if (cin.b == wc.b && (cin.k % g != 0 || cin.k / g != wc.k)) {
      c.fail(fmt::format("the input has {} channels but the filter {} x groups {}", dim_text(cin),
                         dim_text(wc), g));
    }
    if (o.b == 0 && o.k % g != 0) {
      c.fail(fmt::format("the groups ({}) do not divide the filter's {} output channels", g, o.k));
    }
  }
  const auto s = spatial(c, {"strides"}, 1, nhwc);
  const auto d = spatial(c, {"dilations"}, 1, nhwc);
  const auto p = pad_sums(c);
  const Dim h = window(c, nhwc ? x[1] : x[2], kh.k, s[0], p[0], d[0], false, nhwc ? 1 : 2);
  const Dim wd = window(c, nhwc ? x[2] : x[3], kw.k, s[1], p[1], d[1], false, nhwc ? 2 : 3);
  return one(nhwc ? Shape{x[0], h, wd, o} : Shape{x[0], o, h, wd}, c.dt[0]);
}

Result pool(const Ctx& c) {
  const Shape& x = c.input(0);
  if (x.size() != 4) return std::nullopt;
  const bool nhwc = c.attr({"data_format"}).value_or("NCHW") == "NHWC";
  const std::size_t ch = nhwc ? 1 : 2;
  const std::size_t cw = nhwc ? 2 : 3;
  if (one_of(c.op.type, {"GlobalAveragePool", "GlobalMaxPool", "AdaptiveAvgPool2d"})) {
    Shape s = x;
    s[ch] = lit(1);
    s[cw] = lit(1);
    return one(s, c.dt[0]);
  }
  const auto k = spatial(c, {"ksize", "kernel_shape", "kernel_size"}, 0, nhwc);
  if (k[0] <= 0) return std::nullopt;
  const auto s = spatial(c, {"strides"}, 1, nhwc);
  const auto p = pad_sums(c);
  const bool ceil_mode = c.flag({"ceil_mode"});
  Shape out = x;
  out[ch] = window(c, x[ch], k[0], s[0], p[0], 1, ceil_mode, ch);
  out[cw] = window(c, x[cw], k[1], s[1], p[1], 1, ceil_mode, cw);
  return one(out, c.dt[0]);
}

Result attention(const Ctx& c) {
  const std::string& t = c.op.type;
  if (t == "FlashAttentionScoreGrad" && c.in.size() >= 3) {
    return Out{{c.in[0], c.in[1], c.in[2]}, {c.dt[0], c.dt[1], c.dt[2]}, true,
               "dq, dk, dv; declare the other outputs"};
  }
  return Out{{c.input(0)}, {c.dt[0]}, true, "attention output (the query's shape) only"};
}

}  // namespace npusim::shape_rules

namespace npusim {

using namespace shape_rules;  // NOLINT(google-build-using-namespace): the rules, this file only

namespace {

Result by_role(const Ctx& c, const OpKindInfo& kind) {
  switch (kind.role) {
    case OpRole::kMatMul:
      return matmul(c, false);
    case OpRole::kBatchMatMul:
      return c.op.type == "GroupedMatmul" ? std::nullopt : matmul(c, true);
    case OpRole::kConv2D:
      return conv(c);
    case OpRole::kConvBackpropInput:
    case OpRole::kConvBackpropFilter: {
      // The gradient has the shape of the forward input (or filter): given as an attribute.
      const auto v = c.attr({c.op.type.find("Filter") != std::string::npos ? "filter_size"
                                                                            : "input_size"});
      if (!v) return std::nullopt;
      const auto s = parse_shape(*v);
      if (!s) c.fail(fmt::format("attribute '{}': expected dimensions k, B or B*k", *v));
      return one(*s, c.dt.back());
    }
    case OpRole::kPool:
      return pool(c);
    case OpRole::kPoolGrad:
      // MaxPoolGrad(orig_x, orig_y, grads): the gradient of orig_x. AvgPoolGrad takes the
      // original shape as data: no rule.
      if (c.op.type.rfind("MaxPoolGrad", 0) == 0 && !c.in.empty()) return one(c.in[0], c.dt.back());
      return std::nullopt;
    case OpRole::kAttention:
      return attention(c);
    case OpRole::kElementwise:
      return elementwise(c, kind);
    case OpRole::kReduce:
      return reduce(c);
    case OpRole::kRowwise:
      return rowwise(c);
    case OpRole::kTile:
      return tile(c);
    case OpRole::kConcat:
      return concat(c);
    case OpRole::kTranspose:
      return transpose(c);
    case OpRole::kTransData:
      return one(c.input(0), c.dt[0]);  // logical shapes: only the layout changes
    case OpRole::kCast:
      return cast(c);
    case OpRole::kSlice:
      return slice(c);
    case OpRole::kCopy:
      return copy(c);
    case OpRole::kSplit:
      return split(c);
    case OpRole::kPad:
      return pad(c);
    case OpRole::kGather:
      return gather(c);
    case OpRole::kGatherElements:
      return gather_elements(c);
    case OpRole::kScatter:
      return scatter(c);
    case OpRole::kTopK:
      return topk(c);
    case OpRole::kSort:
      return sort(c);
    case OpRole::kDynamicShape:
      return dynamic_shape(c);
    case OpRole::kAicpuStatic:
      return aicpu_static(c);
    case OpRole::kGeneric:
      break;
  }
  // Global pooling has no row of its own in the table; it has a shape rule.
  if (one_of(c.op.type, {"Pooling", "GlobalAveragePool", "GlobalMaxPool", "AdaptiveAvgPool2d"})) {
    return pool(c);
  }
  return std::nullopt;
}

}  // namespace

std::optional<InferredOutputs> infer_output_templates(const OpText& op,
                                                      const std::vector<std::string>& input_shapes,
                                                      const std::vector<std::string>& input_dtypes,
                                                      const SourcePos& pos) {
  if (input_shapes.size() != input_dtypes.size()) return std::nullopt;
  Ctx c{op, {}, {}, pos};
  for (std::size_t j = 0; j < input_shapes.size(); ++j) {
    auto s = parse_shape(input_shapes[j]);
    if (!s) return std::nullopt;  // not a template: make_op reports it
    c.in.push_back(std::move(*s));
    c.dt.push_back(canon(input_dtypes[j]));
  }
  const Result r = by_role(c, lookup_op_kind(op.type));
  if (!r) return std::nullopt;
  InferredOutputs out;
  for (const Shape& s : r->shapes) out.shapes.push_back(shape_text(checked(c, s)));
  out.dtypes = r->dtypes;
  out.exact = r->exact;
  out.note = r->note;
  return out;
}

}  // namespace npusim
