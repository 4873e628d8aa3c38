// libFuzzer harness: the CSV reader every profile table goes through (profile/csv_reader.h).
// A bad file may only end in an InputError; any other exception, crash, sanitizer report or
// hang is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "profile/csv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = npusim::fuzz::write_file("input.csv", data, size);
  try {
    npusim::profile::CsvReader r(file);
    std::size_t chars = 0;
    for (const std::string& h : r.header()) chars += h.size();
    while (r.next()) {
      for (std::size_t i = 0; i <= r.size(); ++i) chars += r.field(i).size();  // one past: empty
      (void)r.line();
    }
    (void)chars;
  } catch (const npusim::InputError&) {
  }
  return 0;
}
