#pragma once
// Reading protobuf files of the ONNX schema (internal to frontend/): binary .onnx, or text format
// (the GE dumps' .pbtxt and diffable .prototxt fixtures), with errors at file:line:col.

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

namespace npusim::frontend {

/// True when the file name says protobuf text format (.txt, .pbtxt, .prototxt, .onnxtxt).
[[nodiscard]] bool is_text_format(const std::filesystem::path& file);

/// Reads `file` into a ModelProto, binary or text by its name. Throws InputError: the file is
/// missing, unreadable, truncated, not a model, or has no graph.
[[nodiscard]] onnx::ModelProto load_model_proto(const std::filesystem::path& file);

/// Parses protobuf bytes (binary) into a ModelProto; `file` names the source in errors.
[[nodiscard]] onnx::ModelProto parse_model_bytes(const std::string& bytes,
                                                 const std::filesystem::path& file);

}  // namespace npusim::frontend
