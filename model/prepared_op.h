#pragma once
// PreparedOp: an OpDesc with everything the cost model derives from the op alone computed once
// (issue #16: predict() at >= 15 M/s). predict() on a PreparedOp reads these facts; everything
// that depends on the chip (HwSpec, which calibration changes between calls) or on the core
// budget is still computed on every call -- nothing here memoises an answer.
//
// Invalidation: a PreparedOp owns a copy of its OpDesc and exposes it read-only, so its facts
// cannot go stale. Code that rewrites an op (graph passes, what-if rewrites) works on the OpDesc
// and makes a new PreparedOp from the result; holders of PreparedOps (the simulator's per-gear op
// cache, calibration's sample set) build them after the ops are final. predict(const OpDesc&)
// prepares on the spot (the cold path), so an unprepared op is never wrong, only slower.
// docs/predict_speed.md has the measurements.

#include <array>
#include <cstdint>
#include <string_view>
#include <variant>

#include "model/cost/op_shapes.h"
#include "model/op_desc.h"

namespace npusim {

/// Attributes the cost models read on their hot paths, resolved from strings once.
enum class Attr : std::uint8_t {
  kL2HitRatio, kConcatDim, kAxis, kDim, kK, kValidLength, kIndexDupRatio, kGroups,
  kIndexHotShare, kIndexHotRows,
  // list attributes (read with attr_ints)
  kStrides, kDilations, kPads, kPerm, kSize, kMultiples,
  kCount
};
inline constexpr std::size_t kAttrCount = static_cast<std::size_t>(Attr::kCount);
inline constexpr std::size_t kFirstListAttr = static_cast<std::size_t>(Attr::kStrides);
/// The attribute's key as ops spell it ("concat_dim").
[[nodiscard]] std::string_view attr_key(Attr a) noexcept;

/// The attributes of Attr parsed once: what OpDesc::attr / attr_number / attr_ints return.
class AttrTable {
 public:
  AttrTable() = default;
  explicit AttrTable(const OpDesc& op) noexcept { fill(op); }
  /// Reads `op`'s attributes into an empty table (in place: no 600-byte temporary).
  void fill(const OpDesc& op) noexcept;
  [[nodiscard]] bool has(Attr a) const noexcept { return (present_ >> static_cast<int>(a)) & 1u; }
  /// As op.attr_number(key, fallback); a present but malformed value defers to `op`, which
  /// throws the same InputError it always did.
  [[nodiscard]] double number(Attr a, double fallback, const OpDesc& op) const {
    const auto i = static_cast<std::size_t>(a);
    if (!has(a)) return fallback;
    if ((number_ok_ >> i) & 1u) return number_[i];
    return op.attr_number(attr_key(a), fallback);
  }
  /// number(a, ...) returns without reading the op's text (absent, or parsed): it cannot throw.
  [[nodiscard]] bool number_ready(Attr a) const noexcept {
    return !has(a) || ((number_ok_ >> static_cast<int>(a)) & 1u);
  }
  /// As op.attr_ints(key, out) (list attributes only).
  std::size_t ints(Attr a, std::array<std::int64_t, 8>& out) const noexcept {
    if (!has(a)) return 0;
    const std::size_t i = static_cast<std::size_t>(a) - kFirstListAttr;
    out = ints_[i];
    return ints_n_[i];
  }

 private:
  std::uint32_t present_ = 0;
  std::uint32_t number_ok_ = 0;
  std::array<double, kAttrCount> number_{};
  std::array<std::array<std::int64_t, 8>, kAttrCount - kFirstListAttr> ints_{};
  std::array<std::uint8_t, kAttrCount - kFirstListAttr> ints_n_{};
};

/// Op-only facts (none depends on a HwSpec or a CoreBudget).
struct OpFacts {
  AttrTable attrs;
  /// Tensors read and written as streams (a one-element operand is read by the scalar unit).
  int read_tensors = 1;
  int write_tensors = 1;
  /// Bytes of every input tensor: with the bytes the op writes, what must fit the chip's device
  /// memory (kWarnExceedsDeviceMemory).
  double input_bytes = 0;
  /// The family's part, when it has one: a MatMul / BatchMatMul's GEMM, an elementwise op's (and
  /// Cast's) extent, a data-movement op's shape (past its early exits), a reduction's layout
  /// (not pooling), a sort's rows, a convolution's operands, a gather's rows, a generic
  /// op's bytes. A variant, so preparing an op does not zero the parts it has not.
  std::variant<std::monostate, cost::Gemm, cost::ElementwiseShape, cost::MovementShape,
               cost::ReduceLayout, cost::SortShape, cost::ConvOperands, cost::GatherShape,
               cost::GenericShape>
      shape;
  [[nodiscard]] const cost::Gemm* gemm() const noexcept { return std::get_if<cost::Gemm>(&shape); }
  [[nodiscard]] const cost::ElementwiseShape* elementwise() const noexcept {
    return std::get_if<cost::ElementwiseShape>(&shape);
  }
  [[nodiscard]] const cost::MovementShape* movement() const noexcept {
    return std::get_if<cost::MovementShape>(&shape);
  }
  [[nodiscard]] const cost::ReduceLayout* reduce() const noexcept {
    return std::get_if<cost::ReduceLayout>(&shape);
  }
  [[nodiscard]] const cost::SortShape* sort() const noexcept {
    return std::get_if<cost::SortShape>(&shape);
  }
  [[nodiscard]] const cost::ConvOperands* conv() const noexcept {
    return std::get_if<cost::ConvOperands>(&shape);
  }
  [[nodiscard]] const cost::GatherShape* gather() const noexcept {
    return std::get_if<cost::GatherShape>(&shape);
  }
  [[nodiscard]] const cost::GenericShape* generic() const noexcept {
    return std::get_if<cost::GenericShape>(&shape);
  }
};

/// Computes the facts of `op` (make_op'd or hand-built with a kind).
[[nodiscard]] OpFacts op_facts(const OpDesc& op);

/// An op ready for repeated prediction. Immutable: to change the op, make a new one.
class PreparedOp {
 public:
  PreparedOp(OpDesc op);  // NOLINT(google-explicit-constructor): an OpDesc converts
  [[nodiscard]] const OpDesc& op() const noexcept { return op_; }
  [[nodiscard]] const OpFacts& facts() const noexcept { return facts_; }

 private:
  OpDesc op_;
  OpFacts facts_;
};

}  // namespace npusim
