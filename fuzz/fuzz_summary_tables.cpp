// libFuzzer harness: the small profile tables (op_statistic, task_time, api_statistic, pcie).
// Each input goes to all four readers: they share the CSV reader and the column table but each
// has its own required columns and numeric fields.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "profile/readers.h"

namespace {
template <class F>
void expect_input_error_only(F&& read) {
  try {
    read();
  } catch (const npusim::InputError&) {
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace p = npusim::profile;
  const auto file = npusim::fuzz::write_file("summary.csv", data, size);
  expect_input_error_only([&] { (void)p::read_op_statistic(file); });
  expect_input_error_only([&] { (void)p::read_task_time(file); });
  expect_input_error_only([&] { (void)p::read_api_statistic(file); });
  expect_input_error_only([&] { (void)p::read_pcie(file); });
  return 0;
}
