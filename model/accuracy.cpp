#include "model/accuracy.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/op_table.h"
#include "model/predict.h"

namespace npusim {

namespace {

template <class Op>
SamplePrediction predict_sample_of(const Sample& s, const Op& op, const HwSpec& hw) {
  SamplePrediction p;
  const bool cube = s.op.kind->family == OpFamily::kCube;
  CoreBudget budget;
  if (s.block_dim > 0) {
    // The row's block dim is how many cores the kernel was launched on: the model may not use more.
    if (cube) {
      budget.cube_cores = std::min(s.block_dim, hw.chip.cube_cores);
    } else {
      budget.vector_cores = std::min(s.block_dim, hw.chip.vector_cores);
    }
    budget.launch_blocks = s.block_dim;
  }
  PredictContext ctx;
  ctx.l2_hit_ratio = s.l2_hit_ratio;
  p.cost = predict(op, hw, budget, ctx);
  p.predicted_us = p.cost.duration_us - p.cost.critical_path.host_us;
  p.ape = s.measured_us > 0 ? std::abs(p.predicted_us - s.measured_us) / s.measured_us : 0.0;
  return p;
}

}  // namespace

SamplePrediction predict_sample(const Sample& s, const HwSpec& hw) {
  return predict_sample_of(s, s.op, hw);
}

SamplePrediction predict_sample(const Sample& s, const PreparedOp& op, const HwSpec& hw) {
  return predict_sample_of(s, op, hw);
}

void infer_l2_hits(std::vector<Sample>& samples, const HwSpec& hw) {
  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (samples[a].group != samples[b].group) return samples[a].group < samples[b].group;
    return samples[a].start_ns < samples[b].start_ns;
  });
  struct Resident {
    const TensorDesc* tensor;
    double written_since;  // bytes written by later ops
  };
  std::vector<Resident> recent;
  const std::string* group = nullptr;
  // The same tensor seen through a view: a reshape or squeeze changes the shape, not the data,
  // so a match is on dtype and element count (a Cast of (4096,1,1024) reads the (4096,1024) an
  // Add just wrote; a TensorMove of 6291456 elements copies the (6144,1024) made before it).
  // In a transformer many activations share a count, so some matches are spurious; comparing
  // shapes exactly, or with unit axes removed, was tried: on rank 2's unseen shapes (fit on
  // rank 0) the held-out MAPE was 21.2 % and 20.8 % against 18.9 % here, the step total 22.9 %
  // and 21.3 % against 12.6 % (docs/accuracy.md).
  // A view does not change a tiled layout either: the same elements in FRACTAL_NZ (NC1HWC0,
  // FRACTAL_Z) and in a plain layout are different bytes, written by different kernels. A
  // TransData ND -> NZ reads the ND tensor, not the NZ one of the same count another TransData
  // wrote just before it (the 910 ViT's optimizer converts its [768,3072] and [3072,768]
  // fp32 states one after another: every ND read had counted as a hit, 12.4 us predicted
  // against 22-24 measured, where a cold read gives 24.4).
  auto same = [](const TensorDesc& a, const TensorDesc& b) {
    return a.dtype == b.dtype && a.elements() == b.elements() &&
           ((!is_tiled(a.format) && !is_tiled(b.format)) || a.format == b.format);
  };
  for (const std::size_t i : order) {
    Sample& s = samples[i];
    if (!group || *group != s.group) {
      recent.clear();
      group = &s.group;
    }
    double in_bytes = 0, hit_bytes = 0;
    for (const auto& t : s.op.inputs) {
      // The op's own earlier inputs pass through L2 too (the kernel reads its inputs in the
      // order listed): a multi-tensor op (ForeachAddList over 16 weight and 16 gradient
      // tensors, 489 MB) evicts its later inputs' lines with its earlier ones, though each
      // alone was written recently enough to fit.
      for (const auto& r : recent) {
        if (same(*r.tensor, t) && r.written_since + in_bytes + t.bytes() <= hw.chip.l2_bytes) {
          hit_bytes += t.bytes();
          break;
        }
      }
      in_bytes += t.bytes();
    }
    s.l2_hit_ratio = in_bytes > 0 ? hit_bytes / in_bytes : 0.0;
    double out_bytes = 0;
    for (const auto& t : s.op.outputs) out_bytes += t.bytes();
    for (auto& r : recent) r.written_since += out_bytes;
    recent.erase(std::remove_if(recent.begin(), recent.end(),
                                [&](const Resident& r) { return r.written_since > hw.chip.l2_bytes; }),
                 recent.end());
    for (const auto& t : s.op.outputs) {
      if (t.bytes() <= hw.chip.l2_bytes) recent.push_back({&t, 0.0});
    }
  }
}

namespace {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

ErrorSummary summarize(const std::vector<double>& measured, const std::vector<double>& predicted) {
  ErrorSummary e;
  const std::size_t n = std::min(measured.size(), predicted.size());
  e.rows = n;
  if (n == 0) return e;
  std::vector<double> ape(n);
  double lx = 0, ly = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ape[i] = std::abs(predicted[i] - measured[i]) / measured[i];
    e.measured_total_us += measured[i];
    e.predicted_total_us += predicted[i];
    lx += std::log(measured[i]);
    ly += std::log(predicted[i]);
  }
  e.mape = std::accumulate(ape.begin(), ape.end(), 0.0) / static_cast<double>(n);
  e.median_ape = quantile(ape, 0.5);
  e.p90_ape = quantile(ape, 0.9);
  e.step_total_error = std::abs(e.predicted_total_us - e.measured_total_us) / e.measured_total_us;
  if (n >= 3) {
    lx /= static_cast<double>(n);
    ly /= static_cast<double>(n);
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double dx = std::log(measured[i]) - lx;
      const double dy = std::log(predicted[i]) - ly;
      sxy += dx * dy;
      sxx += dx * dx;
      syy += dy * dy;
    }
    e.pearson_r_log = (sxx > 0 && syy > 0) ? sxy / std::sqrt(sxx * syy) : 0.0;
  }
  return e;
}

std::vector<std::string> regimes_of(const Sample& s, const HwSpec& hw) {
  std::vector<std::string> r;
  r.emplace_back(s.measured_us < 10 ? "tiny (<10 us)" : "large (>=10 us)");
  bool aligned = true;
  for (const auto& t : s.op.inputs) {
    if (t.shape.empty()) continue;
    const double row = static_cast<double>(t.shape.back()) * dtype_bytes(t.dtype);
    if (std::fmod(row, hw.memory.block_bytes) != 0.0) aligned = false;
  }
  r.emplace_back(aligned ? "aligned last axis" : "unaligned last axis");
  const bool cube = s.op.kind->family == OpFamily::kCube;
  const int cores = cube ? hw.chip.cube_cores : hw.chip.vector_cores;
  if (s.block_dim > 0) {
    r.emplace_back(s.block_dim < cores ? "block dim below core count" : "block dim at core count");
  }
  return r;
}

AccuracyReport evaluate_accuracy_subset(const std::vector<Sample>& samples,
                                        const std::vector<std::size_t>& indices, const HwSpec& hw,
                                        std::size_t min_rows_per_type) {
  AccuracyReport rep;
  struct Bucket {
    std::vector<double> m, p;
  };
  Bucket all;
  std::map<std::string, Bucket> fam, typ, reg;
  rep.rows.reserve(indices.size());
  for (const std::size_t i : indices) {
    const Sample& s = samples.at(i);
    SamplePrediction sp = predict_sample(s, hw);
    if (s.measured_us > 0 && sp.predicted_us > 0) {
      all.m.push_back(s.measured_us);
      all.p.push_back(sp.predicted_us);
      auto add = [&](Bucket& b) {
        b.m.push_back(s.measured_us);
        b.p.push_back(sp.predicted_us);
      };
      add(fam[family_name(s.op.kind->family)]);
      add(typ[s.op.type]);
      for (const auto& r : regimes_of(s, hw)) add(reg[r]);
    }
    rep.rows.push_back(std::move(sp));
  }
  rep.overall = summarize(all.m, all.p);
  for (auto& [k, b] : fam) rep.by_family[k] = summarize(b.m, b.p);
  for (auto& [k, b] : typ) {
    if (b.m.size() >= min_rows_per_type) rep.by_type[k] = summarize(b.m, b.p);
  }
  for (auto& [k, b] : reg) rep.by_regime[k] = summarize(b.m, b.p);
  return rep;
}

AccuracyReport evaluate_accuracy(const std::vector<Sample>& samples, const HwSpec& hw,
                                 std::size_t min_rows_per_type) {
  std::vector<std::size_t> idx(samples.size());
  std::iota(idx.begin(), idx.end(), 0);
  return evaluate_accuracy_subset(samples, idx, hw, min_rows_per_type);
}

}  // namespace npusim
