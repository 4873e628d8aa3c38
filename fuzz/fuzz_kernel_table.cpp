// libFuzzer harness: the kernel table reader (op_summary_*.csv, kernel_details.csv,
// OpBasicInfo.csv), the table every analysis, accuracy check and calibration starts from; read
// both ways the CLI reads it (damaged rows skipped and counted, and --strict).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/error.h"
#include "profile/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace p = npusim::profile;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const bool strict : {false, true}) {
    try {
      std::int64_t last_end = 0;
      (void)p::read_kernel_table_text("kernel_details.csv", text,
                                      [&](const p::KernelRow& row) { last_end = row.end_ns(); },
                                      p::ReadOptions{strict});
      (void)last_end;
    } catch (const npusim::InputError&) {
    }
  }
  return 0;
}
