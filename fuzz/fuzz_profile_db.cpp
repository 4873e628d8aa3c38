// libFuzzer harness: the profiler's SQLite exports (ascend_pytorch_profiler_<rank>.db,
// msprof_<ts>.db) through read_db_kernels, damaged rows skipped and --strict. Most mutations of
// a database file are rejected by SQLite's own checks; the seeds (built by scripts/fuzz.sh with
// python3's sqlite3 from fuzz/seeds/profile_db/*.sql) get the fuzzer past them to the schema and
// row handling that are ours.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_input.h"
#include "model/error.h"
#include "profile/db_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace p = npusim::profile;
  const auto file = npusim::fuzz::write_file("msprof_0.db", data, size);
  for (const bool strict : {false, true}) {
    try {
      std::int64_t last_end = 0;
      (void)p::read_db_kernels(file, [&](const p::KernelRow& row) { last_end = row.end_ns(); },
                               p::ReadOptions{strict});
      (void)last_end;
    } catch (const npusim::InputError&) {
    }
  }
  return 0;
}
