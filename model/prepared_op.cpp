#include "model/prepared_op.h"

#include <algorithm>

#include "model/op_table.h"

namespace npusim {

namespace {

constexpr std::array<std::string_view, kAttrCount> kKeys{
    "l2_hit_ratio", "concat_dim", "axis", "dim", "k", "valid_length", "index_dup_ratio", "groups",
    "index_hot_share", "index_hot_rows",
    "strides", "dilations", "pads", "perm", "size", "multiples"};

// Stream count of a tensor list as run_plan counted it per call (model/predict.cpp).
int stream_tensors(const std::vector<TensorDesc>& ts) noexcept {
  int n = 0;
  for (const auto& t : ts) n += t.elements() > 1 ? 1 : 0;
  return std::max(1, n);
}

}  // namespace

std::string_view attr_key(Attr a) noexcept { return kKeys[static_cast<std::size_t>(a)]; }

void AttrTable::fill(const OpDesc& op) noexcept {
  // One pass over the attributes; the first of a repeated key counts, as op.attr() finds it.
  for (const auto& [key, value] : op.attrs) {
    std::size_t i = 0;
    while (i < kAttrCount && kKeys[i] != key) ++i;
    if (i == kAttrCount || has(static_cast<Attr>(i))) continue;
    present_ |= 1u << i;
    if (const std::optional<double> v = parse_attr_number(value)) {
      number_ok_ |= 1u << i;
      number_[i] = *v;
    }
    if (i >= kFirstListAttr) {
      std::array<std::int64_t, 8> ints{};
      ints_n_[i - kFirstListAttr] = static_cast<std::uint8_t>(op.attr_ints(kKeys[i], ints));
      ints_[i - kFirstListAttr] = ints;
    }
  }
}

OpFacts op_facts(const OpDesc& op) {
  OpFacts f;
  f.attrs.fill(op);
  f.read_tensors = stream_tensors(op.inputs);
  f.write_tensors = stream_tensors(op.outputs);
  for (const auto& t : op.inputs) f.input_bytes += t.bytes();
  if (op.kind == nullptr) return f;
  switch (op.kind->family) {
    case OpFamily::kCube:
      if (cost::Gemm g; cost::matmul_gemm(op, g)) {
        f.shape = g;
      } else if ((op.kind->role == OpRole::kConv2D || op.kind->role == OpRole::kConvBackpropInput ||
                  op.kind->role == OpRole::kConvBackpropFilter) &&
                 f.attrs.number_ready(Attr::kGroups)) {
        // a malformed groups attribute raises from predict(), not from the preparation
        f.shape = cost::conv_operands(op, &f.attrs);
      }
      break;
    case OpFamily::kElementwise:
      f.shape = cost::elementwise_shape(op);
      break;
    case OpFamily::kDataMovement:
      if (op.kind->role == OpRole::kCast) {
        f.shape = cost::elementwise_shape(op);
      } else if (cost::MovementShape m; cost::movement_shape(op, m)) {
        f.shape = m;
      }
      break;
    case OpFamily::kReduction:
      if (op.kind->role != OpRole::kPool && op.kind->role != OpRole::kPoolGrad) {
        f.shape = cost::reduction_layout(op);
      }
      break;
    case OpFamily::kSort:
      // only when the attributes it reads are parsed: a malformed one raises its error from
      // predict(), as for an unprepared op, not from the preparation
      if (f.attrs.number_ready(Attr::kValidLength) &&
          (op.kind->role != OpRole::kTopK || f.attrs.number_ready(Attr::kK))) {
        if (cost::SortShape ss; cost::sort_shape(op, f.attrs, ss)) f.shape = ss;
      }
      break;
    case OpFamily::kIndex:
      // as for the sort: only when the axis is parsed (a malformed one raises from predict())
      if (op.kind->role == OpRole::kGather && op.inputs.size() >= 2 &&
          f.attrs.number_ready(Attr::kAxis)) {
        f.shape = cost::gather_shape(op, f.attrs);
      }
      break;
    case OpFamily::kGeneric:
      f.shape = cost::generic_shape(op);
      break;
    default:
      break;
  }
  return f;
}

PreparedOp::PreparedOp(OpDesc op) : op_(std::move(op)), facts_(op_facts(op_)) {}

}  // namespace npusim
