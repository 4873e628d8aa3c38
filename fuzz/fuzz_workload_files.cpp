// libFuzzer harness: the two plain-text files a scenario's workload may name, an arrival trace
// (`trace_file`, "arrival_us,batch_size" lines) and a batch-size sample file (`batch_size =
// "file"`). Each input is read as both, through a fixed scenario that names it.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "sim/scenario.h"

namespace {
constexpr const char* kHead = R"([scenario]
name = "fuzz"
hw = "ascend910b3"

[graph]
name = "g"
[[graph.op]]
name = "a"
type = "Add"
shapes = "B,16;B,16"
dtypes = "FLOAT16"

[deployment]
gears = [1, 8]

)";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace f = npusim::fuzz;
  static const auto trace_scenario = f::write_file(
      "trace.toml", std::string(kHead) +
                        "[workload]\narrival = \"trace\"\ntrace_file = \"input.txt\"\n");
  static const auto sizes_scenario = f::write_file(
      "sizes.toml", std::string(kHead) +
                        "[workload]\nrate_qps = 100\nrequests = 10\nbatch_size = \"input.txt\"\n");
  (void)f::write_file("input.txt", data, size);
  try {
    (void)npusim::sim::load_scenario(trace_scenario);
  } catch (const npusim::InputError&) {
  }
  try {
    (void)npusim::sim::load_scenario(sizes_scenario);
  } catch (const npusim::InputError&) {
  }
  return 0;
}
