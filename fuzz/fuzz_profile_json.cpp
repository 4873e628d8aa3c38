// libFuzzer harness: the profile JSON readers on the same input: a timeline (torch_npu's
// trace_view.json, msprof_*.json) as a per-op time source (read_trace_kernels, damaged events
// skipped and --strict) and for its facts (read_trace_json), and torch_npu's
// profiler_info_<rank>.json (read_profiler_info).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "profile/readers.h"
#include "profile/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace p = npusim::profile;
  const auto file = npusim::fuzz::write_file("trace_view.json", data, size);
  for (const bool strict : {false, true}) {
    try {
      std::int64_t last_end = 0;
      (void)p::read_trace_kernels(file, [&](const p::KernelRow& row) { last_end = row.end_ns(); },
                                  p::ReadOptions{strict});
      (void)last_end;
    } catch (const npusim::InputError&) {
    }
  }
  try {
    (void)p::read_trace_json(file);
  } catch (const npusim::InputError&) {
  }
  try {
    (void)p::read_profiler_info(file);
  } catch (const npusim::InputError&) {
  }
  return 0;
}
