#include "model/passes/pass_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "model/op_table.h"
#include "model/text.h"

namespace npusim::passes {

std::vector<std::string> split(std::string_view s, char sep) { return split_trimmed(s, sep); }

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

Dims dims_of(const std::string& shape) { return shape.empty() ? Dims{} : split(shape, ','); }
std::string shape_of(const Dims& d) { return join(d, ","); }

std::vector<std::string> shapes_of(const std::string& list) {
  return list.empty() ? std::vector<std::string>{} : split(list, ';');
}

std::vector<std::string> dtypes_of(const std::string& list, std::size_t tensors) {
  std::vector<std::string> d = list.empty() ? std::vector<std::string>{} : split(list, ';');
  if (d.size() == 1 && tensors > 1) d.assign(tensors, d.front());
  return d;
}

std::optional<std::int64_t> as_int(const std::string& s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<DimTerm> dim_term(const std::string& d) {
  const auto t = parse_dim_template(d);  // the graph's own dimension grammar
  if (!t) return std::nullopt;
  return DimTerm{t->k, t->batch ? 1 : 0};
}
std::string dim_text(const DimTerm& t) {
  if (t.b == 0) return std::to_string(t.k);
  return t.k == 1 ? std::string("B") : fmt::format("B*{}", t.k);
}
std::optional<std::string> dim_product(const std::vector<std::string>& dims) {
  DimTerm p;
  for (const std::string& d : dims) {
    const auto t = dim_term(d);
    if (!t || (p.b + t->b) > 1 || t->k <= 0) return std::nullopt;
    if (p.k > std::numeric_limits<std::int32_t>::max() / std::max<std::int64_t>(t->k, 1)) {
      return std::nullopt;
    }
    p.k *= t->k;
    p.b += t->b;
  }
  return dim_text(p);
}
std::optional<std::string> dim_ratio(const std::string& in, const std::string& out) {
  if (same_shape_template(in, out)) return std::string("1");
  const auto ti = dim_term(in);
  const auto to = dim_term(out);
  if (!ti || !to || to->b < ti->b || to->k % ti->k != 0) return std::nullopt;
  return dim_text(DimTerm{to->k / ti->k, to->b - ti->b});
}
bool is_one(const std::string& d) { return d == "1"; }
bool one_element(const std::string& shape) {
  const Dims d = dims_of(shape);
  return std::all_of(d.begin(), d.end(), is_one);
}

bool type_in(const std::string& type, std::initializer_list<std::string_view> types) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::optional<std::string_view> text_attr(const OpText& t, std::string_view key) {
  for (const auto& [k, v] : t.attrs) {
    if (k == key) return v;
  }
  return std::nullopt;
}
void set_attr(OpText& t, const std::string& key, const std::string& value) {
  for (auto& [k, v] : t.attrs) {
    if (k == key) {
      v = value;
      return;
    }
  }
  t.attrs.emplace_back(key, value);
}
void erase_attrs(OpText& t, std::initializer_list<std::string_view> keys) {
  t.attrs.erase(std::remove_if(t.attrs.begin(), t.attrs.end(),
                               [&](const auto& kv) {
                                 return std::find(keys.begin(), keys.end(), kv.first) != keys.end();
                               }),
                t.attrs.end());
}

bool transposed(const OpText& t) {
  for (const char* k : {"adj_x1", "adj_x2", "transpose_a", "transpose_b", "transpose_x1",
                        "transpose_x2", "adj_x", "adj_y"}) {
    const auto v = text_attr(t, k);
    if (v && (*v == "true" || *v == "1" || *v == "True")) return true;
  }
  return false;
}

Placement placement_of(const Graph& g, std::size_t i) {
  const OpDesc d = g.instantiate(i, 1);
  return d.placement.value_or(d.kind->placement);
}

std::string output_ref(const std::string& name, std::size_t k) {
  return k == 0 ? name : fmt::format("{}:{}", name, k);
}

// ---- Work -------------------------------------------------------------------------------------

Work::Work(const Graph& g) : g_(g), ops_(g.ops()), removed_(g.size(), false) {
  const std::size_t n = ops_.size();
  in_shapes_.resize(n);
  in_dtypes_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    GraphOp& op = ops_[i];
    const OpText& r = g.resolved(i);
    const std::size_t m = g.input_count(i);
    in_shapes_[i] = m == 1 && r.input_shapes.empty() ? std::vector<std::string>{""}
                                                     : shapes_of(r.input_shapes);
    in_dtypes_[i] = dtypes_of(r.input_dtypes, m);
    in_shapes_[i].resize(m);
    in_dtypes_[i].resize(m);
    if (!op.after) {
      op.after = (i == 0 || op.inputs) ? std::vector<std::string>{}
                                       : std::vector<std::string>{ops_[i - 1].text.name};
    }
    op.lenient = op.lenient || !op.inputs;  // recovered edges: judged as the file was
    std::vector<std::string> refs;
    bool unconnected = false;
    for (std::size_t j = 0; j < m; ++j) {
      refs.push_back(g.source_ref(i, j));
      unconnected = unconnected || refs.back().empty();
    }
    op.inputs = refs;
    // `after` keeps pure ordering: what the edges already wait for is dropped from it.
    std::vector<std::string> pure;
    for (const std::string& a : *op.after) {
      bool producer = false;
      for (std::size_t j = 0; j < m; ++j) {
        const TensorSource& s = g.source(i, j);
        producer = producer || (s.kind == TensorSource::Kind::kOp && ops_[s.index].text.name == a);
      }
      if (!producer) pure.push_back(a);
    }
    op.after = std::move(pure);
    // Written shapes stay when something reads no edge or a view; otherwise the edges say it.
    bool view = false;
    for (std::size_t j = 0; j < m && !unconnected; ++j) {
      const TensorSource& s = g.source(i, j);
      if (s.kind != TensorSource::Kind::kOp) continue;
      const std::vector<std::string> po = shapes_of(g.resolved(s.index).output_shapes);
      view = view || s.output >= po.size() || !same_shape_template(po[s.output], in_shapes_[i][j]);
    }
    if (unconnected || view) {
      op.text.input_shapes = r.input_shapes;
      op.text.input_dtypes = r.input_dtypes;
      op.shapes_declared = true;
      op.dtypes_declared = true;
    } else {
      op.text.input_shapes.clear();
      op.text.input_dtypes.clear();
      op.shapes_declared = false;
      op.dtypes_declared = false;
    }
  }
}

std::optional<std::size_t> Work::find(std::string_view name) const {
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (!removed_[i] && ops_[i].text.name == name) return i;
  }
  return std::nullopt;
}

std::vector<std::pair<std::size_t, std::size_t>> Work::readers(const std::string& ref) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (removed_[i]) continue;
    const auto& in = *ops_[i].inputs;
    for (std::size_t j = 0; j < in.size(); ++j) {
      if (in[j] == ref) out.emplace_back(i, j);
    }
  }
  return out;
}

std::vector<std::size_t> Work::dependents(std::size_t i) const {
  std::vector<std::size_t> out;
  const std::string& name = ops_[i].text.name;
  const std::string prefix = name + ":";
  for (std::size_t j = 0; j < ops_.size(); ++j) {
    if (removed_[j] || j == i) continue;
    const auto& a = *ops_[j].after;
    bool uses = std::find(a.begin(), a.end(), name) != a.end();
    for (const std::string& r : *ops_[j].inputs) {
      uses = uses || r == name || (r.rfind(prefix, 0) == 0 && !find(r));
    }
    if (uses) out.push_back(j);
  }
  return out;
}

std::string Work::fresh_name(const std::string& base) const {
  auto used = [&](const std::string& n) {
    if (find(n) || taken_.count(n)) return true;
    const auto& ins = g_.graph_inputs();
    return std::any_of(ins.begin(), ins.end(), [&](const GraphInput& x) { return x.name == n; });
  };
  std::string n = base;
  for (int k = 2; used(n); ++k) n = fmt::format("{}_{}", base, k);
  return n;
}

void Work::pin_shapes(std::size_t i) {
  GraphOp& op = ops_[i];
  if (op.shapes_declared && op.dtypes_declared) return;
  const bool scalar_only = in_shapes_[i].size() == 1 && in_shapes_[i][0].empty();
  op.text.input_shapes = scalar_only ? std::string() : join(in_shapes_[i], ";");
  op.text.input_dtypes = join(in_dtypes_[i], ";");
  op.shapes_declared = true;
  op.dtypes_declared = true;
}

void Work::set_input(std::size_t i, std::size_t j, const std::string& ref, const std::string& shape,
                     const std::string& dtype) {
  if (ref.empty()) pin_shapes(i);
  GraphOp& op = ops_[i];
  (*op.inputs).at(j) = ref;
  in_shapes_[i].at(j) = shape;
  in_dtypes_[i].at(j) = dtype;
  if (op.shapes_declared) {
    const bool scalar_only = in_shapes_[i].size() == 1 && in_shapes_[i][0].empty();
    op.text.input_shapes = scalar_only ? std::string() : join(in_shapes_[i], ";");
    op.text.input_dtypes = join(in_dtypes_[i], ";");
  }
}

void Work::redirect(const std::string& from, const std::string& to) {
  for (const auto& [i, j] : readers(from)) (*ops_[i].inputs)[j] = to;
}

void Work::replace_dep(std::size_t j, const std::string& old, const std::vector<std::string>& repl) {
  std::vector<std::string> out;
  for (const std::string& a : *ops_[j].after) {
    const std::vector<std::string> with = a == old ? repl : std::vector<std::string>{a};
    for (const std::string& w : with) {
      if (w != ops_[j].text.name && std::find(out.begin(), out.end(), w) == out.end()) {
        out.push_back(w);
      }
    }
  }
  ops_[j].after = std::move(out);
}

void Work::move_to_front(std::size_t i) {
  GraphOp op = ops_[i];
  removed_[i] = true;
  taken_.insert(op.text.name);
  pending_.emplace_back(0, std::move(op));  // pending ops at one index keep their order
}

void Work::remove(std::size_t i, std::optional<std::vector<std::string>> instead) {
  // What op i waited for: its `after` and the producers of its inputs.
  std::vector<std::string> deps = *ops_[i].after;
  if (instead) deps.clear();
  for (std::size_t j = 0; j < g_.input_count(i) && j < ops_[i].inputs->size(); ++j) {
    const std::string& r = (*ops_[i].inputs)[j];
    if (r.empty() || instead) continue;
    const std::size_t colon = r.rfind(':');
    if (find(r)) {
      deps.push_back(r);
    } else if (colon != std::string::npos && find(r.substr(0, colon))) {
      deps.push_back(r.substr(0, colon));
    }
  }
  if (instead) deps = *instead;
  removed_[i] = true;
  for (std::size_t c = 0; c < ops_.size(); ++c) {
    if (!removed_[c]) replace_dep(c, ops_[i].text.name, deps);
  }
}

void Work::insert(std::size_t before, GraphOp op) {
  if (!op.after) op.after = std::vector<std::string>{};
  if (!op.inputs) op.inputs = std::vector<std::string>{};
  taken_.insert(op.text.name);
  pending_.emplace_back(before, std::move(op));
}

Graph Work::build() {
  std::vector<GraphOp> out;
  for (std::size_t i = 0; i <= ops_.size(); ++i) {
    for (auto& [at, op] : pending_) {
      if (at == i) out.push_back(std::move(op));
    }
    if (i < ops_.size() && !removed_[i]) out.push_back(std::move(ops_[i]));
  }
  return Graph::build(g_.name(), std::move(out), g_.graph_inputs());
}

GraphOp derived_op(const GraphOp& from, std::string name, std::string type,
                   std::vector<std::string> inputs) {
  GraphOp op;
  op.pos = from.pos;
  op.after_pos = from.pos;
  op.shapes_pos = from.shapes_pos;
  op.inputs_pos = from.pos;
  op.output_shapes_pos = from.pos;
  op.stream = from.stream;
  op.text.name = std::move(name);
  op.text.type = std::move(type);
  op.inputs = std::move(inputs);
  op.after = std::vector<std::string>{};
  op.shapes_declared = false;
  op.dtypes_declared = false;
  return op;
}

PassResult finish(Work& w, std::vector<GraphChange> changes) {
  if (changes.empty()) return {w.input(), {}};
  return {w.build(), std::move(changes)};
}

}  // namespace npusim::passes
