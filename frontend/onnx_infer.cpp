// The ONNX importer's shape passes (onnx_importer.h): which symbolic dimension is the batch,
// ONNX's inference at two batch sizes with the constant folding of shape arithmetic between
// rounds, and the shape template (k or k*B per dimension) read off the two runs.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <set>

#include "frontend/onnx_importer.h"

namespace npusim::frontend::onnx_detail {

namespace {

RunInfo info_of(const onnx::TypeProto& type) {
  RunInfo r;
  if (!type.has_tensor_type()) return r;
  r.elem = type.tensor_type().elem_type();
  if (!type.tensor_type().has_shape()) return r;
  r.has_shape = true;
  for (const auto& d : type.tensor_type().shape().dim()) {
    r.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return r;
}

}  // namespace

void OnnxImporter::choose_batch() {
  std::set<std::string> at_axis0;
  std::set<std::string> all;
  for (const auto* in : real_inputs()) {
    if (!in->type().has_tensor_type() || !in->type().tensor_type().has_shape()) {
      fail(fmt::format("graph input '{}' has no tensor shape", in->name()));
    }
    const auto& dims = in->type().tensor_type().shape().dim();
    for (int i = 0; i < dims.size(); ++i) {
      if (!dims[i].has_dim_param()) continue;
      all.insert(dims[i].dim_param());
      if (i == 0) at_axis0.insert(dims[i].dim_param());
    }
  }
  for (const auto& [name, value] : options_.set_dims) {
    if (all.count(name) == 0) {
      throw InputError({"<command line>", 0, 0},
                       fmt::format("--set-dim {}={}: no graph input of {} has a dimension "
                                   "'{}' (symbolic dimensions: {})",
                                   name, value, file_.string(), name,
                                   all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "))));
    }
    if (value < 1) {
      throw InputError({"<command line>", 0, 0},
                       fmt::format("--set-dim {}={}: expected a positive size", name, value));
    }
    set_dims_[name] = value;
  }
  if (!options_.batch_dim.empty()) {
    if (all.count(options_.batch_dim) == 0) {
      throw InputError({"<command line>", 0, 0},
                       fmt::format("--batch-dim {}: no graph input of {} has this symbolic "
                                   "dimension (symbolic dimensions: {})",
                                   options_.batch_dim, file_.string(),
                                   all.empty() ? "none" : fmt::format("{}", fmt::join(all, ", "))));
    }
    batch_ = options_.batch_dim;
  } else {
    std::set<std::string> free;
    for (const auto& s : at_axis0) {
      if (set_dims_.count(s) == 0) free.insert(s);
    }
    if (free.size() > 1) {
      fail(fmt::format("graph inputs have several symbolic leading dimensions ({}): name the "
                       "batch with --batch-dim and give the others with --set-dim NAME=N",
                       fmt::join(free, ", ")));
    }
    if (free.size() == 1) batch_ = *free.begin();
  }
  if (!batch_.empty() && set_dims_.count(batch_) > 0) batch_.clear();  // fixed on request
  for (const auto& s : all) {
    if (s != batch_ && set_dims_.count(s) == 0) {
      fail(fmt::format("graph inputs have the symbolic dimension '{}'{}: give its size with "
                       "--set-dim {}=N (or `dims = {{ {} = N }}` in a scenario's [graph])",
                       s, batch_.empty() ? "" : fmt::format(" beside the batch '{}'", batch_),
                       s, s));
    }
  }
}

onnx::ModelProto OnnxImporter::with_sizes(std::int64_t batch) const {
  onnx::ModelProto m = model_;
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (static_.count(in.name()) > 0) continue;
    auto* dims = in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    for (int i = 0; i < dims->size(); ++i) {
      auto* d = dims->Mutable(i);
      if (d->has_dim_value()) continue;
      if (!d->has_dim_param()) {
        fail(fmt::format("graph input '{}': dimension {} has neither a size nor a name; give "
                         "it a size in the model",
                         in.name(), i));
      }
      const std::string p = d->dim_param();
      d->set_dim_value(p == batch_ ? batch : set_dims_.at(p));
    }
  }
  return m;
}

void OnnxImporter::infer_once(onnx::ModelProto& m, std::int64_t batch,
                              std::unordered_map<std::string, onnx::TensorShapeProto>& data,
                              const std::function<void(onnx::ModelProto&)>& prepare) {
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 1, true), &data);
    return;
  } catch (const std::exception& e) {
    if (!strict_warned_) {
      warn("onnx-strict-inference-failed",
           fmt::format("ONNX's strict shape inference stopped ({}); continued leniently",
                       first_line(e.what())));
      strict_warned_ = true;
    }
  }
  m = with_sizes(batch);
  prepare(m);
  data.clear();
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true), &data);
  } catch (const std::exception& e2) {
    fail(fmt::format("ONNX shape inference failed: {}", first_line(e2.what())));
  }
}

RunMap OnnxImporter::infer(std::int64_t batch,
                           std::unordered_map<std::string, std::vector<std::int64_t>>& values) {
  std::map<std::string, std::pair<std::int32_t, std::vector<std::int64_t>>> folded;
  const auto prepare = [&folded](onnx::ModelProto& m) {
    auto* g = m.mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (const auto& n : g->node()) {
      bool drop = n.output_size() > 0;
      for (const auto& o : n.output()) drop = drop && folded.count(o) > 0;
      if (!drop) *kept.Add() = n;
    }
    g->mutable_node()->Swap(&kept);
    for (const auto& [name, v] : folded) {
      auto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(v.first);
      if (v.first == onnx::TensorProto::INT32) {
        for (const auto x : v.second) t->add_int32_data(static_cast<std::int32_t>(x));
      } else {
        for (const auto x : v.second) t->add_int64_data(x);
      }
      t->add_dims(static_cast<std::int64_t>(v.second.size()));
    }
  };
  onnx::ModelProto m;
  for (int round = 0; round < 16; ++round) {
    m = with_sizes(batch);
    prepare(m);
    std::unordered_map<std::string, onnx::TensorShapeProto> data;
    infer_once(m, batch, data, prepare);
    bool more = false;
    std::unordered_map<std::string, std::int32_t> elem;
    for (const auto& v : m.graph().value_info()) {
      if (v.type().has_tensor_type()) elem[v.name()] = v.type().tensor_type().elem_type();
    }
    for (const auto& entry : data) {
      // Not a structured binding: clang 14 cannot capture one in the lambda below.
      const auto& name = entry.first;
      const auto& shape = entry.second;
      if (folded.count(name) > 0 || static_.count(name) > 0) continue;
      const auto e = elem.find(name);
      if (e == elem.end() || (e->second != onnx::TensorProto::INT64 &&
                              e->second != onnx::TensorProto::INT32)) {
        continue;
      }
      std::vector<std::int64_t> vals;
      bool known = true;
      for (const auto& d : shape.dim()) {
        known = known && d.has_dim_value();
        if (d.has_dim_value()) vals.push_back(d.dim_value());
      }
      // Only 1-D values: data propagation keeps no rank for scalars apart from 1-D ones.
      const auto vi = std::find_if(m.graph().value_info().begin(), m.graph().value_info().end(),
                                   [&](const auto& v) { return v.name() == name; });
      const bool one_d = vi != m.graph().value_info().end() &&
                         vi->type().tensor_type().shape().dim_size() == 1;
      if (!known || !one_d) continue;
      folded[name] = {e->second, vals};
      values[name] = vals;
      more = true;
    }
    if (!more) break;
  }
  RunMap out;
  const auto& g = m.graph();
  for (const auto& v : g.input()) out[v.name()] = info_of(v.type());
  for (const auto& v : g.value_info()) out[v.name()] = info_of(v.type());
  for (const auto& v : g.output()) {
    const RunInfo r = info_of(v.type());
    if (r.has_shape || out.count(v.name()) == 0) out[v.name()] = r;
  }
  for (const auto& init : g.initializer()) {
    RunInfo r;
    r.elem = init.data_type();
    r.has_shape = true;
    r.dims.assign(init.dims().begin(), init.dims().end());
    out[init.name()] = r;
  }
  return out;
}

std::optional<std::vector<DimTemplate>> OnnxImporter::shape_of(const std::string& name, int node) const {
  const auto a = run_a_.find(name);
  if (a == run_a_.end() || !a->second.has_shape) return std::nullopt;
  std::vector<DimTemplate> out;
  const RunInfo* b = nullptr;
  if (!batch_.empty()) {
    const auto bi = run_b_.find(name);
    if (bi == run_b_.end() || !bi->second.has_shape ||
        bi->second.dims.size() != a->second.dims.size()) {
      return std::nullopt;
    }
    b = &bi->second;
  }
  for (std::size_t i = 0; i < a->second.dims.size(); ++i) {
    const std::int64_t da = a->second.dims[i];
    if (da < 0) return std::nullopt;
    if (b == nullptr || b->dims[i] == da) {
      out.push_back({da, false});
      continue;
    }
    const std::int64_t db = b->dims[i];
    if (db < 0) return std::nullopt;
    if (da % kBatchA == 0 && da / kBatchA * kBatchB == db) {
      out.push_back({da / kBatchA, true});
      continue;
    }
    fail(fmt::format("{}: dimension {} of '{}' is {} at batch {} and {} at batch {}: not k*B, "
                     "which a graph cannot express; fix the batch with --set-dim {}=N",
                     node_label(node), i, name, da, kBatchA, db, kBatchB, batch_));
  }
  return out;
}

}  // namespace npusim::frontend::onnx_detail
