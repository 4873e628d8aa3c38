#include "model/op_cost.h"

#include <fmt/format.h>

namespace npusim {

const char* bound_name(Bound b) noexcept {
  switch (b) {
    case Bound::kCube: return "cube";
    case Bound::kVector: return "vector";
    case Bound::kScalar: return "scalar";
    case Bound::kMemory: return "memory";
    case Bound::kHead: return "head";
    case Bound::kHost: return "host";
  }
  return "?";
}

std::vector<std::string> warning_texts(std::uint32_t flags, const std::string& op_type) {
  std::vector<std::string> out;
  if (flags & kWarnUnknownOpType) {
    out.push_back(fmt::format("unknown op type '{}': costed with the generic memory + vector model",
                              op_type));
  }
  if (flags & kWarnInt64ScalarFallback) {
    out.push_back(fmt::format("{}: int64 has no vector path here; costed on the scalar unit (cast "
                              "to int32/fp32 where values fit)",
                              op_type));
  }
  if (flags & kWarnOutputInferred) {
    out.push_back(fmt::format("{}: output shape or dtype not given and not derivable from the "
                              "inputs; give --output-shapes/--output-dtypes for an exact answer",
                              op_type));
  }
  if (flags & kWarnShapeMismatch) {
    out.push_back(fmt::format("{}: inputs do not match the op's expected shapes; best-effort estimate",
                              op_type));
  }
  if (flags & kWarnExceedsDeviceMemory) {
    out.push_back(fmt::format("{}: its tensors (inputs read + outputs written) exceed the chip's "
                              "device memory (hbm_bytes); no card can run it as given: check the "
                              "shapes",
                              op_type));
  }
  return out;
}

}  // namespace npusim
