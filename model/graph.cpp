#include "model/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <utility>

#include "model/shape_infer.h"
#include "model/shape_template.h"
#include "model/text.h"

namespace npusim {

namespace {

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ";" : "") + items[i];
  return out;
}

// A dtype in its canonical spelling (so DT_FLOAT16 and FLOAT16 compare equal).
std::string canon_dtype(std::string_view d) {
  const auto p = parse_dtype(trim_blanks(d));
  return p ? std::string(dtype_name(*p)) : std::string(trim_blanks(d));
}

// The tensors of a declared shape/dtype pair as make_op reads them: "" with one dtype is one
// scalar, "" with none is no tensor, one dtype applies to every shape.
struct Declared {
  std::vector<std::string> shapes;
  std::vector<std::string> dtypes;  // empty when the dtypes do not match the shapes in count
};
Declared declared_tensors(const std::string& shapes, const std::string& dtypes) {
  Declared d;
  const bool no_shapes = trim_blanks(shapes).empty();
  const std::vector<std::string> dt =
      trim_blanks(dtypes).empty() ? std::vector<std::string>{} : split_trimmed(dtypes, ';');
  if (no_shapes) {
    if (dt.size() == 1) d = {{""}, {canon_dtype(dt[0])}};
    return d;
  }
  d.shapes = split_trimmed(shapes, ';');
  if (dt.size() == 1) {
    d.dtypes.assign(d.shapes.size(), canon_dtype(dt[0]));
  } else if (dt.size() == d.shapes.size()) {
    for (const std::string& x : dt) d.dtypes.push_back(canon_dtype(x));
  }
  return d;
}

// The element count of a shape template as k * B^e; nullopt when a dimension is not a template.
std::optional<std::pair<std::int64_t, int>> element_count(std::string_view shape) {
  std::int64_t k = 1;
  int e = 0;
  shape = trim_blanks(shape);
  if (shape.empty()) return std::pair{k, e};
  std::size_t start = 0;
  for (std::size_t i = 0; i <= shape.size(); ++i) {
    if (i < shape.size() && shape[i] != ',') continue;
    const auto t = parse_dim_template(shape.substr(start, i - start));
    if (!t || t->k <= 0 || k > std::numeric_limits<std::int64_t>::max() / t->k) return std::nullopt;
    k *= t->k;
    e += t->batch ? 1 : 0;
    start = i + 1;
  }
  return std::pair{k, e};
}

// A declared input shape may be a view of the tensor its edge carries: the same elements in
// another shape (a Reshape / Squeeze / Unsqueeze of an ND tensor, which launches no kernel).
bool is_view(std::string_view declared, std::string_view edge) {
  const auto a = element_count(declared);
  const auto b = element_count(edge);
  return a && b && *a == *b;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

Graph Graph::build(std::string name, std::vector<GraphOp> ops, std::vector<GraphInput> inputs) {
  Graph g;
  g.name_ = std::move(name);
  g.ops_ = std::move(ops);
  g.inputs_ = std::move(inputs);
  const std::size_t n = g.ops_.size();
  g.dag_ = GraphDag(n);
  g.batch_dependent_.resize(n);

  std::unordered_map<std::string, std::size_t> by_name;
  std::unordered_map<std::string, std::size_t> input_by_name;
  for (std::size_t k = 0; k < g.inputs_.size(); ++k) {
    const GraphInput& in = g.inputs_[k];
    if (in.name.empty()) throw InputError(in.pos, "graph input: 'name' must not be empty");
    if (!input_by_name.emplace(in.name, k).second) {
      throw InputError(in.pos, fmt::format("graph input '{}': duplicate name", in.name));
    }
    // The tensor must read as a shape and a dtype at any batch size.
    (void)parse_shape_list(substitute_batch(in.shape, 1, in.pos), in.pos);
    if (!parse_dtype(trim_blanks(in.dtype))) {
      (void)parse_dtype_list(in.dtype, in.pos);  // throws with the accepted spellings
      throw InputError(in.pos, fmt::format("graph input '{}': 'dtype' must not be empty", in.name));
    }
    (void)parse_format_list(in.format, in.pos);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const GraphOp& op = g.ops_[i];
    if (op.text.name.empty()) throw InputError(op.pos, "graph op: 'name' must not be empty");
    const auto [it, fresh] = by_name.emplace(op.text.name, i);
    if (!fresh) {
      throw InputError(op.pos, fmt::format("graph op '{}': duplicate name (first defined at "
                                           "line {})",
                                           op.text.name, g.ops_[it->second].pos.line));
    }
    if (const auto in = input_by_name.find(op.text.name); in != input_by_name.end()) {
      throw InputError(op.pos, fmt::format("graph op '{}': a graph input has the same name "
                                           "(line {})",
                                           op.text.name, g.inputs_[in->second].pos.line));
    }
  }

  // Tensor edges written in `inputs`.
  g.sources_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const GraphOp& op = g.ops_[i];
    if (!op.inputs) continue;
    for (std::size_t j = 0; j < op.inputs->size(); ++j) {
      const std::string ref(trim_blanks((*op.inputs)[j]));
      TensorSource src;
      if (ref.empty()) {
        src.kind = TensorSource::Kind::kNone;
      } else if (auto o = by_name.find(ref); o != by_name.end()) {
        src = {TensorSource::Kind::kOp, o->second, 0, false};
      } else if (auto in = input_by_name.find(ref); in != input_by_name.end()) {
        src = {TensorSource::Kind::kGraphInput, in->second, 0, false};
      } else {
        const std::size_t colon = ref.rfind(':');
        const auto p = colon == std::string::npos ? by_name.end() : by_name.find(ref.substr(0, colon));
        std::int64_t k = 0;
        if (p == by_name.end() || !all_digits(ref.substr(colon + 1)) ||
            !parse_int64(ref.substr(colon + 1), k)) {
          throw InputError(op.inputs_pos,
                           fmt::format("graph op '{}': input {} names '{}', which is neither an "
                                       "op, an op's output ('op:k') nor a graph input",
                                       op.text.name, j, ref));
        }
        src = {TensorSource::Kind::kOp, p->second, static_cast<std::size_t>(k), false};
      }
      if (src.kind == TensorSource::Kind::kOp && src.index == i) {
        throw InputError(op.inputs_pos, fmt::format("graph op '{}': input {} reads the op's own "
                                                    "output",
                                                    op.text.name, j));
      }
      g.sources_[i].push_back(src);
    }
  }

  for (std::size_t i = 0; i < n; ++i) {
    const GraphOp& op = g.ops_[i];
    for (const TensorSource& s : g.sources_[i]) {
      if (s.kind == TensorSource::Kind::kOp && !boost::edge(s.index, i, g.dag_).second) {
        boost::add_edge(s.index, i, g.dag_);
      }
    }
    if (!op.after.has_value()) {
      if (i > 0 && !op.inputs && !boost::edge(i - 1, i, g.dag_).second) {
        boost::add_edge(i - 1, i, g.dag_);
      }
      continue;
    }
    for (const std::string& dep : *op.after) {
      const auto it = by_name.find(dep);
      if (it == by_name.end()) {
        throw InputError(op.after_pos, fmt::format("graph op '{}': 'after' names unknown op '{}'",
                                                   op.text.name, dep));
      }
      if (it->second == i) {
        throw InputError(op.after_pos,
                         fmt::format("graph op '{}': 'after' names the op itself", dep));
      }
      if (!boost::edge(it->second, i, g.dag_).second) boost::add_edge(it->second, i, g.dag_);
    }
  }

  // Kahn's algorithm with the smallest ready index first: a deterministic topological order
  // that keeps file order wherever the dependencies allow it.
  std::vector<std::size_t> indegree(n);
  for (std::size_t v = 0; v < n; ++v) indegree[v] = boost::in_degree(v, g.dag_);
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(v);
  }
  while (!ready.empty()) {
    const std::size_t v = ready.top();
    ready.pop();
    g.topo_.push_back(v);
    for (auto [e, end] = boost::out_edges(v, g.dag_); e != end; ++e) {
      const std::size_t w = boost::target(*e, g.dag_);
      if (--indegree[w] == 0) ready.push(w);
    }
  }
  if (g.topo_.size() != n) {
    // Every op left has a predecessor that is also left; walking predecessors n times from any
    // of them ends on a cycle, which is then read off in dependency order.
    std::size_t v = 0;
    while (indegree[v] == 0) ++v;
    auto left_pred = [&](std::size_t x) {
      for (auto [e, end] = boost::in_edges(x, g.dag_); e != end; ++e) {
        const std::size_t u = boost::source(*e, g.dag_);
        if (indegree[u] > 0) return u;
      }
      return x;  // unreachable: x is left only because a predecessor is left
    };
    for (std::size_t step = 0; step < n; ++step) v = left_pred(v);
    std::vector<std::size_t> cycle{v};
    for (std::size_t u = left_pred(v); u != v; u = left_pred(u)) cycle.push_back(u);
    std::reverse(cycle.begin(), cycle.end());
    // Report at an op whose `inputs` or `after` is written out when there is one: that is the
    // line to edit.
    const auto written = std::find_if(cycle.begin(), cycle.end(), [&](std::size_t c) {
      return g.ops_[c].after.has_value() || g.ops_[c].inputs.has_value();
    });
    if (written != cycle.end()) std::rotate(cycle.begin(), written, cycle.end());
    std::string path;
    for (const std::size_t c : cycle) path += g.ops_[c].text.name + " -> ";
    path += g.ops_[cycle.front()].text.name;
    const GraphOp& at = g.ops_[cycle.front()];
    // The edge into the reported op comes from the last op of the path.
    const std::size_t from = cycle.back();
    const bool via_input = std::any_of(
        g.sources_[cycle.front()].begin(), g.sources_[cycle.front()].end(),
        [&](const TensorSource& s) { return s.kind == TensorSource::Kind::kOp && s.index == from; });
    throw InputError(via_input ? at.inputs_pos : at.after_pos,
                     fmt::format("graph op '{}' is on a dependency cycle: {}", at.text.name, path));
  }

  g.resolved_.resize(n);
  g.outputs_known_.assign(n, false);
  g.outputs_from_.assign(n, OutputsFrom::kUnknown);
  g.outputs_note_.resize(n);
  g.out_shapes_.resize(n);
  g.out_dtypes_.resize(n);
  for (const std::size_t v : g.topo_) g.resolve(v);

  for (std::size_t i = 0; i < n; ++i) {
    const OpText& t = g.resolved_[i];
    g.batch_dependent_[i] = mentions_batch(t.input_shapes) || mentions_batch(t.output_shapes);
    // Validate once at load, so a run never meets a malformed op halfway through.
    (void)g.instantiate(i, 1);
  }
  return g;
}

void Graph::resolve(std::size_t i) {
  const GraphOp& op = ops_[i];
  OpText t = op.text;
  const Declared decl = declared_tensors(op.shapes_declared ? op.text.input_shapes : std::string(),
                                         op.dtypes_declared ? op.text.input_dtypes : std::string());
  std::vector<std::string> shapes;
  std::vector<std::string> dtypes;
  if (op.inputs) {
    const std::size_t n = sources_[i].size();
    if (op.shapes_declared && decl.shapes.size() != n) {
      throw InputError(op.shapes_pos, fmt::format("graph op '{}': 'shapes' lists {} tensors but "
                                                  "'inputs' {}",
                                                  op.text.name, decl.shapes.size(), n));
    }
    if (op.dtypes_declared && decl.dtypes.size() != n) {
      throw InputError(op.pos, fmt::format("graph op '{}': 'dtypes' gives {} dtypes for {} "
                                           "inputs; give one per input (or one for all)",
                                           op.text.name, split_trimmed(op.text.input_dtypes, ';').size(), n));
    }
    for (std::size_t j = 0; j < n; ++j) {
      const TensorSource& s = sources_[i][j];
      const std::string ref = source_ref(i, j);
      std::optional<std::string> shape;
      std::optional<std::string> dtype;
      if (s.kind == TensorSource::Kind::kOp) {
        const GraphOp& p = ops_[s.index];
        if (outputs_known_[s.index]) {
          if (s.output >= out_shapes_[s.index].size()) {
            throw InputError(op.inputs_pos,
                             fmt::format("graph op '{}': input {} reads '{}', but '{}' has {} "
                                         "output{}",
                                         op.text.name, j, ref, p.text.name,
                                         out_shapes_[s.index].size(),
                                         out_shapes_[s.index].size() == 1 ? "" : "s"));
          }
          shape = out_shapes_[s.index][s.output];
          dtype = out_dtypes_[s.index][s.output];
        }
      } else if (s.kind == TensorSource::Kind::kGraphInput) {
        shape = std::string(trim_blanks(inputs_[s.index].shape));
        dtype = canon_dtype(inputs_[s.index].dtype);
      }
      if (!shape && !op.shapes_declared) {
        throw InputError(
            op.inputs_pos,
            s.kind == TensorSource::Kind::kNone
                ? fmt::format("graph op '{}': input {} has no edge (\"\") and the op declares no "
                              "'shapes' for it",
                              op.text.name, j)
                : fmt::format("graph op '{}': input {} reads '{}', whose shape is unknown (no "
                              "shape rule for {} '{}'); declare its output_shapes and "
                              "output_dtypes, or this op's shapes and dtypes",
                              op.text.name, j, ref, ops_[s.index].text.type,
                              ops_[s.index].text.name));
      }
      if (!dtype && !op.dtypes_declared) {
        throw InputError(op.inputs_pos, fmt::format("graph op '{}': input {} has no known dtype; "
                                                    "declare 'dtypes'",
                                                    op.text.name, j));
      }
      if (shape && op.shapes_declared && !same_shape_template(*shape, decl.shapes[j]) &&
          !is_view(decl.shapes[j], *shape)) {
        throw InputError(op.shapes_pos,
                         fmt::format("graph op '{}': input {} is declared '{}' but '{}' is '{}' "
                                     "(a different element count, so not a view of it)",
                                     op.text.name, j, decl.shapes[j], ref, *shape));
      }
      if (dtype && op.dtypes_declared && *dtype != decl.dtypes[j]) {
        throw InputError(op.pos,
                         fmt::format("graph op '{}': input {} is declared {} but '{}' is {}",
                                     op.text.name, j, decl.dtypes[j], ref, *dtype));
      }
      shapes.push_back(op.shapes_declared ? decl.shapes[j] : *shape);
      dtypes.push_back(op.dtypes_declared ? decl.dtypes[j] : *dtype);
    }
  } else {
    shapes = decl.shapes;
    dtypes = decl.dtypes;
    // Recover edges: input j comes from the one output among the `after` ops with its shape
    // template and dtype.
    std::vector<std::size_t> deps;
    if (op.after) {
      for (const std::string& a : *op.after) {
        for (std::size_t p = 0; p < ops_.size(); ++p) {
          if (ops_[p].text.name == a) deps.push_back(p);
        }
      }
    } else if (i > 0) {
      deps.push_back(i - 1);
    }
    sources_[i].assign(shapes.size(), TensorSource{});
    for (std::size_t j = 0; j < shapes.size() && dtypes.size() == shapes.size(); ++j) {
      std::optional<TensorSource> found;
      bool ambiguous = false;
      for (const std::size_t p : deps) {
        if (!outputs_known_[p]) continue;
        for (std::size_t k = 0; k < out_shapes_[p].size(); ++k) {
          if (!same_shape_template(out_shapes_[p][k], shapes[j]) || out_dtypes_[p][k] != dtypes[j]) {
            continue;
          }
          ambiguous = ambiguous || found.has_value();
          found = TensorSource{TensorSource::Kind::kOp, p, k, true};
        }
      }
      if (found && !ambiguous) sources_[i][j] = *found;
    }
  }
  if (op.inputs) {  // an old-style op keeps its text as written (make_op judges it)
    t.input_shapes = join_list(shapes);
    t.input_dtypes = join_list(dtypes);
    if (shapes.size() == 1 && shapes[0].empty()) t.input_shapes.clear();
  }

  // Outputs: declared, else inferred; both: they must agree.
  const Declared out = declared_tensors(op.text.output_shapes, op.text.output_dtypes);
  const bool declared = !trim_blanks(op.text.output_shapes).empty() && !out.dtypes.empty();
  std::optional<InferredOutputs> inferred;
  if (shapes.size() == dtypes.size()) {
    if (op.inputs && !op.lenient) {
      inferred = infer_output_templates(t, shapes, dtypes, op.pos);
    } else {
      // An old-style op (a hand-written file of before, a graph from a profile, whose shapes may
      // be physical layouts and whose attributes are often missing) loads as it always did: a
      // rule that cannot make sense of it infers nothing, and its declared outputs win.
      try {
        inferred = infer_output_templates(t, shapes, dtypes, op.pos);
      } catch (const InputError&) {
        inferred.reset();
      }
    }
  }
  if (declared) {
    if (inferred && op.inputs && !op.lenient) {
      // The outputs both name are compared (a rule may know only the first of several).
      std::string why;
      for (std::size_t k = 0; k < std::min(out.shapes.size(), inferred->shapes.size()) && why.empty();
           ++k) {
        if (inferred->exact && !same_shape_template(out.shapes[k], inferred->shapes[k])) {
          why = fmt::format("output {} is declared '{}' but inferred '{}'", k, out.shapes[k],
                            inferred->shapes[k]);
        }
      }
      if (!why.empty()) {
        throw InputError(op.output_shapes_pos,
                         fmt::format("graph op '{}' ({}): {}{}", op.text.name, op.text.type, why,
                                     inferred->note.empty() ? "" : " (" + inferred->note + ")"));
      }
    }
    out_shapes_[i] = out.shapes;
    out_dtypes_[i] = out.dtypes;
    outputs_known_[i] = true;
    outputs_from_[i] = OutputsFrom::kDeclared;
    if (inferred) outputs_note_[i] = inferred->note;
  } else if (inferred) {
    outputs_from_[i] = inferred->exact ? OutputsFrom::kInferred : OutputsFrom::kUpperBound;
    outputs_note_[i] = inferred->note;
    out_shapes_[i] = inferred->shapes;
    out_dtypes_[i] = inferred->dtypes;
    outputs_known_[i] = true;
    // An op the file gave no output dtype keeps make_op's own inference when its outputs are a
    // single scalar: an output list cannot spell one scalar.
    if (!(out_shapes_[i].size() == 1 && out_shapes_[i][0].empty())) {
      t.output_shapes = join_list(out_shapes_[i]);
      t.output_dtypes = join_list(out_dtypes_[i]);
    }
  }
  resolved_[i] = std::move(t);
}

std::string describe_shapes(const Graph& graph) {
  std::string out;
  for (const std::size_t i : graph.topo_order()) {
    const OpText& t = graph.resolved(i);
    const Declared in = declared_tensors(t.input_shapes, t.input_dtypes);
    std::string ins;
    for (std::size_t j = 0; j < graph.input_count(i) && j < in.shapes.size(); ++j) {
      const std::string ref = graph.source_ref(i, j);
      ins += fmt::format("{}{}[{} {}]", j ? ", " : "", ref.empty() ? "-" : ref, in.shapes[j],
                         j < in.dtypes.size() ? in.dtypes[j] : "?");
    }
    std::string outs;
    if (graph.outputs_known(i)) {
      const Declared o = declared_tensors(t.output_shapes, t.output_dtypes);
      const std::vector<std::string>& os = o.shapes;
      for (std::size_t k = 0; k < os.size(); ++k) {
        outs += fmt::format("{}[{} {}]", k ? ", " : "", os[k], k < o.dtypes.size() ? o.dtypes[k] : "?");
      }
      if (os.empty()) outs = "[scalar]";
    } else {
      outs = "?";
    }
    const char* from = "unknown (no shape rule; readers declare their shapes)";
    switch (graph.outputs_from(i)) {
      case OutputsFrom::kDeclared:
        from = "declared";
        break;
      case OutputsFrom::kInferred:
        from = "inferred";
        break;
      case OutputsFrom::kUpperBound:
        from = "inferred, upper bound";
        break;
      case OutputsFrom::kUnknown:
        break;
    }
    const std::string& note = graph.outputs_note(i);
    out += fmt::format("  {} ({}): {} -> {}  {}{}\n", t.name, t.type, ins.empty() ? "()" : ins,
                       outs, from, note.empty() ? "" : " (" + note + ")");
  }
  return out;
}

std::optional<std::size_t> Graph::producer(std::size_t i, std::size_t j) const {
  const TensorSource& s = source(i, j);
  if (s.kind != TensorSource::Kind::kOp) return std::nullopt;
  return s.index;
}

std::vector<TensorUse> Graph::uses(std::size_t i) const {
  std::vector<TensorUse> out;
  for (std::size_t c = 0; c < sources_.size(); ++c) {
    for (std::size_t j = 0; j < sources_[c].size(); ++j) {
      const TensorSource& s = sources_[c][j];
      if (s.kind == TensorSource::Kind::kOp && s.index == i) out.push_back({c, j, s.output});
    }
  }
  return out;
}

std::string Graph::source_ref(std::size_t i, std::size_t j) const {
  const TensorSource& s = source(i, j);
  switch (s.kind) {
    case TensorSource::Kind::kNone:
      return "";
    case TensorSource::Kind::kGraphInput:
      return inputs_.at(s.index).name;
    case TensorSource::Kind::kOp:
      break;
  }
  const std::string& p = ops_.at(s.index).text.name;
  return s.output == 0 ? p : fmt::format("{}:{}", p, s.output);
}

std::vector<std::size_t> Graph::predecessors(std::size_t i) const {
  std::vector<std::size_t> out;
  for (auto [e, end] = boost::in_edges(i, dag_); e != end; ++e)
    out.push_back(boost::source(*e, dag_));
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::size_t> Graph::find(std::string_view name) const {
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    if (ops_[i].text.name == name) return i;
  }
  return std::nullopt;
}

OpDesc Graph::instantiate(std::size_t i, std::int64_t batch) const {
  const GraphOp& op = ops_.at(i);
  OpText t = resolved_.at(i);
  t.input_shapes = substitute_batch(t.input_shapes, batch, op.shapes_pos);
  t.output_shapes = substitute_batch(t.output_shapes, batch, op.shapes_pos);
  return make_op(t, op.pos);
}

void Graph::set_measured(std::optional<MeasuredConditions> m) {
  measured_ = std::move(m);
  check_measured_ops(*this);
}

}  // namespace npusim
