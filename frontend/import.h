#pragma once
// Model importers: an ONNX file or a GE graph dump becomes a Graph of CANN op types, the way ATC
// would compile it (docs/import.md). The public API speaks npusim types only; protobuf and ONNX
// stay inside frontend/.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "model/graph.h"

namespace npusim::frontend {

/// A named warning of an import: something the graph keeps but a user should know.
struct ImportWarning {
  std::string code;     ///< stable name, e.g. "onnx-unmapped-op"
  std::string message;  ///< names the node and what was done about it
};

/// `message [code]`, the form the CLI prints after "warning: ".
[[nodiscard]] std::string format_warning(const ImportWarning& w);

/// What an importer built.
struct ImportResult {
  Graph graph;
  std::vector<ImportWarning> warnings;
  std::string batch_symbol;   ///< the input dimension that became `B` ("" = none: fixed shapes)
  std::size_t nodes = 0;      ///< nodes in the source graph
  std::size_t constants = 0;  ///< initializers, Constant / ConstantOfShape and folded nodes
};

/// Options of `npusim graph from-onnx`.
struct OnnxImportOptions {
  /// The symbolic input dimension that is the batch (becomes `B`). Empty: the one symbolic
  /// dimension found at axis 0 of the graph inputs, if there is exactly one.
  std::string batch_dim;
  /// Values for the other symbolic dimensions (`--set-dim seq=128`), and for the batch one when
  /// the graph should have fixed shapes.
  std::vector<std::pair<std::string, std::int64_t>> set_dims;
};

/// Imports an ONNX model: a binary `.onnx` file, or protobuf text format when the name ends in
/// `.txt`, `.pbtxt`, `.prototxt` or `.onnxtxt`. Runs ONNX's shape inference (data propagation
/// on; strict, then lax with a warning), folds shape arithmetic on constants, maps ops to CANN
/// types as ATC does. Throws InputError naming the file (and the node) for an unreadable file, a
/// cycle, an opset ATC does not map, Loop/Scan, an op of an unknown domain, a tensor whose shape
/// inference could not find, or a symbolic dimension without a value.
[[nodiscard]] ImportResult import_onnx(const std::filesystem::path& file,
                                       const OnnxImportOptions& options = {});

/// Imports a GE graph dump (`ge_onnx_*_Build.pbtxt`, DUMP_GE_GRAPH=1 or 2): `ge:` op types,
/// logical shapes from `origin_shape`, data and control edges. Data, Const and NetOutput nodes
/// are not ops. Throws InputError naming the node for a missing descriptor or an unreadable file.
[[nodiscard]] ImportResult import_ge_dump(const std::filesystem::path& file);

/// Names of the example models example_onnx_model() writes ("rec", "cnn", "attention", "mlp").
[[nodiscard]] const std::vector<std::string>& example_model_names();
/// A small example ONNX model (binary protobuf bytes), built in C++ so nothing is downloaded:
/// "rec" a DLRM/DeepFM-like ranking model, "cnn" a small CNN, "attention" one attention block,
/// "mlp" an MLP with a symbolic batch. Throws InputError for an unknown name.
[[nodiscard]] std::string example_onnx_model(const std::string& name);

}  // namespace npusim::frontend
