#include "frontend/onnx_load.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <fstream>
#include <iterator>
#include <limits>

#include "model/error.h"

namespace npusim::frontend {

namespace {

// Collects the first text-format error with its position (protobuf reports 0-based line and
// column; diagnostics are 1-based).
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!found_) {
      found_ = true;
      line_ = line;
      column_ = column;
      message_ = message;
    }
  }
  bool found_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

std::string read_all(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw InputError({file.string(), 0, 0}, "no such file");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError({file.string(), 0, 0}, "cannot open the file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError({file.string(), 0, 0}, "read error");
  return bytes;
}

// ONNX's shape inference divides by these without checking them (Debian's libonnx 1.12:
// convPoolShapeInference by strides, found by fuzz_onnx as a SIGFPE; the others the same way),
// so a value the ONNX spec forbids is refused here, naming its node, before inference runs.
constexpr const char* kPositiveInts[] = {"strides", "dilations", "kernel_shape"};
constexpr const char* kPositiveInt[] = {"group", "blocksize"};

void check_divisors(const onnx::GraphProto& g, const std::filesystem::path& file) {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      const auto bad = [&](std::int64_t v) {
        throw InputError({file.string(), 0, 0},
                         fmt::format("node '{}' ({}): attribute {} holds {}; ONNX requires "
                                     "every value of it to be > 0",
                                     n.name(), n.op_type(), a.name(), v));
      };
      for (const char* name : kPositiveInts) {
        if (a.name() != name) continue;
        for (const std::int64_t v : a.ints()) {
          if (v <= 0) bad(v);
        }
      }
      for (const char* name : kPositiveInt) {
        if (a.name() == name && a.has_i() && a.i() <= 0) bad(a.i());
      }
      if (a.has_g()) check_divisors(a.g(), file);
      for (const auto& sub : a.graphs()) check_divisors(sub, file);
    }
  }
}

void check_model(const onnx::ModelProto& m, const std::filesystem::path& file) {
  if (!m.has_graph() || m.graph().node_size() == 0) {
    throw InputError({file.string(), 0, 0}, "the model has no graph (or a graph without nodes)");
  }
  check_divisors(m.graph(), file);
}

}  // namespace

bool is_text_format(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".txt" || ext == ".pbtxt" || ext == ".prototxt" || ext == ".onnxtxt";
}

onnx::ModelProto parse_model_bytes(const std::string& bytes, const std::filesystem::path& file) {
  onnx::ModelProto m;
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw InputError({file.string(), 0, 0},
                     "over 2 GiB: protobuf cannot read it in one piece (keep weights in external "
                     "data files; shape inference does not need them)");
  }
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  if (!m.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    throw InputError({file.string(), 0, 0},
                     fmt::format("not a readable ONNX model ({} bytes): the protobuf does not "
                                 "parse (truncated, damaged or not an .onnx file)",
                                 bytes.size()));
  }
  check_model(m, file);
  return m;
}

onnx::ModelProto load_model_proto(const std::filesystem::path& file) {
  const std::string bytes = read_all(file);
  if (!is_text_format(file)) return parse_model_bytes(bytes, file);
  onnx::ModelProto m;
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(bytes, &m)) {
    throw InputError({file.string(), static_cast<std::uint32_t>(errors.line_ + 1),
                      static_cast<std::uint32_t>(errors.column_ + 1)},
                     fmt::format("not an ONNX model in protobuf text format: {}",
                                 errors.found_ ? errors.message_ : "parse error"));
  }
  check_model(m, file);
  return m;
}

}  // namespace npusim::frontend
