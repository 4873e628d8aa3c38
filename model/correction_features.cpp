#include "model/correction_features.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/key_hash.h"
#include "model/op_table.h"

namespace npusim {

namespace {

// Feature layout; keep in step with the names below.
constexpr std::size_t kLogPred = 8;
constexpr std::size_t kLogPipe = 9;       // 7: cube, vector, scalar, mte1, mte2, mte3, fixpipe
constexpr std::size_t kPipeFrac = 16;     // 7: the same over the predicted time
constexpr std::size_t kPathFrac = 23;     // 6: head, compute, memory, alignment, conflict, tail
constexpr std::size_t kBound = 29;        // 6: Bound order
constexpr std::size_t kLogBytes = 35;
constexpr std::size_t kLogFlops = 36;
constexpr std::size_t kCubeEff = 37;
constexpr std::size_t kCoreShare = 38;
constexpr std::size_t kLogWaves = 39;
constexpr std::size_t kDtypeBytes = 40;
constexpr std::size_t kBlockedFormat = 41;
constexpr std::size_t kL2Hit = 42;
constexpr std::size_t kCubeCores = 43;
constexpr std::size_t kVectorCores = 44;
constexpr std::size_t kFreqGhz = 45;
constexpr std::size_t kTypeHash = 46;
static_assert(kTypeHash + 1 == kCorrectionFeatures);

// A pipe or part time in µs as a log; 0.01 µs (a few cycles) keeps an idle pipe finite.
double log_us(double us) { return std::log(std::max(us, 0.0) + 0.01); }

double share(double part, double whole) {
  return whole > 0 ? std::clamp(part / whole, 0.0, 4.0) : 0.0;
}

double type_hash(const std::string& s) { return unit_hash(s, 0); }

// Features whose range the OOD test checks: the continuous ones (not one-hots, not the hash).
bool range_checked(std::size_t i) {
  if (i < kFamilyFeatures) return false;
  if (i >= kBound && i < kBound + 6) return false;
  return i != kTypeHash && i != kBlockedFormat;
}

}  // namespace

CorrectionFeatures correction_features(const Sample& s, const SamplePrediction& p, const HwSpec& hw,
                                       FeatureSet set) {
  CorrectionFeatures x{};
  const OpCost& c = p.cost;
  const auto fam = static_cast<std::size_t>(s.op.kind->family);
  if (fam < kFamilyFeatures) x[fam] = 1;
  const double t = p.predicted_us;
  x[kLogPred] = std::log(std::max(t, 1e-3));
  const std::array<double, 7> pipes = {c.pipes.cube_us, c.pipes.vector_us, c.pipes.scalar_us,
                                       c.pipes.mte1_us, c.pipes.mte2_us,   c.pipes.mte3_us,
                                       c.pipes.fixpipe_us};
  for (std::size_t k = 0; k < pipes.size(); ++k) {
    x[kLogPipe + k] = log_us(pipes[k]);
    x[kPipeFrac + k] = share(pipes[k], t);
  }
  const CriticalPath& cp = c.critical_path;
  const std::array<double, 6> parts = {cp.head_us,      cp.compute_us,  cp.memory_us,
                                       cp.alignment_us, cp.conflict_us, cp.tail_us};
  for (std::size_t k = 0; k < parts.size(); ++k) x[kPathFrac + k] = share(parts[k], t);
  const auto b = static_cast<std::size_t>(c.bound);
  if (b < 6) x[kBound + b] = 1;
  x[kLogBytes] = std::log1p(c.bytes_in + c.bytes_out);
  x[kLogFlops] = std::log1p(c.flops);
  x[kCubeEff] = c.cube_efficiency;
  const bool cube = s.op.kind->family == OpFamily::kCube;
  const int cores = cube ? hw.chip.cube_cores : hw.chip.vector_cores;
  x[kCoreShare] = cores > 0 ? std::clamp(static_cast<double>(c.block_dim) / cores, 0.0, 4.0) : 0.0;
  x[kLogWaves] = std::log1p(std::max(c.waves, 0));
  x[kDtypeBytes] = s.op.inputs.empty() ? 0.0 : dtype_bytes(s.op.inputs.front().dtype);
  for (const auto& in : s.op.inputs) {
    if (is_tiled(in.format)) x[kBlockedFormat] = 1;
  }
  for (const auto& out : s.op.outputs) {
    if (is_tiled(out.format)) x[kBlockedFormat] = 1;
  }
  x[kL2Hit] = std::clamp(s.l2_hit_ratio, 0.0, 1.0);
  if (set.chip) {
    x[kCubeCores] = hw.chip.cube_cores;
    x[kVectorCores] = hw.chip.vector_cores;
    x[kFreqGhz] = hw.chip.freq_mhz / 1000.0;
  }
  x[kTypeHash] = set.hashed_type ? type_hash(s.op.type) : 0.0;
  return x;
}

const std::array<const char*, kCorrectionFeatures>& correction_feature_names() {
  static const std::array<const char*, kCorrectionFeatures> names = {
      "family_cube", "family_elementwise", "family_reduction", "family_data_movement",
      "family_index", "family_sort", "family_aicpu", "family_generic",
      "log_pred_us",
      "log_cube_us", "log_vector_us", "log_scalar_us", "log_mte1_us", "log_mte2_us",
      "log_mte3_us", "log_fixpipe_us",
      "cube_share", "vector_share", "scalar_share", "mte1_share", "mte2_share", "mte3_share",
      "fixpipe_share",
      "head_share", "compute_share", "memory_share", "alignment_share", "conflict_share",
      "tail_share",
      "bound_cube", "bound_vector", "bound_scalar", "bound_memory", "bound_head", "bound_host",
      "log_bytes", "log_flops", "cube_efficiency", "core_share", "log_waves", "dtype_bytes",
      "blocked_format", "l2_hit", "cube_cores", "vector_cores", "freq_ghz", "type_hash"};
  return names;
}

void FeatureRange::add(const CorrectionFeatures& x) {
  if (!any) {
    lo = x;
    hi = x;
    any = true;
  } else {
    for (std::size_t i = 0; i < kCorrectionFeatures; ++i) {
      lo[i] = std::min(lo[i], x[i]);
      hi[i] = std::max(hi[i], x[i]);
    }
  }
  for (std::size_t f = 0; f < kFamilyFeatures; ++f) {
    if (x[f] > 0.5) family_seen[f] = true;
  }
}

std::string FeatureRange::outside(const CorrectionFeatures& x) const {
  if (!any) return "no training rows";
  for (std::size_t f = 0; f < kFamilyFeatures; ++f) {
    if (x[f] > 0.5 && !family_seen[f]) {
      return fmt::format("family {} never trained on",
                         family_name(static_cast<OpFamily>(f)));
    }
  }
  for (std::size_t i = 0; i < kCorrectionFeatures; ++i) {
    if (!range_checked(i)) continue;
    const double slack = margin * std::max(hi[i] - lo[i], 1.0);
    if (x[i] < lo[i] - slack || x[i] > hi[i] + slack) {
      return fmt::format("{} {:.3g} outside [{:.3g}, {:.3g}]", correction_feature_names()[i], x[i],
                         lo[i], hi[i]);
    }
  }
  return {};
}

}  // namespace npusim
