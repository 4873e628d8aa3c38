// libFuzzer harness: a sweep result read back from JSON (`npusim sweep merge` of shards).
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/error.h"
#include "sim/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const npusim::sim::SweepResult r = npusim::sim::sweep_from_json(text, "fuzz.json");
    (void)npusim::sim::sweep_to_json(r);
    (void)npusim::sim::merge_sweeps({r}, {"fuzz.json"});
  } catch (const npusim::InputError&) {
  }
  return 0;
}
