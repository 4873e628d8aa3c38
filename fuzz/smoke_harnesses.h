#pragma once
// The fuzz smoke's harnesses (fuzz/CMakeLists.txt): each harness's LLVMFuzzerTestOneInput,
// renamed, compiled into the one `fuzz_smoke` program and looked up by the harness's name.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace npusim::fuzz {

struct SmokeHarness {
  const char* name;                                       // fuzz_csv, fuzz_onnx, ...
  int (*run)(const std::uint8_t* data, std::size_t size);  // its LLVMFuzzerTestOneInput
};

/// Every harness, in the order fuzz/CMakeLists.txt declares them (defined in the generated
/// smoke_harnesses.cpp).
const std::vector<SmokeHarness>& smoke_harnesses();

}  // namespace npusim::fuzz
