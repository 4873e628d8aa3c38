// Writes the example ONNX models (`npusim graph example-onnx`) into a folder: the seeds of
// fuzz_onnx, since the repository keeps no binary model. Used by scripts/fuzz.sh.
#include <fstream>
#include <iostream>
#include <string>

#include "frontend/import.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seed_onnx FOLDER\n";
    return 2;
  }
  for (const auto& name : npusim::frontend::example_model_names()) {
    std::ofstream out(std::string(argv[1]) + "/" + name + ".onnx", std::ios::binary);
    out << npusim::frontend::example_onnx_model(name);
    if (!out) {
      std::cerr << "fuzz_seed_onnx: cannot write " << argv[1] << "/" << name << ".onnx\n";
      return 1;
    }
  }
  return 0;
}
