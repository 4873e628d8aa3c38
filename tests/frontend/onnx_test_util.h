#pragma once
// Helpers of the frontend tests: temporary model files and small models built with the
// protobuf API (C++ keeps the test suite free of Python dependencies).
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "model/graph.h"

namespace npusim::test {

/// A file under the temp folder holding `bytes`, removed when the object goes.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& bytes) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("npusim_fe_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
             name);
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// A one-input model `x` (FLOAT16 [4, 8]) at `opset`, for nodes added by the caller.
inline onnx::ModelProto tiny_model(std::int64_t opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  auto* x = g->add_input();
  x->set_name("x");
  auto* t = x->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT16);
  t->mutable_shape()->add_dim()->set_dim_value(4);
  t->mutable_shape()->add_dim()->set_dim_value(8);
  return m;
}

inline onnx::NodeProto* add_node(onnx::ModelProto& m, const std::string& op,
                                 const std::string& name, std::initializer_list<std::string> in,
                                 std::initializer_list<std::string> out,
                                 const std::string& domain = "") {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return n;
}

/// The op called `name` (fails the test when absent).
inline const GraphOp& op_named(const Graph& g, const std::string& name) {
  const auto i = g.find(name);
  if (!i) throw std::runtime_error("no op named " + name);
  return g.ops()[*i];
}

}  // namespace npusim::test
