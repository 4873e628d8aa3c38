// Shape rules of the data-movement ops: Tile, Concat, Transpose, Cast, Slice, Reshape and
// its views, Split, Pad (docs/graphs.md lists the attributes each reads).
#include "model/shape_infer_rules.h"

namespace npusim::shape_rules {

Result tile(const Ctx& c) {
  const std::string& t = c.op.type;
  const Shape& x = c.input(0);
  if (one_of(t, {"Tile", "TileD"})) {
    // multiples are integers or B templates ("B,1,1,1": one copy per sample)
    const auto mv = c.attr({"multiples"});
    if (!mv) return std::nullopt;
    std::string_view text = trim_blanks(*mv);
    if (!text.empty() && text.front() == '[') text = trim_blanks(text.substr(1, text.size() - 2));
    const auto m = parse_shape(text);
    if (!m) {
      c.fail(fmt::format("attribute multiples = '{}': expected integers >= 1, B or B*k", *mv));
    }
    if (m->size() < x.size()) {
      c.fail(fmt::format("multiples has {} values for an input of rank {}", m->size(), x.size()));
    }
    Shape s(m->size() - x.size(), lit(1));
    s.insert(s.end(), x.begin(), x.end());
    for (std::size_t d = 0; d < s.size(); ++d) s[d] = mul(c, s[d], (*m)[d]);
    return one(checked(c, s), c.dt[0]);
  }
  if (one_of(t, {"BroadcastTo", "BroadcastToD", "Expand", "ExpandD"})) {
    const auto v = c.attr({"shape"});
    if (!v) return std::nullopt;
    const auto target = parse_shape(*v);
    if (!target) c.fail(fmt::format("attribute shape = '{}': expected dimensions k, B or B*k", *v));
    return one(broadcast(c, {x, *target}), c.dt[0]);
  }
  if (t == "TileWithAxis") {
    const auto tiles = c.int_attr({"tiles"});
    if (!tiles) return std::nullopt;
    Shape s = x;
    const std::size_t a = c.axis(c.int_attr({"axis"}).value_or(0), s.size(), "axis");
    s[a] = mul(c, s[a], lit(*tiles));
    return one(s, c.dt[0]);
  }
  return std::nullopt;
}

bool one_element_int(const Shape& s, const std::string& dtype) {
  return std::all_of(s.begin(), s.end(), is_one) && (dtype == "INT32" || dtype == "INT64");
}

Result concat(const Ctx& c) {
  const std::string& t = c.op.type;
  if (t == "ConcatOffset") return std::nullopt;
  std::vector<std::size_t> data;
  for (std::size_t j = 0; j < c.in.size(); ++j) data.push_back(j);
  // Concat takes its axis as the first input, ConcatV2 as the last (a one-element integer).
  if (t == "Concat" && c.in.size() > 1 && one_element_int(c.in.front(), c.dt.front()) &&
      c.in[1].size() > c.in.front().size()) {
    data.erase(data.begin());
  } else if (t == "ConcatV2" && c.in.size() > 1 && one_element_int(c.in.back(), c.dt.back()) &&
             c.in.front().size() > c.in.back().size()) {
    data.pop_back();
  }
  if (data.empty()) c.fail("no input to concatenate");
  const Shape& x = c.in[data[0]];
  if (one_of(t, {"Pack", "Stack"})) {
    for (const std::size_t j : data) {
      if (c.in[j].size() != x.size() || !std::equal(x.begin(), x.end(), c.in[j].begin(), same)) {
        c.fail(fmt::format("input {} '{}' differs from input {} '{}'", j, shape_text(c.in[j]),
                           data[0], shape_text(x)));
      }
    }
    Shape s = x;
    const std::size_t a = c.axis(c.int_attr({"axis"}).value_or(0), x.size() + 1, "axis");
    s.insert(s.begin() + static_cast<std::ptrdiff_t>(a), lit(static_cast<std::int64_t>(data.size())));
    return one(s, c.dt[data[0]]);
  }
  const std::size_t a = c.axis(c.int_attr({"concat_dim", "axis"}).value_or(0), x.size(), "axis");
  Shape s = x;
  for (std::size_t n = 1; n < data.size(); ++n) {
    const Shape& y = c.in[data[n]];
    bool ok = y.size() == x.size();
    for (std::size_t d = 0; d < x.size() && ok; ++d) ok = d == a || same(x[d], y[d]);
    if (!ok) {
      c.fail(fmt::format("input {} '{}' does not match input {} '{}' off the concat axis {}",
                         data[n], shape_text(y), data[0], shape_text(x), a));
    }
    s[a] = add(c, s[a], y[a]);
  }
  return one(s, c.dt[data[0]]);
}

Result transpose(const Ctx& c) {
  const Shape& x = c.input(0);
  const auto p = c.ints({"perm", "order"});
  std::vector<std::int64_t> perm;
  if (p) {
    perm = *p;
  } else if (c.op.type == "ConfusionTransposeD") {
    return std::nullopt;
  } else {
    for (std::size_t d = x.size(); d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  }
  if (perm.size() != x.size()) {
    c.fail(fmt::format("perm has {} axes for an input of rank {}", perm.size(), x.size()));
  }
  Shape s;
  std::vector<bool> seen(x.size());
  for (const std::int64_t v : perm) {
    const std::size_t a = c.axis(v, x.size(), "perm axis");
    if (seen[a]) c.fail(fmt::format("perm names axis {} twice", a));
    seen[a] = true;
    s.push_back(x[a]);
  }
  return one(s, c.dt[0]);
}

Result cast(const Ctx& c) {
  const auto to = c.attr({"dst_type", "to", "dtype"});
  if (!to) return std::nullopt;
  const auto d = parse_dtype(trim_blanks(*to));
  if (!d) return std::nullopt;  // a numeric enum: whose? declare output_dtypes
  return one(c.input(0), dtype_name(*d));
}

// Slice: offsets/begin and size (-1 = to the end). StridedSlice: begin, end, strides with the
// begin/end/shrink masks. On a B dimension only the whole axis is expressible.
Result slice(const Ctx& c) {
  const std::string& t = c.op.type;
  const Shape& x = c.input(0);
  constexpr std::int64_t kEnd = std::numeric_limits<std::int32_t>::max();
  auto extent = [&](std::size_t d, std::int64_t b, std::int64_t e, std::int64_t st) -> Dim {
    if (st == 0) c.fail("stride 0");
    const Dim n = x[d];
    if (n.b != 0) {
      if (b == 0 && e >= kEnd && st == 1) return n;
      c.fail(fmt::format("a slice [{}:{}:{}] of the batch axis {} is not of the form k or k*B", b,
                         e, st, d));
    }
    std::int64_t lo = b < 0 ? b + n.k : b;
    std::int64_t hi = e < 0 ? e + n.k : std::min(e, n.k);
    lo = std::clamp<std::int64_t>(lo, 0, n.k);
    hi = std::clamp<std::int64_t>(hi, 0, n.k);
    if (st < 0) std::swap(lo, hi);
    const std::int64_t len = hi > lo ? (hi - lo + std::abs(st) - 1) / std::abs(st) : 0;
    if (len <= 0) c.fail(fmt::format("the slice of axis {} is empty", d));
    return lit(len);
  };
  if (one_of(t, {"Slice", "SliceD"})) {
    const auto off = c.ints({"offsets", "begin"});
    const auto size = c.ints({"size"});
    if (!off || !size) return std::nullopt;
    if (off->size() != x.size() || size->size() != x.size()) {
      c.fail(fmt::format("offsets and size need {} values each", x.size()));
    }
    Shape s;
    for (std::size_t d = 0; d < x.size(); ++d) {
      const std::int64_t e = (*size)[d] < 0 ? kEnd : (*off)[d] + (*size)[d];
      s.push_back(extent(d, (*off)[d], e, 1));
    }
    return one(s, c.dt[0]);
  }
  if (t == "Narrow") {
    const auto len = c.int_attr({"length"});
    if (!len) return std::nullopt;
    Shape s = x;
    s[c.axis(c.int_attr({"dim", "axis"}).value_or(0), x.size(), "dim")] = lit(*len);
    return one(s, c.dt[0]);
  }
  if (t == "Gather_Slice") return std::nullopt;
  const auto begin = c.ints({"begin", "starts"});
  const auto end = c.ints({"end", "ends"});
  if (!begin || !end) return std::nullopt;
  if (c.int_attr({"ellipsis_mask"}).value_or(0) != 0 ||
      c.int_attr({"new_axis_mask"}).value_or(0) != 0) {
    return std::nullopt;
  }
  std::vector<std::int64_t> strides = c.ints({"strides", "steps"}).value_or(
      std::vector<std::int64_t>(begin->size(), 1));
  if (begin->size() != end->size() || strides.size() != begin->size() || begin->size() > x.size()) {
    c.fail(fmt::format("begin, end and strides need the same count, at most the rank {}",
                       x.size()));
  }
  const std::int64_t bm = c.int_attr({"begin_mask"}).value_or(0);
  const std::int64_t em = c.int_attr({"end_mask"}).value_or(0);
  const std::int64_t sm = c.int_attr({"shrink_axis_mask"}).value_or(0);
  Shape s;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (d >= begin->size()) {
      s.push_back(x[d]);
      continue;
    }
    const auto bit = std::int64_t{1} << d;
    if (sm & bit) continue;
    const std::int64_t b = (bm & bit) ? 0 : (*begin)[d];
    const std::int64_t e = (em & bit) ? kEnd : (*end)[d];
    s.push_back(extent(d, b, e, strides[d]));
  }
  return one(s, c.dt[0]);
}

namespace {
Result reshape(const Ctx& c) {
  const Shape& x = c.input(0);
  const auto v = c.attr({"shape"});
  if (!v) return std::nullopt;
  Shape s;
  std::optional<std::size_t> infer;
  std::string_view text = trim_blanks(*v);
  if (!text.empty() && text.front() == '[') text = text.substr(1, text.size() - 2);
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size() && !trim_blanks(text).empty(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string_view item = trim_blanks(text.substr(start, i - start));
    start = i + 1;
    if (item == "-1") {
      if (infer) c.fail("shape has more than one -1");
      infer = s.size();
      s.push_back(lit(1));
      continue;
    }
    if (item == "0" && s.size() < x.size()) {  // 0 copies the input's dimension (ONNX)
      s.push_back(x[s.size()]);
      continue;
    }
    const auto t = parse_dim_template(item);
    if (!t || t->k <= 0) c.fail(fmt::format("attribute shape = '{}': dimension '{}'", *v, item));
    s.push_back(Dim{t->k, t->batch ? 1 : 0});
  }
  const Dim total = product(c, x);
  const Dim known = product(c, s);
  if (infer) {
    if (total.b < known.b || known.k == 0 || total.k % known.k != 0) {
      c.fail(fmt::format("cannot reshape '{}' to '{}'", shape_text(x), *v));
    }
    s[*infer] = Dim{total.k / known.k, total.b - known.b};
  } else if (!same(total, known)) {
    c.fail(fmt::format("'{}' and '{}' hold different element counts", shape_text(x), *v));
  }
  return one(checked(c, s), c.dt[0]);
}

}  // namespace

Result copy(const Ctx& c) {
  const std::string& t = c.op.type;
  if (t == "Reshape") return reshape(c);
  if (one_of(t, {"AsStrided", "MemSet"})) return std::nullopt;
  const Shape& x = c.input(0);
  if (t == "Squeeze") {
    Shape s;
    const auto axes = c.ints({"axis", "axes", "dim"});
    std::vector<std::size_t> drop;
    if (axes) {
      for (const std::int64_t a : *axes) {
        const std::size_t d = c.axis(a, x.size(), "axis");
        if (!is_one(x[d])) c.fail(fmt::format("axis {} is {}, not 1", d, dim_text(x[d])));
        drop.push_back(d);
      }
    }
    for (std::size_t d = 0; d < x.size(); ++d) {
      const bool gone = axes ? std::find(drop.begin(), drop.end(), d) != drop.end() : is_one(x[d]);
      if (!gone) s.push_back(x[d]);
    }
    return one(s, c.dt[0]);
  }
  if (one_of(t, {"Unsqueeze", "ExpandDims"})) {
    const auto axes = c.ints({"axes", "axis", "dim"});
    if (!axes) return std::nullopt;
    Shape s = x;
    std::vector<std::size_t> at;
    const std::size_t rank = x.size() + axes->size();
    for (const std::int64_t a : *axes) at.push_back(c.axis(a, rank, "axis"));
    std::sort(at.begin(), at.end());
    for (const std::size_t a : at) s.insert(s.begin() + static_cast<std::ptrdiff_t>(a), lit(1));
    return one(s, c.dt[0]);
  }
  if (t == "Flatten") {
    const std::size_t a = x.empty() ? 0 : c.axis(c.int_attr({"axis"}).value_or(1), x.size() + 1, "axis");
    return one(checked(c, {product(c, x, 0, a), product(c, x, a)}), c.dt[0]);
  }
  return one(x, c.dt[0]);  // TensorMove, ViewCopy, Contiguous, Assign, MemcpyAsync
}

Result split(const Ctx& c) {
  const std::string& t = c.op.type;
  // Split (TF) takes its axis as the first input; SplitV as the last.
  const std::size_t xi = (t == "Split" && c.in.size() == 2 && one_element_int(c.in[0], c.dt[0])) ? 1 : 0;
  const Shape& x = c.input(xi);
  if (one_of(t, {"Unpack", "Unstack"})) {
    const std::size_t a = c.axis(c.int_attr({"axis"}).value_or(0), x.size(), "axis");
    if (x[a].b != 0) c.fail("unpacking the batch axis gives B outputs: not a fixed count");
    Shape s = x;
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(a));
    return Out{std::vector<Shape>(static_cast<std::size_t>(x[a].k), s),
               std::vector<std::string>(static_cast<std::size_t>(x[a].k), c.dt[xi]), true, {}};
  }
  const std::size_t a =
      c.axis(c.int_attr({"split_dim", "axis", "dim"}).value_or(0), x.size(), "split_dim");
  Out o;
  if (const auto sizes = c.ints({"size_splits", "split"})) {
    std::int64_t sum = 0;
    std::optional<std::size_t> rest;
    for (std::size_t k = 0; k < sizes->size(); ++k) {
      if ((*sizes)[k] == -1 && !rest) {
        rest = k;
      } else {
        sum += (*sizes)[k];
      }
    }
    if (x[a].b != 0) c.fail("size_splits on the batch axis: not of the form k or k*B");
    for (std::size_t k = 0; k < sizes->size(); ++k) {
      Shape s = x;
      s[a] = lit(rest && *rest == k ? x[a].k - sum : (*sizes)[k]);
      if (s[a].k <= 0) c.fail(fmt::format("size_splits '{}' do not fit axis {} ({})", k, a, x[a].k));
      o.shapes.push_back(s);
      o.dtypes.push_back(c.dt[xi]);
    }
    if (!rest && sum != x[a].k) c.fail(fmt::format("size_splits sum to {}, axis {} is {}", sum, a, x[a].k));
    return o;
  }
  const auto n = c.int_attr({"num_split", "chunks", "num_outputs"});
  if (!n) return std::nullopt;
  if (*n < 1 || x[a].k % *n != 0) {
    c.fail(fmt::format("axis {} ({}) does not split into {} equal parts", a, dim_text(x[a]), *n));
  }
  Shape s = x;
  s[a].k /= *n;
  return Out{std::vector<Shape>(static_cast<std::size_t>(*n), s),
             std::vector<std::string>(static_cast<std::size_t>(*n), c.dt[xi]), true, {}};
}

// paddings: before/after pairs per axis ("0,0,1,1" pads axis 1 by one on each side).
Result pad(const Ctx& c) {
  const Shape& x = c.input(0);
  const auto p = c.ints({"paddings", "pads"});
  if (!p) return std::nullopt;
  if (p->size() != 2 * x.size()) {
    c.fail(fmt::format("paddings needs {} values (before, after per axis), got {}", 2 * x.size(),
                       p->size()));
  }
  Shape s = x;
  for (std::size_t d = 0; d < x.size(); ++d) {
    const std::int64_t extra = (*p)[2 * d] + (*p)[2 * d + 1];
    if (extra == 0) continue;
    if (x[d].b != 0) c.fail(fmt::format("padding the batch axis {}: not of the form k or k*B", d));
    s[d] = lit(x[d].k + extra);
    if (s[d].k <= 0) c.fail(fmt::format("axis {} padded to {}", d, s[d].k));
  }
  return one(s, c.dt[0]);
}

// Gather(params, indices[, axis]) with `axis` and `batch_dims`: params[:axis] +
// indices[batch_dims:] + params[axis+1:].

}  // namespace npusim::shape_rules
