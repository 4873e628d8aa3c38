// libFuzzer harness: a standalone graph file (`[graph]` with `[[graph.op]]` tables), through
// the loader `npusim validate` and scenarios use.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "model/graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = npusim::fuzz::write_file("graph.toml", data, size);
  try {
    const npusim::Graph g = npusim::load_graph_file(file);
    for (std::size_t i = 0; i < g.size(); ++i) (void)g.instantiate(i, 3);
  } catch (const npusim::InputError&) {
  }
  return 0;
}
