#pragma once
// OpDesc: one operator as profiles write it (op type, input/output shapes, dtypes, formats,
// attributes) and where it runs. Strings are parsed once here; predict() reads typed fields only.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/error.h"

namespace npusim {

/// Element types, spelled by CANN as FLOAT16 / DT_FLOAT16 / float16 / fp16 ...
enum class DType : std::uint8_t {
  kFloat16, kBFloat16, kFloat32, kHFloat32, kFloat64, kInt4, kInt8, kUInt8, kInt16, kUInt16,
  kInt32, kUInt32, kInt64, kUInt64, kBool, kComplex64, kComplex128,
  kUndefined  ///< an absent optional tensor (profiles write DT_UNDEFINED): no bytes
};
/// Bytes per element (int4: 0.5). Inline: predict() calls it for every tensor.
[[nodiscard]] inline double dtype_bytes(DType d) noexcept {
  switch (d) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt16:
    case DType::kUInt16:
      return 2;
    case DType::kFloat32:
    case DType::kHFloat32:
    case DType::kInt32:
    case DType::kUInt32:
      return 4;
    case DType::kFloat64:
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kComplex64:
      return 8;
    case DType::kComplex128:
      return 16;
    case DType::kInt4:
      return 0.5;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return 1;
    case DType::kUndefined:
      return 0;
  }
  return 4;
}
/// Canonical CANN spelling ("FLOAT16").
[[nodiscard]] const char* dtype_name(DType d) noexcept;
/// Accepts every spelling profiles and users write; nullopt when unknown.
[[nodiscard]] std::optional<DType> parse_dtype(std::string_view s) noexcept;
/// True for 64-bit integers, which have no vector arithmetic path on 220x. Inline: the
/// reduction and elementwise builders ask on every prediction, and out of line the call made
/// them spill their registers around it.
[[nodiscard]] constexpr bool is_int64(DType d) noexcept {
  return d == DType::kInt64 || d == DType::kUInt64;
}

/// Tensor layouts. ND is plain row-major; NZ is the cube's fractal layout.
enum class Format : std::uint8_t {
  kND, kNCHW, kNHWC, kNC1HWC0, kFractalNZ, kFractalZ, kNDHWC, kNCDHW, kHWCN, kC1HWNCoC0, kOther
};
[[nodiscard]] const char* format_name(Format f) noexcept;
/// The tiled layouts (NC1HWC0, FRACTAL_NZ, FRACTAL_Z, C1HWNCoC0): their bytes are not a plain
/// tensor's of the same shape, and a view (a reshape) cannot turn one into the other.
[[nodiscard]] constexpr bool is_tiled(Format f) noexcept {
  return f == Format::kNC1HWC0 || f == Format::kFractalNZ || f == Format::kFractalZ ||
         f == Format::kC1HWNCoC0;
}
/// Accepts ND, FORMAT_ND, NZ, FRACTAL_NZ, FORMAT_FRACTAL_NZ, NC1HWC0, ...; nullopt when unknown.
[[nodiscard]] std::optional<Format> parse_format(std::string_view s) noexcept;

/// Where an op runs. AI_CORE ops are cube, vector or mix (both).
enum class Placement : std::uint8_t { kCube, kVector, kMix, kAicpu, kHost };
[[nodiscard]] const char* placement_name(Placement p) noexcept;
/// Accepts cube/AI_CORE(cube)/vector/AI_VECTOR_CORE/mix/MIX_AIC/MIX_AIV/aicpu/AI_CPU/host ...
[[nodiscard]] std::optional<Placement> parse_placement(std::string_view s) noexcept;

/// Cost-model families (DESIGN.md "model").
enum class OpFamily : std::uint8_t {
  kCube, kElementwise, kReduction, kDataMovement, kIndex, kSort, kAicpu, kGeneric
};
[[nodiscard]] const char* family_name(OpFamily f) noexcept;

/// One tensor. A scalar has an empty shape.
struct TensorDesc {
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFloat16;
  Format format = Format::kND;
  /// Number of elements (1 for a scalar). Shapes are checked at parse time not to overflow.
  [[nodiscard]] std::int64_t elements() const noexcept {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  /// Bytes of the tensor.
  [[nodiscard]] double bytes() const noexcept {
    return static_cast<double>(elements()) * dtype_bytes(dtype);
  }
};

/// The operator kinds the model knows, resolved once from the op type string through the one
/// table in model/op_table.cpp. Each kind belongs to one family.
struct OpKindInfo;

/// One operator instance.
struct OpDesc {
  std::string name;  ///< instance name (op name in a profile), may be empty
  std::string type;  ///< op type as CANN spells it ("MatMulV2", "ConcatD", ...)
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;  ///< may be empty: the model infers them
  std::vector<std::pair<std::string, std::string>> attrs;
  std::optional<Placement> placement;  ///< as given (profile task type / user); else the family's
  const OpKindInfo* kind = nullptr;    ///< resolved by make_op(); never null after it

  /// Attribute value as a string, or nullopt.
  [[nodiscard]] std::optional<std::string_view> attr(std::string_view key) const noexcept;
  /// Attribute as a number, or `fallback` when absent. Throws InputError when not a number.
  [[nodiscard]] double attr_number(std::string_view key, double fallback) const;
  /// Attribute as a boolean (true/false/1/0), or `fallback` when absent.
  [[nodiscard]] bool attr_bool(std::string_view key, bool fallback) const;
  /// A list attribute ("1,1,2,2", "[0, -1]") read into `out`; returns how many integers were read
  /// (0 when absent). Never allocates.
  std::size_t attr_ints(std::string_view key, std::array<std::int64_t, 8>& out) const noexcept;
};

/// An attribute value as OpDesc::attr_number reads it (surrounding quotes and blanks ignored);
/// nullopt when it is not a finite number.
[[nodiscard]] std::optional<double> parse_attr_number(std::string_view value) noexcept;

/// Parses a profile-style shape list: "1,4000;400,1" -> {{1,4000},{400,1}}.
/// An empty item ("" or between two ';') is a scalar. Surrounding quotes and spaces are ignored.
/// Throws InputError (at `pos`) on a non-integer, a dim <= 0, or an element count over 2^63.
[[nodiscard]] std::vector<std::vector<std::int64_t>> parse_shape_list(std::string_view text,
                                                                      const SourcePos& pos);
/// Parses "INT64;FLOAT16". Throws InputError naming the unknown dtype and the accepted spellings.
[[nodiscard]] std::vector<DType> parse_dtype_list(std::string_view text, const SourcePos& pos);
/// Parses "ND;FRACTAL_NZ". Throws InputError on an unknown format.
[[nodiscard]] std::vector<Format> parse_format_list(std::string_view text, const SourcePos& pos);

/// Text fields of one op as a profile row or a command line gives them.
struct OpText {
  std::string name;
  std::string type;
  std::string input_shapes;
  std::string input_dtypes;
  std::string input_formats;   ///< may be empty: ND everywhere
  std::string output_shapes;   ///< may be empty: inferred
  std::string output_dtypes;
  std::string output_formats;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::string placement;  ///< may be empty: the family's default
};

/// Builds a validated OpDesc. Counts of shapes, dtypes and formats must agree (a single dtype
/// or format is broadcast to every tensor). Unknown op types resolve to the generic family.
/// Throws InputError at `pos`.
[[nodiscard]] OpDesc make_op(const OpText& text, const SourcePos& pos);

}  // namespace npusim
