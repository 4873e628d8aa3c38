// libFuzzer harness: a GE graph dump (`ge_onnx_*_Build.pbtxt`, protobuf text format with `ge:`
// op types and tensor descriptors as attributes) through import_ge_dump, as `npusim graph
// from-ge` reads it; the imported ops are instantiated as the simulator would. Seeds:
// fuzz/seeds/ge_dump (the encoding of ../shared/research/onnx_import.md section 4, as the
// frontend tests write it).
#include <cstddef>
#include <cstdint>

#include "frontend/import.h"
#include "fuzz/fuzz_input.h"
#include "model/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = npusim::fuzz::write_file("ge_onnx_00000001_graph_1_Build.pbtxt", data, size);
  try {
    const auto r = npusim::frontend::import_ge_dump(file);
    for (std::size_t i = 0; i < r.graph.size(); ++i) (void)r.graph.instantiate(i, 2);
  } catch (const npusim::InputError&) {
  }
  return 0;
}
