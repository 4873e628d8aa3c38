#include "model/op_desc.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "model/op_table.h"

namespace npusim {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  // Profiles wrap fields in (triple) quotes and leave trailing TABs; users leave spaces.
  auto junk = [](char c) { return c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '\r'; };
  while (!s.empty() && junk(s.front())) s.remove_prefix(1);
  while (!s.empty() && junk(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      break;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
  return parts;
}

struct DTypeName {
  const char* name;
  DType dtype;
};
// Spellings seen in op_summary (FLOAT16), GE dumps (DT_FLOAT16), torch (float16) and by hand (fp16).
constexpr std::array<DTypeName, 45> kDTypeNames{{
    {"FLOAT16", DType::kFloat16},   {"FP16", DType::kFloat16},      {"HALF", DType::kFloat16},
    {"F16", DType::kFloat16},       {"BF16", DType::kBFloat16},     {"BFLOAT16", DType::kBFloat16},
    {"FLOAT", DType::kFloat32},     {"FLOAT32", DType::kFloat32},   {"FP32", DType::kFloat32},
    {"F32", DType::kFloat32},       {"HF32", DType::kHFloat32},     {"HFLOAT32", DType::kHFloat32},
    {"DOUBLE", DType::kFloat64},    {"FLOAT64", DType::kFloat64},   {"FP64", DType::kFloat64},
    {"INT4", DType::kInt4},         {"INT8", DType::kInt8},         {"UINT8", DType::kUInt8},
    {"INT16", DType::kInt16},       {"UINT16", DType::kUInt16},     {"INT32", DType::kInt32},
    {"UINT32", DType::kUInt32},     {"INT64", DType::kInt64},       {"UINT64", DType::kUInt64},
    {"BOOL", DType::kBool},         {"COMPLEX64", DType::kComplex64},
    {"COMPLEX128", DType::kComplex128}, {"I8", DType::kInt8},       {"U8", DType::kUInt8},
    {"I16", DType::kInt16},         {"I32", DType::kInt32},         {"I64", DType::kInt64},
    {"INT", DType::kInt32},         {"LONG", DType::kInt64},        {"BYTE", DType::kInt8},
    {"QINT8", DType::kInt8},        {"QUINT8", DType::kUInt8},      {"QINT32", DType::kInt32},
    {"BOOLEAN", DType::kBool},      {"FLOAT8", DType::kInt8},       {"HIFLOAT8", DType::kInt8},
    {"FLOAT8_E4M3FN", DType::kInt8}, {"FLOAT8_E5M2", DType::kInt8}, {"COMPLEX32", DType::kComplex64},
    {"UNDEFINED", DType::kUndefined},
}};

struct FormatName {
  const char* name;
  Format format;
};
constexpr std::array<FormatName, 22> kFormatNames{{
    {"ND", Format::kND},
    {"NCHW", Format::kNCHW},
    {"NHWC", Format::kNHWC},
    {"NC1HWC0", Format::kNC1HWC0},
    {"NZ", Format::kFractalNZ},
    {"FRACTAL_NZ", Format::kFractalNZ},
    {"FRACTAL_Z", Format::kFractalZ},
    {"FRACTAL_ZN", Format::kFractalZ},
    {"NDHWC", Format::kNDHWC},
    {"NCDHW", Format::kNCDHW},
    {"HWCN", Format::kHWCN},
    {"C1HWNCOC0", Format::kC1HWNCoC0},
    {"NC1HWC0_C04", Format::kNC1HWC0},
    {"FRACTAL_Z_C04", Format::kFractalZ},
    // layouts the model treats as plain row-major data, and NULL for an absent tensor (CANN 8.3)
    {"NCL", Format::kOther},
    {"NLC", Format::kOther},
    {"NC", Format::kOther},
    {"NDC1HWC0", Format::kNC1HWC0},
    {"FRACTAL_Z_3D", Format::kFractalZ},
    {"CHWN", Format::kOther},
    {"NULL", Format::kOther},
    {"RESERVED", Format::kOther},
}};

std::string accepted_dtypes() {
  return "FLOAT16 (fp16, DT_FLOAT16, float16), BF16, FLOAT (fp32), HF32, DOUBLE, INT4, INT8, UINT8, "
         "INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL, COMPLEX64, COMPLEX128, UNDEFINED";
}

}  // namespace

const char* dtype_name(DType d) noexcept {
  switch (d) {
    case DType::kFloat16: return "FLOAT16";
    case DType::kBFloat16: return "BF16";
    case DType::kFloat32: return "FLOAT";
    case DType::kHFloat32: return "HF32";
    case DType::kFloat64: return "DOUBLE";
    case DType::kInt4: return "INT4";
    case DType::kInt8: return "INT8";
    case DType::kUInt8: return "UINT8";
    case DType::kInt16: return "INT16";
    case DType::kUInt16: return "UINT16";
    case DType::kInt32: return "INT32";
    case DType::kUInt32: return "UINT32";
    case DType::kInt64: return "INT64";
    case DType::kUInt64: return "UINT64";
    case DType::kBool: return "BOOL";
    case DType::kComplex64: return "COMPLEX64";
    case DType::kComplex128: return "COMPLEX128";
    case DType::kUndefined: return "UNDEFINED";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) noexcept {
  std::string u = upper(trim(s));
  if (u.rfind("DT_", 0) == 0) u.erase(0, 3);
  if (u.rfind("TORCH.", 0) == 0) u.erase(0, 6);
  if (u.rfind("ACL_", 0) == 0) u.erase(0, 4);
  for (const auto& n : kDTypeNames) {
    if (u == n.name) return n.dtype;
  }
  return std::nullopt;
}

const char* format_name(Format f) noexcept {
  switch (f) {
    case Format::kND: return "ND";
    case Format::kNCHW: return "NCHW";
    case Format::kNHWC: return "NHWC";
    case Format::kNC1HWC0: return "NC1HWC0";
    case Format::kFractalNZ: return "FRACTAL_NZ";
    case Format::kFractalZ: return "FRACTAL_Z";
    case Format::kNDHWC: return "NDHWC";
    case Format::kNCDHW: return "NCDHW";
    case Format::kHWCN: return "HWCN";
    case Format::kC1HWNCoC0: return "C1HWNCoC0";
    case Format::kOther: return "OTHER";
  }
  return "?";
}

std::optional<Format> parse_format(std::string_view s) noexcept {
  std::string u = upper(trim(s));
  if (u.rfind("FORMAT_", 0) == 0) u.erase(0, 7);
  // "NC1HWC0:1" carries a sub-format after the colon
  if (const auto colon = u.find(':'); colon != std::string::npos) u.erase(colon);
  if (u.empty()) return Format::kND;
  for (const auto& n : kFormatNames) {
    if (u == n.name) return n.format;
  }
  return std::nullopt;
}

const char* placement_name(Placement p) noexcept {
  switch (p) {
    case Placement::kCube: return "cube";
    case Placement::kVector: return "vector";
    case Placement::kMix: return "mix";
    case Placement::kAicpu: return "aicpu";
    case Placement::kHost: return "host";
  }
  return "?";
}

std::optional<Placement> parse_placement(std::string_view s) noexcept {
  const std::string u = upper(trim(s));
  if (u == "CUBE" || u == "AI_CORE" || u == "AIC" || u == "AI_CUBE") return Placement::kCube;
  if (u == "VECTOR" || u == "AI_VECTOR_CORE" || u == "AIV" || u == "AI_VECTOR") {
    return Placement::kVector;
  }
  if (u == "MIX" || u == "MIX_AIC" || u == "MIX_AIV" || u == "MIX_AICORE" || u == "MIX_VECTOR_CORE") {
    return Placement::kMix;
  }
  if (u == "AICPU" || u == "AI_CPU" || u == "CPU_KERNEL") return Placement::kAicpu;
  if (u == "HOST" || u == "HOST_CPU" || u == "CPU") return Placement::kHost;
  return std::nullopt;
}

const char* family_name(OpFamily f) noexcept {
  switch (f) {
    case OpFamily::kCube: return "cube";
    case OpFamily::kElementwise: return "elementwise";
    case OpFamily::kReduction: return "reduction";
    case OpFamily::kDataMovement: return "data_movement";
    case OpFamily::kIndex: return "index";
    case OpFamily::kSort: return "sort";
    case OpFamily::kAicpu: return "aicpu";
    case OpFamily::kGeneric: return "generic";
  }
  return "?";
}

std::optional<std::string_view> OpDesc::attr(std::string_view key) const noexcept {
  if (attrs.empty()) return std::nullopt;
  for (const auto& [k, v] : attrs) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<double> parse_attr_number(std::string_view value) noexcept {
  const std::string_view t = trim(value);
  double out = 0;
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  if (ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(out)) return std::nullopt;
  return out;
}

double OpDesc::attr_number(std::string_view key, double fallback) const {
  const auto v = attr(key);
  if (!v) return fallback;
  const std::optional<double> out = parse_attr_number(*v);
  if (!out) {
    throw InputError({"<op " + name + ">", 0, 0},
                     fmt::format("attribute '{}' of {}: expected a number, got '{}'", key, type, *v));
  }
  return *out;
}

bool OpDesc::attr_bool(std::string_view key, bool fallback) const {
  const auto v = attr(key);
  if (!v) return fallback;
  const std::string u = upper(trim(*v));
  if (u == "TRUE" || u == "1") return true;
  if (u == "FALSE" || u == "0") return false;
  throw InputError({"<op " + name + ">", 0, 0},
                   fmt::format("attribute '{}' of {}: expected true or false, got '{}'", key, type, *v));
}

std::size_t OpDesc::attr_ints(std::string_view key, std::array<std::int64_t, 8>& out) const noexcept {
  const auto v = attr(key);
  if (!v) return 0;
  std::size_t n = 0;
  const char* p = v->data();
  const char* end = p + v->size();
  while (p < end && n < out.size()) {
    while (p < end && (*p < '0' || *p > '9') && *p != '-') ++p;
    if (p >= end) break;
    std::int64_t x = 0;
    const auto r = std::from_chars(p, end, x);
    if (r.ec != std::errc()) break;
    out[n++] = x;
    p = r.ptr;
  }
  return n;
}

std::vector<std::vector<std::int64_t>> parse_shape_list(std::string_view text, const SourcePos& pos) {
  std::vector<std::vector<std::int64_t>> shapes;
  const std::string_view body = trim(text);
  if (body.empty()) return shapes;
  int index = 0;
  for (std::string_view item : split(body, ';')) {
    item = trim(item);
    std::vector<std::int64_t> shape;
    if (!item.empty()) {
      std::int64_t product = 1;
      for (std::string_view dim : split(item, ',')) {
        dim = trim(dim);
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), v);
        if (dim.empty() || ec != std::errc() || ptr != dim.data() + dim.size()) {
          throw InputError(pos, fmt::format("shape {} '{}': dimension '{}' is not an integer", index,
                                            item, dim));
        }
        if (v <= 0) {
          throw InputError(pos, fmt::format("shape {} '{}': dimension {} must be > 0", index, item, v));
        }
        if (product > std::numeric_limits<std::int64_t>::max() / v) {
          throw InputError(pos, fmt::format("shape {} '{}': element count overflows 64 bits", index,
                                            item));
        }
        product *= v;
        shape.push_back(v);
      }
    }
    shapes.push_back(std::move(shape));
    ++index;
  }
  return shapes;
}

std::vector<DType> parse_dtype_list(std::string_view text, const SourcePos& pos) {
  std::vector<DType> out;
  const std::string_view body = trim(text);
  if (body.empty()) return out;
  for (std::string_view item : split(body, ';')) {
    const auto d = parse_dtype(item);
    if (!d) {
      throw InputError(pos, fmt::format("unknown dtype '{}'; accepted: {}", trim(item),
                                        accepted_dtypes()));
    }
    out.push_back(*d);
  }
  return out;
}

std::vector<Format> parse_format_list(std::string_view text, const SourcePos& pos) {
  std::vector<Format> out;
  const std::string_view body = trim(text);
  if (body.empty()) return out;
  for (std::string_view item : split(body, ';')) {
    const auto f = parse_format(item);
    if (!f) {
      throw InputError(pos, fmt::format("unknown format '{}'; accepted: ND, NCHW, NHWC, NC1HWC0, "
                                        "FRACTAL_NZ (NZ), FRACTAL_Z, NDHWC, NCDHW, HWCN",
                                        trim(item)));
    }
    out.push_back(*f);
  }
  return out;
}

namespace {

std::vector<TensorDesc> make_tensors(std::string_view shapes_text, std::string_view dtypes_text,
                                     std::string_view formats_text, const char* what,
                                     const SourcePos& pos, bool dtype_alone_is_scalar) {
  const auto shapes = parse_shape_list(shapes_text, pos);
  const auto dtypes = parse_dtype_list(dtypes_text, pos);
  const auto formats = parse_format_list(formats_text, pos);
  if (shapes.empty()) {
    if (!dtypes.empty() && dtypes.size() > 1) {
      throw InputError(pos, fmt::format("{}: {} dtypes given but no shapes", what, dtypes.size()));
    }
    if (dtypes.size() == 1 && dtype_alone_is_scalar) {
      // One input dtype and an empty shape list is one scalar: profiles write a 0-d tensor as
      // `""` (a Cast of a loss value), and it still costs a read and a write. (Outputs with a
      // dtype and no shape are inferred from the inputs instead.)
      TensorDesc scalar;
      scalar.dtype = dtypes[0];
      scalar.format = formats.empty() ? Format::kND : formats[0];
      return {scalar};
    }
    return {};
  }
  if (dtypes.empty()) {
    throw InputError(pos, fmt::format("{}: {} shapes given but no dtypes", what, shapes.size()));
  }
  if (dtypes.size() != 1 && dtypes.size() != shapes.size()) {
    throw InputError(pos, fmt::format("{}: {} shapes but {} dtypes; give one dtype per shape (or one "
                                      "for all)",
                                      what, shapes.size(), dtypes.size()));
  }
  if (formats.size() > 1 && formats.size() != shapes.size()) {
    throw InputError(pos, fmt::format("{}: {} shapes but {} formats; give one format per shape (or "
                                      "one for all)",
                                      what, shapes.size(), formats.size()));
  }
  std::vector<TensorDesc> out(shapes.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    out[i].shape = shapes[i];
    out[i].dtype = dtypes.size() == 1 ? dtypes[0] : dtypes[i];
    out[i].format = formats.empty() ? Format::kND : (formats.size() == 1 ? formats[0] : formats[i]);
  }
  return out;
}

}  // namespace

OpDesc make_op(const OpText& text, const SourcePos& pos) {
  OpDesc op;
  op.name = text.name;
  op.type = std::string(trim(text.type));
  if (op.type.empty()) throw InputError(pos, "op type is empty");
  op.inputs = make_tensors(text.input_shapes, text.input_dtypes, text.input_formats, "inputs", pos,
                            true);
  op.outputs =
      make_tensors(text.output_shapes, text.output_dtypes, text.output_formats, "outputs", pos,
                   false);
  op.attrs = text.attrs;
  if (!trim(text.placement).empty()) {
    op.placement = parse_placement(text.placement);
    if (!op.placement) {
      throw InputError(pos, fmt::format("unknown placement '{}'; accepted: cube, vector, mix, aicpu, "
                                        "host (or a profile task type such as AI_CORE, "
                                        "AI_VECTOR_CORE, MIX_AIC, AI_CPU)",
                                        trim(text.placement)));
    }
  }
  op.kind = &lookup_op_kind(op.type);
  // Numeric attributes the model reads are checked now, so predict() never throws.
  for (const char* key : {"index_dup_ratio", "valid_fraction", "valid_length", "k", "l2_hit_ratio",
                          "index_hot_share", "index_hot_rows"}) {
    if (op.attr(key)) {
      const double v = op.attr_number(key, 0);
      const bool ratio = std::string_view(key) == "index_dup_ratio" ||
                         std::string_view(key) == "index_hot_share" ||
                         std::string_view(key) == "valid_fraction" ||
                         std::string_view(key) == "l2_hit_ratio";
      if (ratio && (v < 0 || v > 1)) {
        throw InputError(pos, fmt::format("attribute '{}': expected a number in [0, 1], got {}", key, v));
      }
      if (!ratio && v < 1) {
        throw InputError(pos, fmt::format("attribute '{}': expected a number >= 1, got {}", key, v));
      }
    }
  }
  // Attributes the cost models read as counts or axes: a number of sensible size, so a cost model
  // (noexcept) never meets text or a value that does not fit an integer. Found by fuzz_op_text:
  // FlashAttentionScore with head_num=x aborted the process through plan_attention.
  for (const char* key : {"head_num", "groups"}) {
    if (op.attr(key)) {
      const double v = op.attr_number(key, 0);
      if (v < 1 || v > 1e9) {
        throw InputError(pos, fmt::format("attribute '{}': expected a count in [1, 1e9], got {}", key, v));
      }
    }
  }
  const bool reads_axis = op.kind->role == OpRole::kConcat || op.kind->role == OpRole::kGather;
  for (const char* key : {"axis", "concat_dim", "dim", "sparse_mode"}) {
    if (std::string_view(key) != "sparse_mode" && !reads_axis) continue;
    if (op.attr(key)) {
      const double v = op.attr_number(key, 0);
      if (std::fabs(v) > 1024) {
        throw InputError(pos, fmt::format("attribute '{}': expected an integer in [-1024, 1024], got {}", key, v));
      }
    }
  }
  return op;
}

}  // namespace npusim
