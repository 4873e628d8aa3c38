// The op-only part of a data-movement plan (model/cost/op_shapes.h): the output shape of a Tile,
// Concat, Transpose, TransData, Slice or copy, what it reads and writes, and the tiler's cap on
// parallel units. plan_data_movement (model/cost/vector_ops.cpp) costs it on a chip; a PreparedOp
// computes it once.
#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <vector>

#include "model/cost/kernel_plan.h"
#include "model/cost/op_shapes.h"
#include "model/op_table.h"

namespace npusim::cost {

using namespace std::string_view_literals;

bool movement_shape(const OpDesc& op, MovementShape& out) noexcept {
  const OpKindInfo& kind = *op.kind;
  if (kind.role == OpRole::kCast) return false;
  if (kind.writes_only && op.outputs.empty()) return false;
  if (op.inputs.empty()) return false;
  const TensorDesc& x = op.inputs[0];
  const double ds = dtype_bytes(x.dtype);
  // The output shape is built in a per-thread scratch vector: once it has grown to the largest
  // rank seen, copying a shape into it reuses its storage, so predict() does not allocate.
  thread_local std::vector<std::int64_t> out_shape;
  out_shape.clear();
  std::array<std::int64_t, 8> v{};
  double in_bytes = x.bytes();
  switch (kind.role) {
    case OpRole::kTile: {
      out_shape = x.shape;
      if (!op.outputs.empty()) {
        out_shape = op.outputs[0].shape;
      } else if (const std::size_t n = op.attr_ints("multiples", v); n > 0) {
        out_shape.resize(std::max(out_shape.size(), n), 1);
        const std::size_t off = out_shape.size() - n;
        for (std::size_t i = 0; i < n; ++i) out_shape[off + i] *= std::max<std::int64_t>(1, v[i]);
      } else {
        out.warnings |= kWarnOutputInferred;
      }
      break;
    }
    case OpRole::kConcat: {
      // The axis may arrive as a scalar int tensor among the inputs; it is not data.
      in_bytes = 0;
      double total = 0;
      for (const auto& t : op.inputs) {
        if (t.shape.size() <= 1 && t.elements() <= 1 && op.inputs.size() > 2) continue;
        in_bytes += t.bytes();
        total += static_cast<double>(t.elements());
      }
      if (!op.outputs.empty()) {
        out_shape = op.outputs[0].shape;
        break;
      }
      // Output: the data inputs summed along the concat axis (attribute, else where they differ).
      const TensorDesc* first = nullptr;
      for (const auto& t : op.inputs) {
        if (!(t.shape.size() <= 1 && t.elements() <= 1 && op.inputs.size() > 2)) {
          first = &t;
          break;
        }
      }
      const auto rank = static_cast<std::int64_t>(first ? first->shape.size() : 0);
      std::int64_t axis = -1;
      for (const std::string_view key : {"concat_dim"sv, "axis"sv, "dim"sv}) {
        if (op.attr(key)) {
          axis = static_cast<std::int64_t>(op.attr_number(key, 0));
          if (axis < 0) axis += rank;
          break;
        }
      }
      if (axis < 0 && first) {
        for (const auto& t : op.inputs) {
          for (std::int64_t a = 0; a < rank && a < static_cast<std::int64_t>(t.shape.size()); ++a) {
            if (t.shape[static_cast<std::size_t>(a)] != first->shape[static_cast<std::size_t>(a)]) {
              axis = a;
            }
          }
        }
      }
      if (!first || axis < 0 || axis >= rank) {
        out_shape = {static_cast<std::int64_t>(total)};
        out.warnings |= kWarnOutputInferred;
        break;
      }
      out_shape = first->shape;
      const auto ax = static_cast<std::size_t>(axis);
      const double other = static_cast<double>(first->elements()) / static_cast<double>(out_shape[ax]);
      out_shape[ax] = static_cast<std::int64_t>(total / other);
      break;
    }
    case OpRole::kTranspose: {
      out_shape = x.shape;
      if (!op.outputs.empty()) {
        out_shape = op.outputs[0].shape;
      } else if (const std::size_t n = op.attr_ints("perm", v); n == x.shape.size()) {
        for (std::size_t i = 0; i < n; ++i) {
          const auto a = static_cast<std::size_t>(v[i] < 0 ? v[i] + static_cast<std::int64_t>(n) : v[i]);
          out_shape[i] = a < n ? x.shape[a] : 1;
        }
      }
      break;
    }
    case OpRole::kTransData: {
      out_shape = !op.outputs.empty() ? op.outputs[0].shape : x.shape;
      break;
    }
    case OpRole::kSlice: {
      if (!op.outputs.empty()) {
        out_shape = op.outputs[0].shape;
      } else if (const std::size_t n = op.attr_ints("size", v); n == x.shape.size()) {
        out_shape.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
        for (std::size_t i = 0; i < n; ++i) {
          if (out_shape[i] <= 0) out_shape[i] = x.shape[i];
        }
      } else {
        out_shape = x.shape;
        out.warnings |= kWarnOutputInferred;
      }
      in_bytes = product(out_shape) * ds;  // a slice reads only what it keeps
      break;
    }
    default:
      out_shape = !op.outputs.empty() ? op.outputs[0].shape : x.shape;
      break;
  }
  const double out_ds = !op.outputs.empty() ? dtype_bytes(op.outputs[0].dtype) : ds;
  double out_e = product(out_shape);
  if (kind.role == OpRole::kSplit) {
    out_e = 0;
    for (const auto& t : op.outputs) out_e += static_cast<double>(t.elements());
    if (op.outputs.empty()) out_e = static_cast<double>(x.elements());
  }
  out.in_bytes = in_bytes;
  out.out_e = out_e;
  out.out_ds = out_ds;
  out.out_bytes = out_e * out_ds;
  out.last_out = last_dim(out_shape);
  out.parallel = saturating_count(fast_floor(out.out_e / out.last_out) *
                                  fast_floor(std::max(1.0, out.last_out * out_ds / 32)));
  return true;
}

}  // namespace npusim::cost
