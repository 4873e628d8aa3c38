// Reading graphs from TOML (`[graph]` tables, graph files) and writing them back.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "model/graph.h"
#include "model/graph_source.h"
#include "model/toml_reader.h"

namespace npusim {

namespace {

GraphOp read_op(TableReader& t) {
  GraphOp op;
  op.pos = t.pos();
  op.text.name = t.string("name");
  op.text.type = t.string("type");
  if (op.text.type.empty()) t.fail("type", "must not be empty");
  if (t.has("inputs")) {
    op.inputs = t.string_array("inputs");
    op.inputs_pos = t.value_pos("inputs");
  } else {
    (void)t.optional_string("inputs");  // marks the key accepted
    op.inputs_pos = op.pos;
  }
  // With `inputs`, shapes and dtypes may be left to the edges (and are checked against them).
  if (op.inputs && !t.has("shapes")) {
    (void)t.optional_string("shapes");
    op.shapes_declared = false;
    op.shapes_pos = op.pos;
  } else {
    op.text.input_shapes = t.string("shapes");
    op.shapes_pos = t.value_pos("shapes");
  }
  if (op.inputs && !t.has("dtypes")) {
    (void)t.optional_string("dtypes");
    op.dtypes_declared = false;
  } else {
    op.text.input_dtypes = t.string("dtypes");
  }
  op.text.input_formats = t.optional_string("formats").value_or("");
  op.text.output_shapes = t.optional_string("output_shapes").value_or("");
  op.output_shapes_pos = t.has("output_shapes") ? t.value_pos("output_shapes") : op.pos;
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
  op.measured_shapes = t.optional_string("measured_shapes");
  op.measured_shapes_pos = t.has("measured_shapes") ? t.value_pos("measured_shapes") : op.pos;
  op.measured_output_shapes = t.optional_string("measured_output_shapes");
  if ((op.measured_shapes || op.measured_output_shapes) && !op.duration_us) {
    t.fail(op.measured_shapes ? "measured_shapes" : "measured_output_shapes",
           "says what a measurement ran with, but the op has no duration_us");
  }
  if (op.measured_output_shapes && !op.measured_shapes) {
    t.fail("measured_output_shapes", "needs measured_shapes (the inputs they come from)");
  }
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

GraphInput read_input(TableReader& t) {
  GraphInput in;
  in.pos = t.pos();
  in.name = t.string("name");
  in.shape = t.string("shape");
  in.dtype = t.string("dtype");
  in.format = t.optional_string("format").value_or("");
  in.constant = t.optional_boolean("constant").value_or(false);
  t.finish();
  return in;
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
  std::optional<MeasuredConditions> measured;
  if (auto m = graph.optional_sub_table("measured")) measured = read_measured_table(*m);
  std::vector<TableReader> input_tables = graph.table_array("input");
  std::vector<TableReader> op_tables = graph.table_array("op");
  (void)graph.optional_string("file");
  if (op_tables.empty()) graph.fail_table("a graph needs `file = \"...\"` or [[graph.op]] tables");
  std::vector<GraphInput> inputs;
  for (TableReader& t : input_tables) inputs.push_back(read_input(t));
  std::vector<GraphOp> ops;
  ops.reserve(op_tables.size());
  for (TableReader& t : op_tables) ops.push_back(read_op(t));
  graph.finish();
  const bool has_measured_ops = std::any_of(ops.begin(), ops.end(), [](const GraphOp& op) {
    return op.measured_shapes.has_value();
  });
  if (has_measured_ops && !measured) {
    graph.fail_table("ops give measured_shapes, but there is no [graph.measured] table saying "
                     "where they were measured");
  }
  Graph g = Graph::build(std::move(name), std::move(ops), std::move(inputs));
  g.set_measured(std::move(measured));
  return g;
}

std::string check_graph_file(const std::filesystem::path& file) {
  const Graph g = load_graph_file(file);
  std::size_t fixed = 0;
  std::size_t batched = 0;
  std::size_t edges = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g.ops()[i].duration_us) ++fixed;
    if (g.batch_dependent(i)) ++batched;
    for (std::size_t j = 0; j < g.input_count(i); ++j) {
      if (g.source(i, j).kind != TensorSource::Kind::kNone) ++edges;
    }
  }
  return fmt::format("graph '{}': {} ops, {} inputs, {} tensor edges ({} ops with shapes in B, {} "
                     "with a fixed duration_us)",
                     g.name(), g.size(), g.graph_inputs().size(), edges, batched, fixed);
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
  if (graph.measured()) out += "\n" + measured_to_toml(*graph.measured());
  for (const GraphInput& in : graph.graph_inputs()) {
    out += "\n[[graph.input]]\n";
    out += fmt::format("name = {}\n", toml_string(in.name));
    out += fmt::format("shape = {}\n", toml_string(in.shape));
    out += fmt::format("dtype = {}\n", toml_string(in.dtype));
    if (!in.format.empty()) out += fmt::format("format = {}\n", toml_string(in.format));
    if (in.constant) out += "constant = true\n";
  }
  for (const GraphOp& op : graph.ops()) {
    const OpText& t = op.text;
    out += "\n[[graph.op]]\n";
    out += fmt::format("name = {}\n", toml_string(t.name));
    out += fmt::format("type = {}\n", toml_string(t.type));
    if (op.inputs) {
      std::string list;
      for (const std::string& a : *op.inputs) list += (list.empty() ? "" : ", ") + toml_string(a);
      out += fmt::format("inputs = [{}]\n", list);
    }
    if (op.shapes_declared) out += fmt::format("shapes = {}\n", toml_string(t.input_shapes));
    if (op.dtypes_declared) out += fmt::format("dtypes = {}\n", toml_string(t.input_dtypes));
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
    if (op.measured_shapes) out += fmt::format("measured_shapes = {}\n", toml_string(*op.measured_shapes));
    if (op.measured_output_shapes) {
      out += fmt::format("measured_output_shapes = {}\n", toml_string(*op.measured_output_shapes));
    }
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
