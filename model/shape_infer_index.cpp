// Shape rules of the index, sort and AI CPU ops: Gather, Scatter, TopK, Sort, the
// data-dependent ops (an upper bound) and the static AI CPU ops.
#include "model/shape_infer_rules.h"

namespace npusim::shape_rules {

Result gather(const Ctx& c) {
  const std::string& t = c.op.type;
  if (one_of(t, {"EmbeddingBag", "Index", "IndexSelect"})) return std::nullopt;
  const Shape& params = c.input(0);
  const Shape& idx = c.input(1);
  if (t == "GatherNd") {
    if (idx.empty() || idx.back().b != 0 || idx.back().k > static_cast<std::int64_t>(params.size())) {
      c.fail("the last axis of indices must be a constant <= the rank of params");
    }
    Shape s(idx.begin(), idx.end() - 1);
    s.insert(s.end(), params.begin() + idx.back().k, params.end());
    return one(s, c.dt[0]);
  }
  if (params.empty()) c.fail("params is a scalar");
  const std::size_t a = c.axis(c.int_attr({"axis", "dim"}).value_or(0), params.size(), "axis");
  const std::int64_t bd = c.int_attr({"batch_dims"}).value_or(0);
  const std::size_t b = c.axis(bd, idx.size() + 1, "batch_dims");
  if (b > a) c.fail(fmt::format("batch_dims {} exceeds axis {}", b, a));
  for (std::size_t d = 0; d < b; ++d) {
    if (!same(params[d], idx[d])) {
      c.fail(fmt::format("batch axis {}: params {} vs indices {}", d, dim_text(params[d]),
                         dim_text(idx[d])));
    }
  }
  Shape s(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(a));
  s.insert(s.end(), idx.begin() + static_cast<std::ptrdiff_t>(b), idx.end());
  s.insert(s.end(), params.begin() + static_cast<std::ptrdiff_t>(a) + 1, params.end());
  return one(s, c.dt[0]);
}

Result gather_elements(const Ctx& c) {
  const std::size_t j = c.in.size() >= 3 ? 2 : 1;  // GatherD(x, dim, index) or (x, index)
  return one(c.input(j), c.dt[0]);
}

Result scatter(const Ctx& c) {
  const std::string& t = c.op.type;
  if (one_of(t, {"ScatterNd", "UnsortedSegmentSum", "UnsortedSegmentSumD", "EmbeddingDenseGrad",
                 "EmbeddingDenseGradV2", "ScatterList"})) {
    if (t == "ScatterNd") {
      const auto v = c.attr({"shape"});
      if (!v) return std::nullopt;
      const auto s = parse_shape(*v);
      if (!s) c.fail(fmt::format("attribute shape = '{}'", *v));
      return one(*s, c.dt.size() > 1 ? c.dt[1] : c.dt[0]);
    }
    if (t.rfind("UnsortedSegmentSum", 0) == 0) {
      const auto n = c.int_attr({"num_segments"});
      if (!n) return std::nullopt;
      const Shape& x = c.input(0);
      const std::size_t r = c.input(1).size();
      if (r > x.size()) c.fail("segment_ids has a higher rank than x");
      Shape s{lit(*n)};
      s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(r), x.end());
      return one(s, c.dt[0]);
    }
    if (t.rfind("EmbeddingDenseGrad", 0) == 0) {
      const auto n = c.int_attr({"num_weights"});
      if (!n || c.input(0).empty()) return std::nullopt;
      return one({lit(*n), c.input(0).back()}, c.dt[0]);
    }
    return std::nullopt;
  }
  return one(c.input(0), c.dt[0]);  // updates land in var / data, whose shape is the output
}

Result topk(const Ctx& c) {
  const Shape& x = c.input(0);
  if (x.empty()) c.fail("TopK of a scalar");
  const auto k = c.int_attr({"k"});
  if (!k) return std::nullopt;  // k given as a tensor: its value is data
  const std::size_t a = c.axis(c.int_attr({"dim", "axis"}).value_or(-1), x.size(), "dim");
  if (*k < 1 || (x[a].b == 0 && *k > x[a].k)) {
    c.fail(fmt::format("k = {} for an axis of {}", *k, dim_text(x[a])));
  }
  Shape s = x;
  s[a] = lit(*k);
  return Out{{s, s}, {c.dt[0], "INT32"}, true, {}};
}

Result sort(const Ctx& c) {
  const Shape& x = c.input(0);
  if (c.op.type == "ArgSort") return one(x, "INT32");
  return Out{{x, x}, {c.dt[0], "INT32"}, true, {}};
}

Result dynamic_shape(const Ctx& c) {
  const std::string& t = c.op.type;
  if (one_of(t, {"Where"}) && c.in.size() == 3) {
    // select(condition, x, y): elementwise, its shape is exact; the kernel is AI CPU here.
    return one(broadcast(c, c.in), c.dt[1]);
  }
  const Shape& x = c.input(0);
  const Dim n = product(c, x);
  if (n.b > 1) c.fail("the element count is a power of B: not of the form k or k*B");
  const std::string note =
      "upper bound: the output size depends on the data (every element selected)";
  const auto rank = lit(static_cast<std::int64_t>(x.size()));
  if (one_of(t, {"Where", "NonZero", "NonZeroWithValue"})) {
    Shape s = c.flag({"transpose"}) ? Shape{rank, n} : Shape{n, rank};
    return Out{{s}, {"INT64"}, false, note};
  }
  if (one_of(t, {"Unique", "UniqueV2", "UniqueWithCounts", "UniqueConsecutive"})) {
    return Out{{{n}, x}, {c.dt[0], "INT32"}, false, note};
  }
  if (one_of(t, {"MaskedSelect", "BooleanMask"})) {
    Shape s{n};
    if (t == "BooleanMask" && c.in.size() >= 2) {
      const std::size_t r = c.in[1].size();
      const Dim m = product(c, x, 0, r);
      if (m.b > 1) c.fail("the element count is a power of B");
      s = Shape{m};
      s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(std::min(r, x.size())), x.end());
    }
    return Out{{s}, {c.dt[0]}, false, note};
  }
  return std::nullopt;
}

Result aicpu_static(const Ctx& c) {
  const std::string& t = c.op.type;
  if (t == "Bucketize") {
    return one(c.input(0), canon(c.attr({"dtype"}).value_or("INT32")));
  }
  if (t == "StringToHashBucketFast") return one(c.input(0), "INT64");
  if (t == "SearchSorted") {
    return one(c.input(1), c.flag({"out_int32", "right_int32"}) ? "INT32" : "INT64");
  }
  return std::nullopt;
}


}  // namespace npusim::shape_rules
