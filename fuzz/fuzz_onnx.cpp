// libFuzzer harness: an ONNX model file (binary protobuf) through import_onnx, the way
// `npusim graph from-onnx` and a scenario's `[graph] onnx = ...` read it: protobuf parsing,
// ONNX's own checker and shape inference (Debian's libonnx, not instrumented, so the fuzzer
// steers by our lowering code's coverage), the ATC op mapping and the graph it builds. The
// imported graph's ops are instantiated as the simulator would. Seeds: the example models
// (`graph example-onnx`), written by fuzz_seed_onnx.
#include <cstddef>
#include <cstdint>

#include "frontend/import.h"
#include "fuzz/fuzz_input.h"
#include "model/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = npusim::fuzz::write_file("model.onnx", data, size);
  try {
    const auto r = npusim::frontend::import_onnx(file);
    for (std::size_t i = 0; i < r.graph.size(); ++i) (void)r.graph.instantiate(i, 2);
  } catch (const npusim::InputError&) {
  }
  return 0;
}
