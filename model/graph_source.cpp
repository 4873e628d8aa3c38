#include "model/graph_source.h"

#include "model/graph.h"

namespace npusim {

namespace {

// Set once by main() before any scenario is read, then only read: no lock needed.
ModelFileImporter& importer() {
  static ModelFileImporter instance;
  return instance;
}

}  // namespace

void set_model_file_importer(ModelFileImporter imp) { importer() = std::move(imp); }

Graph import_model_file(const ModelFileRequest& request) {
  if (!importer()) {
    throw InputError(request.pos, "[graph].onnx: this program was built without the model "
                                  "importer (use the npusim CLI, or `npusim graph from-onnx` "
                                  "and `file = \"graph.toml\"`)");
  }
  return importer()(request);
}

}  // namespace npusim
