#include "model/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <utility>

#include "model/graph_source.h"
#include "model/text.h"
#include "model/toml_reader.h"

namespace npusim {

namespace {

bool parse_int(std::string_view s, std::int64_t& out) {
  s = trim_blanks(s);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// One dimension of a template: "7", "B", "B*4", "4*B".
std::int64_t eval_dim(std::string_view dim, std::int64_t batch, const SourcePos& pos) {
  const std::string_view d = trim_blanks(dim);
  const auto t = parse_dim_template(d);
  if (!t) {
    throw InputError(pos, fmt::format("shape dimension '{}': expected a positive integer, B, "
                                      "B*k or k*B",
                                      d));
  }
  // plain integers pass through untouched (make_op validates them)
  if (!t->batch) return -1;
  if (t->k > std::numeric_limits<std::int64_t>::max() / batch) {
    throw InputError(pos, fmt::format("shape dimension '{}' overflows at batch {}", d, batch));
  }
  return t->k * batch;
}

}  // namespace

std::optional<DimTemplate> parse_dim_template(std::string_view dim) noexcept {
  const std::string_view d = trim_blanks(dim);
  if (d == "B") return DimTemplate{1, true};
  std::int64_t k = 0;
  const std::size_t star = d.find('*');
  if (star == std::string_view::npos) {
    if (parse_int(d, k)) return DimTemplate{k, false};
    return std::nullopt;
  }
  const std::string_view lhs = trim_blanks(d.substr(0, star));
  const std::string_view rhs = trim_blanks(d.substr(star + 1));
  if ((lhs == "B" && parse_int(rhs, k)) || (rhs == "B" && parse_int(lhs, k))) {
    if (k > 0) return DimTemplate{k, true};
  }
  return std::nullopt;
}

bool mentions_batch(std::string_view shapes) noexcept {
  return shapes.find('B') != std::string_view::npos;
}

std::string substitute_batch(std::string_view shapes, std::int64_t batch, const SourcePos& pos) {
  NPUSIM_CHECK(batch >= 1);
  std::string out;
  out.reserve(shapes.size() + 8);
  std::size_t start = 0;
  // Walk dimension by dimension; separators (',' ';') are copied as they are.
  for (std::size_t i = 0; i <= shapes.size(); ++i) {
    if (i < shapes.size() && shapes[i] != ',' && shapes[i] != ';') continue;
    const std::string_view dim = shapes.substr(start, i - start);
    if (dim.find('B') != std::string_view::npos || dim.find('*') != std::string_view::npos) {
      const std::int64_t v = eval_dim(dim, batch, pos);
      out += v < 0 ? std::string(dim) : std::to_string(v);
    } else {
      out += dim;
    }
    if (i < shapes.size()) out += shapes[i];
    start = i + 1;
  }
  return out;
}

Graph Graph::build(std::string name, std::vector<GraphOp> ops) {
  Graph g;
  g.name_ = std::move(name);
  g.ops_ = std::move(ops);
  const std::size_t n = g.ops_.size();
  g.dag_ = GraphDag(n);
  g.batch_dependent_.resize(n);

  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < n; ++i) {
    const GraphOp& op = g.ops_[i];
    if (op.text.name.empty()) throw InputError(op.pos, "graph op: 'name' must not be empty");
    const auto [it, fresh] = by_name.emplace(op.text.name, i);
    if (!fresh) {
      throw InputError(op.pos, fmt::format("graph op '{}': duplicate name (first defined at "
                                           "line {})",
                                           op.text.name, g.ops_[it->second].pos.line));
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const GraphOp& op = g.ops_[i];
    if (!op.after.has_value()) {
      if (i > 0) boost::add_edge(i - 1, i, g.dag_);
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
    // Report at an op whose `after` is written out when there is one: that is the line to edit.
    const auto explicit_after = std::find_if(
        cycle.begin(), cycle.end(), [&](std::size_t c) { return g.ops_[c].after.has_value(); });
    if (explicit_after != cycle.end()) std::rotate(cycle.begin(), explicit_after, cycle.end());
    std::string path;
    for (const std::size_t c : cycle) path += g.ops_[c].text.name + " -> ";
    path += g.ops_[cycle.front()].text.name;
    const GraphOp& at = g.ops_[cycle.front()];
    throw InputError(at.after_pos,
                     fmt::format("graph op '{}' is on a dependency cycle: {}", at.text.name, path));
  }

  for (std::size_t i = 0; i < n; ++i) {
    const OpText& t = g.ops_[i].text;
    g.batch_dependent_[i] = mentions_batch(t.input_shapes) || mentions_batch(t.output_shapes);
    // Validate once at load, so a run never meets a malformed op halfway through.
    (void)g.instantiate(i, 1);
  }
  return g;
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
  OpText t = op.text;
  t.input_shapes = substitute_batch(op.text.input_shapes, batch, op.shapes_pos);
  t.output_shapes = substitute_batch(op.text.output_shapes, batch, op.shapes_pos);
  return make_op(t, op.pos);
}

namespace {

GraphOp read_op(TableReader& t) {
  GraphOp op;
  op.pos = t.pos();
  op.text.name = t.string("name");
  op.text.type = t.string("type");
  if (op.text.type.empty()) t.fail("type", "must not be empty");
  op.text.input_shapes = t.string("shapes");
  op.shapes_pos = t.value_pos("shapes");
  op.text.input_dtypes = t.string("dtypes");
  op.text.input_formats = t.optional_string("formats").value_or("");
  op.text.output_shapes = t.optional_string("output_shapes").value_or("");
  op.text.output_dtypes = t.optional_string("output_dtypes").value_or("");
  op.text.output_formats = t.optional_string("output_formats").value_or("");
  if (auto p = t.optional_string("placement")) {
    if (!parse_placement(*p).has_value()) {
      t.fail("placement", fmt::format("unknown placement '{}'; expected cube, vector, mix, aicpu "
                                      "or host",
                                      *p));
    }
    op.text.placement = *p;
  }
  if (t.has("after")) {
    op.after = t.string_array("after");
    op.after_pos = t.value_pos("after");
  } else {
    (void)t.optional_string("after");  // marks the key accepted
    op.after_pos = op.pos;
  }
  op.stream = t.optional_integer("stream", 0, std::numeric_limits<std::int32_t>::max()).value_or(0);
  op.duration_us = t.optional_number("duration_us", 0, std::numeric_limits<double>::infinity(),
                                     /*lo_open=*/false);
  if (auto attrs = t.optional_sub_table("attrs")) {
    for (auto&& [k, v] : attrs->table()) {
      const std::string key(k.str());
      std::string value;
      if (const auto* s = v.as_string()) {
        value = s->get();
      } else if (const auto* i = v.as_integer()) {
        value = std::to_string(i->get());
      } else if (const auto* f = v.as_floating_point()) {
        value = fmt::format("{}", f->get());
      } else if (const auto* b = v.as_boolean()) {
        value = b->get() ? "true" : "false";
      } else {
        throw InputError(toml_pos(t.file(), v.source()),
                         fmt::format("{}: expected a string, number or boolean, got {}",
                                     attrs->key_label(key), toml_type_name(v)));
      }
      op.text.attrs.emplace_back(key, std::move(value));
    }
  }
  t.finish();
  return op;
}

}  // namespace

Graph read_graph_table(TableReader& graph, const std::filesystem::path& base_dir) {
  if (graph.has("onnx")) {
    // A model file: imported by the program's importer (model/graph_source.h), nothing inline.
    ModelFileRequest req;
    req.file = graph.string("onnx");
    req.pos = graph.value_pos("onnx");
    if (req.file.is_relative()) {
      // beside the scenario first; else relative to the working directory (a --set override)
      std::error_code ec;
      const std::filesystem::path beside = base_dir / req.file;
      if (std::filesystem::exists(beside, ec) || !std::filesystem::exists(req.file, ec)) {
        req.file = beside;
      }
    }
    req.batch_dim = graph.optional_string("batch_dim").value_or("");
    if (auto dims = graph.optional_sub_table("dims")) {
      for (auto&& [k, v] : dims->table()) {
        const auto* i = v.as_integer();
        if (i == nullptr || i->get() < 1) {
          throw InputError(toml_pos(graph.file(), v.source()),
                           fmt::format("{}: expected a positive integer size",
                                       dims->key_label(std::string(k.str()))));
        }
        req.dims.emplace_back(std::string(k.str()), i->get());
      }
    }
    graph.finish();
    return import_model_file(req);
  }
  if (graph.has("file")) {
    const std::string file = graph.string("file");
    graph.finish();  // a referenced graph is the whole [graph]: no inline ops beside it
    std::filesystem::path p(file);
    if (p.is_relative()) p = base_dir / p;
    return load_graph_file(p);
  }
  std::string name = graph.optional_string("name").value_or("");
  std::vector<TableReader> op_tables = graph.table_array("op");
  (void)graph.optional_string("file");
  if (op_tables.empty()) graph.fail_table("a graph needs `file = \"...\"` or [[graph.op]] tables");
  std::vector<GraphOp> ops;
  ops.reserve(op_tables.size());
  for (TableReader& t : op_tables) ops.push_back(read_op(t));
  graph.finish();
  return Graph::build(std::move(name), std::move(ops));
}

std::string check_graph_file(const std::filesystem::path& file) {
  const Graph g = load_graph_file(file);
  std::size_t fixed = 0;
  std::size_t batched = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g.ops()[i].duration_us) ++fixed;
    if (g.batch_dependent(i)) ++batched;
  }
  return fmt::format("graph '{}': {} ops ({} with shapes in B, {} with a fixed duration_us)",
                     g.name(), g.size(), batched, fixed);
}

Graph load_graph_file(const std::filesystem::path& file) {
  const TomlFile doc = parse_toml_file(file);
  TableReader root(doc);
  TableReader graph = root.sub_table("graph");
  Graph g = read_graph_table(graph, file.parent_path());
  root.finish();
  return g;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

namespace {

// An attribute value as read_op() stored it: written bare when reading the bare value back gives
// the same text (integers, plain decimals, booleans), else as a string, so the text round-trips.
std::string toml_attr_value(const std::string& v) {
  if (v == "true" || v == "false") return v;
  std::int64_t i = 0;
  const auto [pi, ei] = std::from_chars(v.data(), v.data() + v.size(), i);
  if (ei == std::errc() && pi == v.data() + v.size() && std::to_string(i) == v) return v;
  const bool plain_decimal =
      !v.empty() && v.find_first_not_of("-0123456789.") == std::string::npos &&
      std::count(v.begin(), v.end(), '.') == 1 && std::isdigit(static_cast<unsigned char>(v.back()));
  if (plain_decimal) {
    double d = 0;
    const auto [pd, ed] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (ed == std::errc() && pd == v.data() + v.size() && fmt::format("{}", d) == v &&
        std::isdigit(static_cast<unsigned char>(v[v.front() == '-' ? 1 : 0])))
      return v;
  }
  return toml_string(v);
}

// A key, bare when TOML allows it.
std::string toml_key(const std::string& k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? k : toml_string(k);
}

}  // namespace

std::string graph_to_toml(const Graph& graph) {
  std::string out = "[graph]\n";
  out += fmt::format("name = {}\n", toml_string(graph.name()));
  for (const GraphOp& op : graph.ops()) {
    const OpText& t = op.text;
    out += "\n[[graph.op]]\n";
    out += fmt::format("name = {}\n", toml_string(t.name));
    out += fmt::format("type = {}\n", toml_string(t.type));
    out += fmt::format("shapes = {}\n", toml_string(t.input_shapes));
    out += fmt::format("dtypes = {}\n", toml_string(t.input_dtypes));
    const auto optional = [&out](const char* key, const std::string& v) {
      if (!v.empty()) out += fmt::format("{} = {}\n", key, toml_string(v));
    };
    optional("formats", t.input_formats);
    optional("output_shapes", t.output_shapes);
    optional("output_dtypes", t.output_dtypes);
    optional("output_formats", t.output_formats);
    optional("placement", t.placement);
    if (op.after) {
      std::string list;
      for (const std::string& a : *op.after) list += (list.empty() ? "" : ", ") + toml_string(a);
      out += fmt::format("after = [{}]\n", list);
    }
    if (op.stream != 0) out += fmt::format("stream = {}\n", op.stream);
    if (op.duration_us) out += fmt::format("duration_us = {}\n", *op.duration_us);
    if (!t.attrs.empty()) {
      std::string list;
      for (const auto& [k, v] : t.attrs) {
        list += fmt::format("{}{} = {}", list.empty() ? "" : ", ", toml_key(k), toml_attr_value(v));
      }
      out += fmt::format("attrs = {{ {} }}\n", list);
    }
  }
  return out;
}

}  // namespace npusim
