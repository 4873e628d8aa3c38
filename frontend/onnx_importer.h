#pragma once
// The ONNX importer (internal to frontend/): its passes and the state they share. Defined in two
// files: onnx_import.cpp (the checks, the order of the nodes, the lowering node by node to graph
// ops) and onnx_infer.cpp (the batch dimension, ONNX's shape inference at two batch sizes with
// the constant folding of shape arithmetic, and the shape templates k or k*B read off the two).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/import.h"
#include "frontend/onnx_lower.h"
#include "model/error.h"
#include "model/graph.h"

namespace npusim::frontend::onnx_detail {

// ONNX 1.12 (Debian 12) infers shapes for the default domain up to opset 17; ATC's plugins are
// registered for opsets 8-18 (../shared/research/onnx_import.md).
constexpr std::int64_t kInferenceMaxOpset = 17;
constexpr std::int64_t kAtcMaxOpset = 18;
constexpr std::int64_t kAtcMinOpset = 8;
// Two batch sizes for the two inference runs: a dimension equal in both is a constant, one that
// scales with them is k*B. Any two distinct values would do; these are not dimensions models
// commonly have, which keeps error messages readable.
constexpr std::int64_t kBatchA = 8;
constexpr std::int64_t kBatchB = 24;

// A tensor as one inference run left it.
struct RunInfo {
  std::vector<std::int64_t> dims;  // -1 = unknown
  std::int32_t elem = 0;
  bool has_shape = false;
};
using RunMap = std::unordered_map<std::string, RunInfo>;

/// One import: `OnnxImporter(file, options).run()`; every error is an InputError at the file.
class OnnxImporter {
 public:
  OnnxImporter(const std::filesystem::path& file, const OnnxImportOptions& options)
      : file_(file), pos_{file.string(), 0, 0}, options_(options) {}

  ImportResult run();

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(pos_, what); }

  std::string node_label(int i) const;
  void check_opsets();
  void warn(std::string code, std::string message);
  void collect_constants();

  // Graph inputs that are not initializers (IR < 4 lists initializers as inputs too).
  std::vector<const onnx::ValueInfoProto*> real_inputs() const;

  void choose_batch();

  // The model with every symbolic input dimension given its value (the batch one `batch`).
  onnx::ModelProto with_sizes(std::int64_t batch) const;

  // Runs ONNX's inference on `m`: strict, then lax with a warning. `data` receives what data
  // propagation computed (values of shape arithmetic).
  void infer_once(onnx::ModelProto& m, std::int64_t batch,
                  std::unordered_map<std::string, onnx::TensorShapeProto>& data,
                  const std::function<void(onnx::ModelProto&)>& prepare);

  // ONNX 1.12 propagates shape arithmetic (Shape -> Slice -> Concat) but only Reshape reads the
  // result: a Tile or Expand whose multiples come from it loses its shape. So each fully known
  // propagated value becomes an initializer (its producing node dropped from the copy) and
  // inference reruns, until nothing new is known: the constant folding GE does for a static gear.
  RunMap infer(std::int64_t batch,
               std::unordered_map<std::string, std::vector<std::int64_t>>& values);

  static std::string first_line(const std::string& s);

  // Kahn's algorithm over value names, smallest node index first: file order where the data
  // allows it. A node reading a value nobody defines, or a cycle, is an error naming the node.
  void order_nodes();

  // The template of a tensor from the two runs; nullopt when a run has no full shape.
  std::optional<std::vector<DimTemplate>> shape_of(const std::string& name, int node) const;

  std::string diagnose_missing(int i, const std::string& out) const;

  // A Conv or ConvTranspose without kernel_shape takes it from its weight's dims; Debian's
  // libonnx 1.12 then indexes its per-axis attributes (sized by the input's rank) with the
  // weight's rank and reads past them when the two differ (fuzz_onnx: a SEGV in
  // convPoolShapeInference). Written out from an initializer weight, as ONNX defines it, the
  // mismatch is a shape-inference error instead. A weight computed at run time keeps the gap.
  void spell_out_kernel_shapes();

  // Before ONNX's inference sees them: every node must match its schema, and Loop and Scan are
  // refused (ATC maps neither). Debian's libonnx 1.12 dereferences what a malformed node lacks
  // (fuzz_onnx: a Scan without its body, a Shape with a missing input, both SEGVs).
  void check_nodes() const;

  void lower_all();
  LTensor nonzero_bound(const NodeView& v, const std::string& out);
  LTensor tensor(const std::string& name, int node) const;

  // One CANN op as a graph op with tensor edges: an input produced by an earlier op reads
  // "<op>:<k>"; an ONNX graph input, initializer or folded constant is a [[graph.input]] of the
  // same name (constant = true for the latter); an input the mapping adds (GatherV2's axis) has
  // no edge and is described by the op's own `shapes` / `dtypes`.
  void emit(const NodeView& v, const LOp& op,
            std::unordered_map<std::string, std::pair<std::string, std::size_t>>& producer_op);

  // The [[graph.input]] for a tensor no op produces (declared once, on first use).
  std::string graph_input(const LTensor& t);

  std::vector<GraphInput> graph_inputs_;
  std::unordered_map<std::string, std::size_t> input_index_;
  std::filesystem::path file_;
  SourcePos pos_;
  OnnxImportOptions options_;
  onnx::ModelProto model_;
  std::int64_t opset_ = 0;
  std::string batch_;
  std::map<std::string, std::int64_t> set_dims_;
  std::unordered_set<std::string> static_;
  std::unordered_map<std::string, std::vector<std::int64_t>> ints_;
  RunMap run_a_;
  RunMap run_b_;
  bool strict_warned_ = false;
  std::vector<std::string> node_names_;
  std::vector<int> order_;
  std::vector<GraphOp> ops_;
  ImportResult result_;
};

}  // namespace npusim::frontend::onnx_detail
