#pragma once
// From one ONNX node to the CANN ops ATC makes of it (internal to frontend/). The table follows
// ../shared/research/onnx_to_cann_ops.tsv (ATC's op plugins, opsets 8-18): most ops map to one
// CANN type, some expand to a few (Gemm -> MatMulV2 + Add, ArgMax -> ArgMaxV2 + ExpandDims, ...).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/import.h"
#include "model/graph.h"

namespace npusim::frontend {

/// A tensor with its shape template (dimensions k or k*B) and CANN dtype name.
struct LTensor {
  std::string id;                    ///< ONNX value name, or "<op>:<i>" for an expansion's own
  std::vector<DimTemplate> shape;
  std::string dtype;                 ///< "FLOAT16", "INT64", ...
};

/// `3,B*4` for a shape template; "" for a scalar.
[[nodiscard]] std::string shape_text(const std::vector<DimTemplate>& shape);

/// One CANN op made from a node.
struct LOp {
  std::string suffix;                ///< "" = the node's own name, else "<node>/<suffix>"
  std::string type;                  ///< CANN op type
  std::vector<LTensor> inputs;       ///< by id; an id nobody produces is a constant
  std::vector<LTensor> outputs;
  std::vector<std::pair<std::string, std::string>> attrs;
};

/// A node as the lowering sees it: inputs with their inferred shapes (nullopt: an optional input
/// left out), outputs with theirs, and the integer values of constant inputs where known.
struct NodeView {
  const onnx::NodeProto* node = nullptr;
  std::string name;  ///< unique op name in the graph
  std::vector<std::optional<LTensor>> inputs;
  std::vector<LTensor> outputs;
  std::function<std::optional<std::vector<std::int64_t>>(std::size_t)> int_values;
};

/// The CANN ops of a node (several when ATC expands it) and what is worth a warning.
struct Lowering {
  std::vector<LOp> ops;
  std::vector<ImportWarning> warnings;
};

/// True when ATC's plugins map this default-domain op type (the .tsv's names).
[[nodiscard]] bool atc_maps(const std::string& onnx_type);

/// Lowers one node of the default ONNX domain.
[[nodiscard]] Lowering lower_node(const NodeView& v);

}  // namespace npusim::frontend
