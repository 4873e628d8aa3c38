#pragma once
// Shared helpers for model tests: chips loaded once from the source tree's hw_specs/.

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <string>

#include "model/hw_spec.h"
#include "model/op_desc.h"

namespace npusim::test {

/// A chip spec from hw_specs/, loaded once per test binary.
inline const HwSpec& chip(const std::string& name) {
  static std::map<std::string, HwSpec> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    const auto path = std::filesystem::path(NPUSIM_SOURCE_DIR) / "hw_specs" / (name + ".toml");
    it = cache.emplace(name, load_hw_spec(path)).first;
  }
  return it->second;
}

/// The 910B3 with round vector figures for hand-computed cases: 1000 MHz, 256-byte repeats,
/// 22 cycles per API call, 1 cycle per repeat (2 for binary ops).
inline HwSpec toy_vector_chip() {
  HwSpec hw = npusim::test::chip("ascend910b3");
  hw.chip.freq_mhz = 1000;
  hw.vector.repeat_bytes = 256;
  hw.vector.api_overhead_cycles = 22;
  hw.vector.tik_issue_cycles = 8;
  hw.vector.cycles_per_repeat.fill(1);
  hw.vector.cycles_per_repeat[static_cast<std::size_t>(VectorClass::kBinary)] = 2;
  return hw;
}

inline OpDesc op(const OpText& t) { return make_op(t, SourcePos{"<test>", 0, 0}); }

/// Builds an op from its type, shapes and dtypes (profile syntax) and attributes.
inline OpDesc op(const std::string& type, const std::string& shapes, const std::string& dtypes,
                 std::vector<std::pair<std::string, std::string>> attrs = {},
                 const std::string& formats = "") {
  OpText t;
  t.type = type;
  t.input_shapes = shapes;
  t.input_dtypes = dtypes;
  t.input_formats = formats;
  t.attrs = std::move(attrs);
  return make_op(t, SourcePos{"<test>", 0, 0});
}

/// Builds an op from its inputs' and outputs' shapes, dtypes and formats (profile syntax).
inline OpDesc op_io(const std::string& type, const std::string& shapes, const std::string& dtypes,
                    const std::string& formats, const std::string& out_shapes,
                    const std::string& out_dtypes, const std::string& out_formats) {
  OpText t;
  t.type = type;
  t.input_shapes = shapes;
  t.input_dtypes = dtypes;
  t.input_formats = formats;
  t.output_shapes = out_shapes;
  t.output_dtypes = out_dtypes;
  t.output_formats = out_formats;
  return op(t);
}

}  // namespace npusim::test
