// ONNX file -> Graph: shape inference at two batch sizes (so every dimension is known as k or
// k*B; onnx_infer.cpp), constant folding of shape arithmetic, then ATC's op mapping node by node
// (onnx_lower). The importer's state and passes: onnx_importer.h.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstring>
#include <queue>
#include <set>

#include "frontend/onnx_importer.h"
#include "frontend/onnx_load.h"

namespace npusim::frontend {

namespace onnx_detail {

namespace {

std::optional<std::string> dtype_of(std::int32_t elem) {
  switch (elem) {
    case onnx::TensorProto::FLOAT: return "FLOAT";
    case onnx::TensorProto::FLOAT16: return "FLOAT16";
    case onnx::TensorProto::BFLOAT16: return "BF16";
    case onnx::TensorProto::DOUBLE: return "DOUBLE";
    case onnx::TensorProto::INT8: return "INT8";
    case onnx::TensorProto::UINT8: return "UINT8";
    case onnx::TensorProto::INT16: return "INT16";
    case onnx::TensorProto::UINT16: return "UINT16";
    case onnx::TensorProto::INT32: return "INT32";
    case onnx::TensorProto::UINT32: return "UINT32";
    case onnx::TensorProto::INT64: return "INT64";
    case onnx::TensorProto::UINT64: return "UINT64";
    case onnx::TensorProto::BOOL: return "BOOL";
    case onnx::TensorProto::COMPLEX64: return "COMPLEX64";
    case onnx::TensorProto::COMPLEX128: return "COMPLEX128";
    default: return std::nullopt;
  }
}

bool is_integer(std::int32_t elem) {
  return elem == onnx::TensorProto::INT32 || elem == onnx::TensorProto::INT64 ||
         elem == onnx::TensorProto::INT8 || elem == onnx::TensorProto::UINT8 ||
         elem == onnx::TensorProto::INT16 || elem == onnx::TensorProto::UINT16 ||
         elem == onnx::TensorProto::UINT32 || elem == onnx::TensorProto::UINT64 ||
         elem == onnx::TensorProto::BOOL;
}

// Integer values of a small constant tensor (at most 64 elements), or nullopt.
std::optional<std::vector<std::int64_t>> tensor_ints(const onnx::TensorProto& t) {
  std::int64_t n = 1;
  for (const auto d : t.dims()) {  // dims from the file: a product may overflow (fuzz_onnx)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  if (n > 64) return std::nullopt;
  std::vector<std::int64_t> out;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size() > 0) return std::vector<std::int64_t>(t.int64_data().begin(),
                                                                  t.int64_data().end());
    if (t.raw_data().size() != static_cast<std::size_t>(n) * 8) return std::nullopt;
    out.resize(static_cast<std::size_t>(n));
    std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());  // ONNX: little endian
    return out;
  }
  if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.int32_data_size() > 0) return std::vector<std::int64_t>(t.int32_data().begin(),
                                                                  t.int32_data().end());
    if (t.raw_data().size() != static_cast<std::size_t>(n) * 4) return std::nullopt;
    std::vector<std::int32_t> v(static_cast<std::size_t>(n));
    std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
    return std::vector<std::int64_t>(v.begin(), v.end());
  }
  return std::nullopt;
}

}  // namespace

ImportResult OnnxImporter::run() {
  model_ = load_model_proto(file_);
  check_opsets();
  collect_constants();
  order_nodes();  // before inference: a cycle or a dangling input is named as such
  check_nodes();
  spell_out_kernel_shapes();
  choose_batch();
  std::unordered_map<std::string, std::vector<std::int64_t>> values_a, values_b;
  if (batch_.empty()) {
    run_a_ = infer(0, values_a);
  } else {
    run_a_ = infer(kBatchA, values_a);
    run_b_ = infer(kBatchB, values_b);
  }
  // Values of shape arithmetic the lowering may read (Tile's multiples, TopK's k): only those
  // that do not change with the batch.
  for (auto& [name, v] : values_a) {
    if (batch_.empty() || values_b[name] == v) ints_.emplace(name, v);
  }
  lower_all();
  result_.nodes = static_cast<std::size_t>(model_.graph().node_size());
  result_.batch_symbol = batch_;
  std::string name = model_.graph().name();
  if (name.empty()) name = file_.stem().string();
  // A graph input named like an op would make its name ambiguous in `inputs`.
  for (auto& in : graph_inputs_) {
    std::string renamed = in.name;
    while (std::any_of(ops_.begin(), ops_.end(),
                       [&](const GraphOp& o) { return o.text.name == renamed; })) {
      renamed += "_in";
    }
    if (renamed == in.name) continue;
    for (auto& o : ops_) {
      for (auto& ref : *o.inputs) {
        if (ref == in.name) ref = renamed;
      }
    }
    in.name = renamed;
  }
  result_.graph = Graph::build(name, std::move(ops_), std::move(graph_inputs_));
  return std::move(result_);
}

std::string OnnxImporter::node_label(int i) const {
  const auto& n = model_.graph().node(i);
  const std::string domain =
      n.domain().empty() || n.domain() == "ai.onnx" ? "" : n.domain() + "::";
  return fmt::format("node '{}' ({}{})", node_names_.empty() ? n.name() : node_names_[i],
                     domain, n.op_type());
}

void OnnxImporter::check_opsets() {
  for (const auto& o : model_.opset_import()) {
    if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
    opset_ = o.version();
  }
  if (opset_ == 0) fail("the model imports no default-domain opset (opset_import)");
  if (opset_ > kAtcMaxOpset) {
    fail(fmt::format("opset {}: ATC maps the standard ops of opsets {}-{} only, and ONNX {} "
                     "infers shapes up to opset {}; export with opset_version={} (or lower)",
                     opset_, kAtcMinOpset, kAtcMaxOpset, "1.12", kInferenceMaxOpset,
                     kInferenceMaxOpset));
  }
  if (opset_ > kInferenceMaxOpset) {
    warn("onnx-opset-18",
         fmt::format("opset {}: ONNX 1.12 infers shapes up to opset {}; ops changed in opset "
                     "18 are checked node by node (a node left without shapes is an error)",
                     opset_, kInferenceMaxOpset));
  }
  if (opset_ < kAtcMinOpset) {
    warn("onnx-opset-old", fmt::format("opset {}: ATC's op plugins start at opset {}",
                                       opset_, kAtcMinOpset));
  }
}

void OnnxImporter::warn(std::string code, std::string message) {
  result_.warnings.push_back({std::move(code), std::move(message)});
}

void OnnxImporter::collect_constants() {
  const auto& g = model_.graph();
  for (const auto& init : g.initializer()) {
    static_.insert(init.name());
    if (auto v = tensor_ints(init)) ints_[init.name()] = *v;
    ++result_.constants;
  }
  for (const auto& n : g.node()) {
    if (n.op_type() != "Constant") continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == "value" && a.has_t() && n.output_size() > 0) {
        if (auto v = tensor_ints(a.t())) ints_[n.output(0)] = *v;
      }
    }
  }
}

std::vector<const onnx::ValueInfoProto*> OnnxImporter::real_inputs() const {
  std::vector<const onnx::ValueInfoProto*> out;
  for (const auto& in : model_.graph().input()) {
    if (static_.count(in.name()) == 0) out.push_back(&in);
  }
  return out;
}

std::string OnnxImporter::first_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

void OnnxImporter::order_nodes() {
  const auto& g = model_.graph();
  const int n = g.node_size();
  std::unordered_map<std::string, int> producer;
  std::unordered_map<std::string, int> name_count;
  for (int i = 0; i < n; ++i) ++name_count[g.node(i).name()];
  node_names_.resize(static_cast<std::size_t>(n));
  std::unordered_set<std::string> used;
  for (int i = 0; i < n; ++i) {
    const auto& node = g.node(i);
    std::string name = node.name();
    if (name.empty() || name_count[name] > 1 || used.count(name) > 0) {
      name = fmt::format("{}_{}", node.op_type(), i);
    }
    used.insert(name);
    node_names_[static_cast<std::size_t>(i)] = name;
    for (const auto& o : node.output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  std::unordered_set<std::string> defined(static_.begin(), static_.end());
  for (const auto& in : g.input()) defined.insert(in.name());
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(n));
  std::vector<int> indeg(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    std::set<int> preds;
    for (const auto& in : g.node(i).input()) {
      if (in.empty()) continue;
      const auto it = producer.find(in);
      if (it != producer.end()) {
        preds.insert(it->second);
      } else if (defined.count(in) == 0) {
        fail(fmt::format("{} reads '{}', which no node, graph input or initializer defines "
                         "(a damaged or truncated model?)",
                         node_label(i), in));
      }
    }
    for (const int p : preds) {
      if (p == i) fail(fmt::format("{} reads its own output", node_label(i)));
      succ[static_cast<std::size_t>(p)].push_back(i);
      ++indeg[static_cast<std::size_t>(i)];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i) {
    if (indeg[static_cast<std::size_t>(i)] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order_.push_back(v);
    for (const int w : succ[static_cast<std::size_t>(v)]) {
      if (--indeg[static_cast<std::size_t>(w)] == 0) ready.push(w);
    }
  }
  if (static_cast<int>(order_.size()) != n) {
    // Walk back from a node left over until a node repeats: that stretch is a cycle.
    int v = 0;
    while (indeg[static_cast<std::size_t>(v)] == 0) ++v;
    std::vector<int> path;
    std::unordered_map<int, std::size_t> seen;
    while (seen.count(v) == 0) {
      seen[v] = path.size();
      path.push_back(v);
      for (const auto& in : g.node(v).input()) {
        const auto it = producer.find(in);
        if (it != producer.end() && indeg[static_cast<std::size_t>(it->second)] > 0) {
          v = it->second;
          break;
        }
      }
    }
    std::vector<int> cycle(path.begin() + static_cast<std::ptrdiff_t>(seen[v]), path.end());
    std::reverse(cycle.begin(), cycle.end());
    // Start at the earliest node of the file, so the message does not depend on the walk.
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::string text;
    for (const int c : cycle) text += node_names_[static_cast<std::size_t>(c)] + " -> ";
    text += node_names_[static_cast<std::size_t>(cycle.front())];
    fail(fmt::format("{} is on a cycle: {}", node_label(cycle.front()), text));
  }
}

void OnnxImporter::check_nodes() const {
  const auto& g = model_.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!default_domain) continue;
    if (n.op_type() == "Loop" || n.op_type() == "Scan") {
      fail(fmt::format("{}: {} runs its body a data-dependent number of times and ATC has no "
                       "mapping for it; unroll it before export (e.g. trace with a fixed "
                       "length)",
                       node_label(i), n.op_type()));
    }
    // The node against its schema (input and output counts, attribute types), as ONNX's
    // checker does before inference: libonnx's inference functions assume it passed and
    // dereference missing inputs (fuzz_onnx: SEGVs in several of them). An op without a schema
    // is left to the lowering, which names it.
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset_), "");
    if (schema != nullptr) {
      try {
        schema->Verify(n);
      } catch (const std::exception& e) {
        fail(fmt::format("{}: not a valid {} of opset {}: {}", node_label(i), n.op_type(),
                         opset_, first_line(e.what())));
      }
    }
  }
}

void OnnxImporter::spell_out_kernel_shapes() {
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& init : model_.graph().initializer()) inits[init.name()] = &init;
  for (auto& n : *model_.mutable_graph()->mutable_node()) {
    if (n.op_type() != "Conv" && n.op_type() != "ConvTranspose") continue;
    if (n.input_size() < 2) continue;
    bool has = false;
    for (const auto& a : n.attribute()) has = has || a.name() == "kernel_shape";
    const auto it = inits.find(n.input(1));
    if (has || it == inits.end() || it->second->dims_size() < 3) continue;
    for (int d = 2; d < it->second->dims_size(); ++d) {
      if (it->second->dims(d) <= 0) {
        fail(fmt::format("node '{}' ({}): its weight '{}' has a dimension of {}; every one "
                         "must be > 0",
                         n.name(), n.op_type(), n.input(1), it->second->dims(d)));
      }
    }
    auto* a = n.add_attribute();
    a->set_name("kernel_shape");
    a->set_type(onnx::AttributeProto::INTS);
    for (int d = 2; d < it->second->dims_size(); ++d) a->add_ints(it->second->dims(d));
  }
}

std::string OnnxImporter::diagnose_missing(int i, const std::string& out) const {
  const auto& n = model_.graph().node(i);
  const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
  if (!default_domain) {
    return fmt::format("{}: domain '{}' is unknown to ONNX's shape inference and to ATC's "
                       "standard plugins, so its output '{}' has no shape",
                       node_label(i), n.domain(), out);
  }
  if (onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset_), "") == nullptr) {
    return fmt::format("{}: ONNX 1.12 has no schema for this op at opset {}, so its output "
                       "'{}' has no shape (an op newer than the opset, or not an ONNX op)",
                       node_label(i), opset_, out);
  }
  return fmt::format("{}: shape inference left its output '{}' without a full shape (a "
                     "data-dependent size, or an input whose values it could not follow)",
                     node_label(i), out);
}

void OnnxImporter::lower_all() {
  const auto& g = model_.graph();
  // value -> (op name, output index)
  std::unordered_map<std::string, std::pair<std::string, std::size_t>> producer_op;
  for (const int i : order_) {
    const auto& n = g.node(i);
    const std::string& name = node_names_[static_cast<std::size_t>(i)];
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    // Constants: initializers (already static), Constant, ConstantOfShape (sizes matter, values
    // do not), Shape / Size of a tensor (fixed within a compiled gear), and integer arithmetic
    // on constants only (shape computations GE folds at compile time).
    bool all_static = true;
    for (const auto& in : n.input()) {
      if (!in.empty() && static_.count(in) == 0) all_static = false;
    }
    bool int_outputs = n.output_size() > 0;
    for (const auto& o : n.output()) {
      const auto it = run_a_.find(o);
      if (o.empty()) continue;
      if (it == run_a_.end() || !is_integer(it->second.elem)) int_outputs = false;
    }
    const bool is_const_op = default_domain &&
                             (n.op_type() == "Constant" || n.op_type() == "ConstantOfShape" ||
                              n.op_type() == "Shape" || n.op_type() == "Size");
    if (is_const_op || (default_domain && all_static && int_outputs)) {
      for (const auto& o : n.output()) {
        if (!o.empty()) static_.insert(o);
      }
      if (n.op_type() != "Constant") ++result_.constants;
      continue;
    }
    NodeView v;
    v.node = &n;
    v.name = name;
    for (const auto& in : n.input()) {
      if (in.empty()) {
        v.inputs.emplace_back(std::nullopt);
        continue;
      }
      v.inputs.emplace_back(tensor(in, i));
    }
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      const auto s = shape_of(o, i);
      if (!s) {
        if (n.op_type() == "NonZero") {
          v.outputs.push_back(nonzero_bound(v, o));
          continue;
        }
        fail(diagnose_missing(i, o));
      }
      v.outputs.push_back(tensor(o, i));
    }
    if (!default_domain) fail(diagnose_missing(i, n.output_size() > 0 ? n.output(0) : ""));
    v.int_values = [this, &n](std::size_t k) -> std::optional<std::vector<std::int64_t>> {
      if (k >= static_cast<std::size_t>(n.input_size())) return std::nullopt;
      const auto it = ints_.find(n.input(static_cast<int>(k)));
      if (it == ints_.end()) return std::nullopt;
      return it->second;
    };
    if (n.op_type() == "If") {
      warn("onnx-control-flow",
           fmt::format("{}: its branches are not simulated; costed as one generic op",
                       node_label(i)));
    }
    Lowering l = lower_node(v);
    for (auto& w : l.warnings) result_.warnings.push_back(std::move(w));
    for (LOp& op : l.ops) emit(v, op, producer_op);
  }
}

LTensor OnnxImporter::nonzero_bound(const NodeView& v, const std::string& out) {
  // NonZero's second dimension is the number of non-zero elements: data-dependent. Its upper
  // bound (every element non-zero) is what a static graph must allocate.
  const LTensor& x = *v.inputs.at(0);
  DimTemplate count{1, false};
  for (const auto& d : x.shape) {
    count.k *= d.k;
    count.batch = count.batch || d.batch;
  }
  warn("onnx-data-dependent-shape",
       fmt::format("node '{}' (NonZero): its output size depends on the data; sized at the "
                   "upper bound [{}, {}] (every element non-zero)",
                   v.name, x.shape.size(), shape_text({count})));
  return LTensor{out, {{static_cast<std::int64_t>(x.shape.size()), false}, count}, "INT64"};
}

LTensor OnnxImporter::tensor(const std::string& name, int node) const {
  const auto s = shape_of(name, node);
  if (!s) {
    fail(fmt::format("{}: its input '{}' has no shape after inference", node_label(node), name));
  }
  const auto it = run_a_.find(name);
  const auto d = dtype_of(it->second.elem);
  if (!d) {
    fail(fmt::format("{}: tensor '{}' has element type {}, which the NPU model does not know",
                     node_label(node), name, it->second.elem));
  }
  return LTensor{name, *s, *d};
}

void OnnxImporter::emit(const NodeView& v, const LOp& op,
                        std::unordered_map<std::string, std::pair<std::string, std::size_t>>& producer_op) {
  GraphOp g;
  g.pos = pos_;
  g.after_pos = pos_;
  g.shapes_pos = pos_;
  g.inputs_pos = pos_;
  g.output_shapes_pos = pos_;
  g.text.name = op.suffix.empty() ? v.name : v.name + "/" + op.suffix;
  g.text.type = op.type;
  std::vector<std::string> shapes, dtypes, out_shapes, out_dtypes, inputs;
  for (const LTensor& t : op.inputs) {
    shapes.push_back(shape_text(t.shape));
    dtypes.push_back(t.dtype);
    const auto it = producer_op.find(t.id);
    if (t.id.empty()) {
      inputs.emplace_back();
    } else if (it != producer_op.end()) {
      inputs.push_back(fmt::format("{}:{}", it->second.first, it->second.second));
    } else {
      inputs.push_back(graph_input(t));
    }
  }
  for (std::size_t k = 0; k < op.outputs.size(); ++k) {
    const LTensor& t = op.outputs[k];
    out_shapes.push_back(shape_text(t.shape));
    out_dtypes.push_back(t.dtype);
    producer_op[t.id] = {g.text.name, k};
  }
  g.text.input_shapes = fmt::format("{}", fmt::join(shapes, ";"));
  g.text.input_dtypes = fmt::format("{}", fmt::join(dtypes, ";"));
  g.text.output_shapes = fmt::format("{}", fmt::join(out_shapes, ";"));
  g.text.output_dtypes = fmt::format("{}", fmt::join(out_dtypes, ";"));
  g.text.attrs = op.attrs;
  g.inputs = std::move(inputs);
  ops_.push_back(std::move(g));
}

std::string OnnxImporter::graph_input(const LTensor& t) {
  const auto it = input_index_.find(t.id);
  if (it != input_index_.end()) return graph_inputs_[it->second].name;
  GraphInput in;
  in.name = t.id;
  in.shape = shape_text(t.shape);
  in.dtype = t.dtype;
  in.constant = static_.count(t.id) > 0;
  in.pos = pos_;
  input_index_[t.id] = graph_inputs_.size();
  graph_inputs_.push_back(std::move(in));
  return t.id;
}

}  // namespace onnx_detail

ImportResult import_onnx(const std::filesystem::path& file, const OnnxImportOptions& options) {
  return onnx_detail::OnnxImporter(file, options).run();
}

}  // namespace npusim::frontend
