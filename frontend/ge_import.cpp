// GE graph dump (ge_onnx_*.pbtxt, DUMP_GE_GRAPH) -> Graph. The dump is protobuf text format of a
// copy of ONNX's ModelProto (package ge.onnx), so Debian's onnx::ModelProto reads it; the
// encoding (../shared/research/onnx_import.md section 4): op_type "ge:<CANN type>", inputs
// "<src>:<index>" ("" = optional input left out, "<src>:-1" = control edge), and per tensor the
// attributes input_desc_{dtype,shape,layout,origin_dtype,origin_shape,origin_layout}:<i> (and
// output_desc_*). After the build `shape` is the device layout (NC1HWC0, fractal): the logical
// shape is `origin_shape`.
//
// Tensor edges: a data input "<src>:<k>" of a kernel node becomes the `inputs` entry "<src>:<k>",
// as the ONNX importer writes them; a Data / Const / Variable source becomes
// a [[graph.input]] of that name (constant for weights). An edge whose two descriptors disagree
// (dtype, or element count: not a view) is left out ("", ordering kept in `after`) with the
// warning ge-edge-mismatch, so a dump whose GE removed a reshape still imports.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "frontend/import.h"
#include "frontend/onnx_load.h"
#include "model/error.h"

namespace npusim::frontend {

namespace {

// Nodes that are not kernels: graph inputs, weights and the output collector.
bool is_source_or_sink(const std::string& type) {
  static const std::unordered_set<std::string> kTypes = {
      "Data", "RefData", "AippData", "Const", "Constant", "Variable", "NetOutput"};
  return kTypes.count(type) > 0;
}

// Layouts whose `shape` is the logical one, usable when origin_shape is absent.
bool logical_layout(const std::string& layout) {
  return layout.empty() || layout == "ND" || layout == "NCHW" || layout == "NHWC" ||
         layout == "NCDHW" || layout == "NDHWC";
}

class GeImporter {
 public:
  explicit GeImporter(const std::filesystem::path& file) : file_(file), pos_{file.string(), 0, 0} {}

  ImportResult run() {
    const onnx::ModelProto m = load_model_proto(file_);
    const auto& g = m.graph();
    std::unordered_map<std::string, const onnx::NodeProto*> by_name;
    for (const auto& n : g.node()) by_name[n.name()] = &n;
    for (const auto& n : g.node()) {
      const std::string type = cann_type(n);
      if (is_source_or_sink(type)) {
        if (type == "Const" || type == "Constant" || type == "Variable") ++result_.constants;
        continue;
      }
      if (n.op_type() == "subgraph") {
        result_.warnings.push_back(
            {"ge-subgraph", fmt::format("node '{}': a subgraph node; its body is not simulated",
                                        n.name())});
        continue;
      }
      ops_.push_back(make_op(n, type, by_name));
    }
    result_.nodes = static_cast<std::size_t>(g.node_size());
    if (ops_.empty()) throw InputError(pos_, "the dump has no kernel nodes (only Data/Const)");
    std::string name = g.name();
    if (name.empty()) name = file_.stem().string();
    result_.graph = Graph::build(name, std::move(ops_), std::move(inputs_));
    return std::move(result_);
  }

 private:
  static std::string cann_type(const onnx::NodeProto& n) {
    const std::string& t = n.op_type();
    return t.rfind("ge:", 0) == 0 ? t.substr(3) : t;
  }

  [[noreturn]] void fail(const onnx::NodeProto& n, const std::string& what) const {
    throw InputError(pos_, fmt::format("node '{}' ({}): {}", n.name(), cann_type(n), what));
  }

  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& key) {
    for (const auto& a : n.attribute()) {
      if (a.name() == key) return &a;
    }
    return nullptr;
  }

  // One tensor descriptor (side "input" or "output", index i) as shape text and dtype.
  std::pair<std::string, std::string> desc(const onnx::NodeProto& n, const char* side,
                                           std::size_t i) const {
    if (attr(n, fmt::format("{}_desc_{}", side, i)) != nullptr) {
      fail(n, fmt::format("{} {} is described in GE's JSON form (nodes with 20 or more "
                          "descriptors), which is not read yet",
                          side, i));
    }
    const auto* shape = attr(n, fmt::format("{}_desc_origin_shape:{}", side, i));
    if (shape == nullptr) {
      const auto* device = attr(n, fmt::format("{}_desc_shape:{}", side, i));
      const auto* layout = attr(n, fmt::format("{}_desc_layout:{}", side, i));
      const std::string l = layout != nullptr ? layout->s() : "";
      if (device != nullptr && logical_layout(l)) shape = device;
    }
    if (shape == nullptr) {
      fail(n, fmt::format("no {0}_desc_origin_shape:{1} (nor an ND {0}_desc_shape:{1}) for {0} "
                          "{1}; was the graph dumped without shapes (DUMP_GE_GRAPH=3)?",
                          side, i));
    }
    std::vector<std::int64_t> dims(shape->ints().begin(), shape->ints().end());
    for (const auto d : dims) {
      if (d <= 0) {
        fail(n, fmt::format("{} {} has dimension {} (a dynamic or empty shape): dump a graph "
                            "compiled for static shapes (one gear)",
                            side, i, d));
      }
    }
    const auto* dt = attr(n, fmt::format("{}_desc_origin_dtype:{}", side, i));
    if (dt == nullptr || dt->s().empty()) dt = attr(n, fmt::format("{}_desc_dtype:{}", side, i));
    if (dt == nullptr || dt->s().empty()) {
      fail(n, fmt::format("no {0}_desc_dtype:{1} for {0} {1}", side, i));
    }
    std::string dtype = dt->s();
    if (!parse_dtype(dtype)) {
      fail(n, fmt::format("{} {} has dtype '{}', which the NPU model does not know", side, i,
                          dtype));
    }
    return {fmt::format("{}", fmt::join(dims, ",")), dtype};
  }

  // desc() that returns nullopt instead of failing (a source node's own descriptor is optional).
  std::optional<std::pair<std::string, std::string>> try_desc(const onnx::NodeProto& n,
                                                              const char* side,
                                                              std::size_t i) const {
    try {
      return desc(n, side, i);
    } catch (const InputError&) {
      return std::nullopt;
    }
  }

  static std::optional<std::int64_t> elements(const std::string& dims) {
    std::int64_t n = 1;
    std::size_t at = 0;
    while (at < dims.size()) {
      std::size_t end = dims.find(',', at);
      if (end == std::string::npos) end = dims.size();
      std::int64_t d = 0;
      const auto [p, ec] = std::from_chars(dims.data() + at, dims.data() + end, d);
      if (ec != std::errc() || p != dims.data() + end) return std::nullopt;
      n *= d;
      at = end + 1;
    }
    return n;
  }

  // True when the tensor a consumer describes can be the one its producer describes: same
  // dtype and element count (a reshaped view is fine).
  static bool same_tensor(const std::pair<std::string, std::string>& a,
                          const std::pair<std::string, std::string>& b) {
    return parse_dtype(a.second) == parse_dtype(b.second) && elements(a.first) == elements(b.first);
  }

  // The `inputs` entry for data input `in` = src:idx of node `n`, described as `mine`; adds the
  // graph input for a Data / Const source. "" (with a warning) when the descriptors disagree.
  std::string edge(const onnx::NodeProto& n, const onnx::NodeProto& src, std::int64_t idx,
                   const std::pair<std::string, std::string>& mine) {
    const std::string type = cann_type(src);
    // "<op>:<k>" as the ONNX importer writes; a Data / Const source is a graph input of its
    // name (with ":<k>" past its first output, which such nodes do not have in practice).
    const bool source = is_source_or_sink(type);
    const std::string ref = source && idx == 0 ? src.name()
                                               : fmt::format("{}:{}", src.name(), idx);
    const auto theirs = try_desc(src, "output", static_cast<std::size_t>(idx));
    if (source) {
      auto it = input_index_.find(ref);
      if (it == input_index_.end()) {
        GraphInput gi;
        gi.name = ref;
        gi.pos = pos_;
        const auto& d = theirs ? *theirs : mine;
        gi.shape = d.first;
        gi.dtype = d.second;
        gi.constant = type == "Const" || type == "Constant" || type == "Variable";
        it = input_index_.emplace(ref, inputs_.size()).first;
        inputs_.push_back(std::move(gi));
      }
      const GraphInput& gi = inputs_[it->second];
      if (!same_tensor({gi.shape, gi.dtype}, mine)) {
        mismatch(n, ref, mine, {gi.shape, gi.dtype});
        return "";
      }
      return ref;
    }
    if (theirs && !same_tensor(*theirs, mine)) {
      mismatch(n, ref, mine, *theirs);
      return "";
    }
    return ref;
  }

  void mismatch(const onnx::NodeProto& n, const std::string& ref,
                const std::pair<std::string, std::string>& mine,
                const std::pair<std::string, std::string>& theirs) {
    result_.warnings.push_back(
        {"ge-edge-mismatch",
         fmt::format("node '{}': its input from '{}' is described as [{}] {} but '{}' gives [{}] "
                     "{}; the input keeps its own descriptor and no edge (ordering kept)",
                     n.name(), ref, mine.first, mine.second, ref, theirs.first, theirs.second)});
  }

  std::size_t desc_count(const onnx::NodeProto& n, const char* side, std::size_t fallback) const {
    const auto* a = attr(n, fmt::format("{}_desc_nums", side));
    if (a != nullptr && a->type() == onnx::AttributeProto::INT && a->i() >= 0) {
      return static_cast<std::size_t>(a->i());
    }
    return fallback;
  }

  GraphOp make_op(const onnx::NodeProto& n, const std::string& type,
                  const std::unordered_map<std::string, const onnx::NodeProto*>& by_name) {
    GraphOp op;
    op.pos = op.after_pos = op.shapes_pos = pos_;
    op.text.name = n.name();
    op.text.type = type;
    std::vector<std::string> shapes, dtypes, out_shapes, out_dtypes, after, inputs;
    std::size_t data_index = 0;
    for (const auto& in : n.input()) {
      if (in.empty()) {  // an optional input left out keeps its index
        ++data_index;
        continue;
      }
      const auto colon = in.rfind(':');
      if (colon == std::string::npos) fail(n, fmt::format("input '{}': expected <node>:<index>", in));
      const std::string src = in.substr(0, colon);
      std::int64_t idx = 0;
      const auto [p, ec] = std::from_chars(in.data() + colon + 1, in.data() + in.size(), idx);
      if (ec != std::errc() || p != in.data() + in.size()) {
        fail(n, fmt::format("input '{}': expected <node>:<index>", in));
      }
      const auto it = by_name.find(src);
      if (it == by_name.end()) fail(n, fmt::format("input '{}' names no node of the dump", in));
      const bool producer_is_op = !is_source_or_sink(cann_type(*it->second));
      // A subgraph node is not imported (warned about where it is skipped): no edge to it.
      const bool producer_kept = producer_is_op && it->second->op_type() != "subgraph";
      if (producer_kept && std::find(after.begin(), after.end(), src) == after.end()) {
        after.push_back(src);
      }
      if (idx < 0) continue;  // control edge: ordering only
      auto d = desc(n, "input", data_index++);
      inputs.push_back(producer_kept || !producer_is_op ? edge(n, *it->second, idx, d) : "");
      shapes.push_back(std::move(d.first));
      dtypes.push_back(std::move(d.second));
    }
    const std::size_t outs = desc_count(n, "output", static_cast<std::size_t>(n.output_size()));
    for (std::size_t i = 0; i < std::max<std::size_t>(outs, 1); ++i) {
      if (i >= outs && attr(n, fmt::format("output_desc_dtype:{}", i)) == nullptr) break;
      auto [s, d] = desc(n, "output", i);
      out_shapes.push_back(std::move(s));
      out_dtypes.push_back(std::move(d));
    }
    op.text.input_shapes = fmt::format("{}", fmt::join(shapes, ";"));
    op.text.input_dtypes = fmt::format("{}", fmt::join(dtypes, ";"));
    op.text.output_shapes = fmt::format("{}", fmt::join(out_shapes, ";"));
    op.text.output_dtypes = fmt::format("{}", fmt::join(out_dtypes, ";"));
    // The CANN op attributes (transpose_x1, axes, ...); descriptors and GE bookkeeping are not.
    for (const auto& a : n.attribute()) {
      const std::string& k = a.name();
      if (k.rfind("input_desc", 0) == 0 || k.rfind("output_desc", 0) == 0 || k == "id" ||
          k == "stream_id" || k == "workspace_bytes") {
        continue;
      }
      switch (a.type()) {
        case onnx::AttributeProto::INT:
          op.text.attrs.emplace_back(k, std::to_string(a.i()));
          break;
        case onnx::AttributeProto::FLOAT:
          op.text.attrs.emplace_back(k, fmt::format("{}", a.f()));
          break;
        case onnx::AttributeProto::STRING:
          op.text.attrs.emplace_back(k, a.s());
          break;
        case onnx::AttributeProto::INTS:
          op.text.attrs.emplace_back(k, fmt::format("{}", fmt::join(a.ints(), ",")));
          break;
        default:
          break;  // tensors, graphs, float lists: not read by the op models
      }
    }
    if (const auto* s = attr(n, "stream_id"); s != nullptr && s->type() == onnx::AttributeProto::INT) {
      op.stream = std::max<std::int64_t>(0, s->i());
    }
    op.after = std::move(after);
    op.inputs = std::move(inputs);
    op.inputs_pos = pos_;
    op.output_shapes_pos = pos_;
    return op;
  }

  std::filesystem::path file_;
  SourcePos pos_;
  std::vector<GraphOp> ops_;
  std::vector<GraphInput> inputs_;                        // Data / Const sources, by first use
  std::unordered_map<std::string, std::size_t> input_index_;  // name -> index into inputs_
  ImportResult result_;
};

}  // namespace

ImportResult import_ge_dump(const std::filesystem::path& file) { return GeImporter(file).run(); }

}  // namespace npusim::frontend
