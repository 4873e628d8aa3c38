#pragma once
// A `[graph]` table may name a model file instead of listing ops: `onnx = "model.onnx"` (with
// optional `batch_dim = "N"` and `dims = { seq = 128 }`). Importing it needs the frontend library,
// which model does not use (DESIGN.md: model uses nothing), so the program that links it (the CLI)
// hands an importer in once, at start-up, before any scenario is read.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/error.h"

namespace npusim {

class Graph;

/// A model file named by a `[graph]` table, with its import options.
struct ModelFileRequest {
  std::filesystem::path file;  ///< resolved against the scenario's folder
  std::string batch_dim;       ///< "" = the importer's default
  std::vector<std::pair<std::string, std::int64_t>> dims;  ///< sizes of other symbolic dims
  SourcePos pos;               ///< the `onnx` value, for errors
};

/// Builds a Graph from a model file; throws InputError. Must be safe to call from several
/// threads (sweeps load scenarios in parallel).
using ModelFileImporter = std::function<Graph(const ModelFileRequest&)>;

/// Installs the importer (once, before scenarios are loaded; not synchronised with readers).
void set_model_file_importer(ModelFileImporter importer);

/// Imports through the installed importer. Throws InputError at request.pos when none is.
[[nodiscard]] Graph import_model_file(const ModelFileRequest& request);

}  // namespace npusim
