// Rule pipe_bound: every kernel with PipeUtilization ratios is judged by its own pipes — a cube
// kernel by the cube core's (MAC, scalar, MTE1, MTE2, FixPipe), a vector kernel by the vector
// core's (vector, scalar, MTE2, MTE3), a mixed kernel by both — and the bound is the pipe that
// limits it, with overlap taken into account:
//  1. the compute pipe (MAC, vector) at or above its threshold: compute-bound; loads and stores
//     overlap it (double buffering), however busy they are;
//  2. else the busiest other pipe at or above its threshold: that pipe limits;
//  3. else, with S the sum of the side's data and compute pipes (scalar left out: it issues
//     the others' instructions and overlaps them all):
//     S in [kSerialSum, kSerialMax]: the pipes fill the time one after another, none overlapping
//       ("serial");
//     S above kSerialMax: they overlap, yet none is saturated: each waits on another's buffer
//       ("stalled");
//     S below kSerialSum: no pipe is busy: the time is synchronisation, launch and head
//       ("latency").
// Findings: memory_bound (MTE1/MTE2/MTE3/FixPipe), scalar_bound, serial_pipes, stalled_pipes,
// latency_bound.
// Compute-bound kernels are doing their job and make no finding (the JSON lists every verdict).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

// Thresholds per pipe. Source: msprof-analyze advisor rules/en/aicore_performance.yaml
// (cube_operators: aic_mac_ratio 0.8, aic_mte2_ratio 0.95; fa_operators: aic_fixpipe_ratio
// 0.75; vector_operators: aiv_vec_ratio / aiv_mte2_ratio / aiv_mte3_ratio 0.7 and their sum 0.9).
// The scalar and MTE1 thresholds are estimates (calibrate): the reference does not judge them.
constexpr double kThreshold[kPipeCount] = {
    0.80,  // kMac: reference
    0.80,  // kAicScalar: estimate, as the MAC
    0.80,  // kMte1: estimate, as the MAC (L1 -> L0 feeds the MAC directly)
    0.95,  // kAicMte2: reference (cube kernels stream operands; MTE2 runs hot when overlapped)
    0.75,  // kFixpipe: reference (FlashAttention)
    0.70,  // kVec: reference
    0.70,  // kAivScalar: estimate, as the vector
    0.70,  // kAivMte2: reference
    0.70,  // kMte3: reference
};
/// The pipes of one side adding up to this with none saturated: they take turns (reference:
/// vector_operators "total" 0.9) ...
constexpr double kSerialSum = 0.9;
/// ... up to this: beyond it they must overlap (a sum above 1 needs two pipes busy at once; the
/// margin is the ratios' rounding and scalar-like stalls, estimate).
constexpr double kSerialMax = 1.1;
/// Tensors smaller than this are moved in one transfer of a few blocks: their last axis pads at
/// most one 32-byte block, nothing to fix (estimate: 8 blocks).
constexpr double kSmallTensorBytes = 256;
/// The alignment the DMA moves in: a last axis whose bytes are not a multiple is padded
/// (DESIGN.md "32-byte alignment").
constexpr double kBlockBytes = 32;

constexpr Pipe kCubePipes[] = {kMac, kAicScalar, kMte1, kAicMte2, kFixpipe};
constexpr Pipe kVectorPipes[] = {kVec, kAivScalar, kAivMte2, kMte3};

struct Verdict {
  std::string bound;   // pipe name, "serial" or "latency"
  Pipe pipe = kPipeCount;
  double compute_ratio = 0;  // the judged side's compute pipe
  double max_ratio = 0;      // the busiest pipe
  std::string why;
};

template <std::size_t N>
Verdict judge_side(const Kernel& k, const Pipe (&pipes)[N]) {
  Verdict v;
  const Pipe compute = pipes[0];
  v.compute_ratio = k.ratio(compute);
  double sum = 0;
  for (Pipe p : pipes) {
    if (p != kAicScalar && p != kAivScalar) sum += k.ratio(p);
    v.max_ratio = std::max(v.max_ratio, k.ratio(p));
  }
  if (v.compute_ratio >= kThreshold[compute]) {
    v.bound = pipe_name(compute);
    v.pipe = compute;
    v.why = fmt::format("{} {:.2f} >= {:.2f}: the loads overlap it", pipe_column(compute),
                        v.compute_ratio, kThreshold[compute]);
    return v;
  }
  Pipe top = kPipeCount;
  for (Pipe p : pipes) {
    if (p == compute || k.ratio(p) < kThreshold[p]) continue;
    if (top == kPipeCount || k.ratio(p) > k.ratio(top)) top = p;
  }
  if (top != kPipeCount) {
    v.bound = pipe_name(top);
    v.pipe = top;
    v.why = fmt::format("{} {:.2f} >= {:.2f} while {} is {:.2f}", pipe_column(top), k.ratio(top),
                        kThreshold[top], pipe_column(compute), v.compute_ratio);
  } else if (sum >= kSerialSum && sum <= kSerialMax) {
    v.bound = "serial";
    v.why = fmt::format("no pipe saturated, and they add up to {:.2f}: they take turns", sum);
  } else if (sum > kSerialMax) {
    v.bound = "stalled";
    v.why = fmt::format("the pipes overlap (they add up to {:.2f}) but none is saturated, the "
                        "busiest at {:.2f}: they wait on each other",
                        sum, v.max_ratio);
  } else {
    v.bound = "latency";
    v.why = fmt::format("the busiest pipe is at {:.2f}: the time is synchronisation, launch and "
                        "head",
                        v.max_ratio);
  }
  return v;
}

// A mixed kernel is limited by whichever side is limited harder: a saturated compute pipe
// first, then a saturated other pipe, then the side whose pipes are busiest.
Verdict judge(const Kernel& k, std::string* side) {
  const bool cube = k.cube_side || k.kind == TaskKind::kCube;
  const bool vec = k.vector_side || k.kind == TaskKind::kVector;
  if (cube && !vec) {
    *side = "cube";
    return judge_side(k, kCubePipes);
  }
  if (vec && !cube) {
    *side = "vector";
    return judge_side(k, kVectorPipes);
  }
  *side = "mix";
  const Verdict a = judge_side(k, kCubePipes);
  const Verdict b = judge_side(k, kVectorPipes);
  auto rank = [](const Verdict& v) {
    if (v.pipe == kMac || v.pipe == kVec) return 3;
    if (v.pipe != kPipeCount) return 2;
    return v.bound == "latency" ? 0 : 1;
  };
  if (rank(a) != rank(b)) return rank(a) > rank(b) ? a : b;
  return a.max_ratio >= b.max_ratio ? a : b;
}

struct Alignment {
  bool aligned = true;
  std::string detail;
};

// Rows of the last axis moved in whole 32-byte blocks. The last axis is the innermost one longer
// than 1 (trailing 1s add no row). Small tensors (a scalar, a step count, an index list) are one
// transfer whatever their size, and Foreach ops take lists of tensors they move each as one flat
// buffer, so neither has rows to pad.
Alignment alignment(const Kernel& k, const std::vector<Tensor>& in) {
  Alignment a;
  if (k.type.rfind("Foreach", 0) == 0) return a;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].dims.empty() || in[i].elements() * in[i].elem_bytes < kSmallTensorBytes) continue;
    std::int64_t axis = 1;
    for (auto d = in[i].dims.rbegin(); d != in[i].dims.rend() && axis == 1; ++d) axis = *d;
    const double last = double(axis) * in[i].elem_bytes;
    if (std::fmod(last, kBlockBytes) != 0) {
      a.aligned = false;
      a.detail += fmt::format("{}input {} last axis {} B", a.detail.empty() ? "" : ", ", i, last);
    }
  }
  return a;
}

struct Hit {
  const Kernel* k = nullptr;
  Verdict v;
  double at_stake = 0;
  std::string text;
  bool unaligned = false;
};

void add(Context& c, const char* check, const std::string& title, std::vector<Hit>& hits,
         std::vector<std::string> advice) {
  if (hits.empty()) return;
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& a, const Hit& b) { return a.at_stake > b.at_stake; });
  Finding f;
  f.check = check;
  std::uint64_t calls = 0;
  for (const Hit& h : hits) {
    calls += h.k->count;
    f.time_us += h.at_stake;
    if (f.ops.size() >= c.max_listed()) continue;
    f.ops.push_back(h.k->first_name);
    f.evidence.push_back({h.k->first_name, std::nullopt, h.text});
  }
  f.title = fmt::format("{} calls of {} kernels are {}", calls, hits.size(), title);
  f.evidence.insert(f.evidence.begin(), {"calls", double(calls), ""});
  f.advice = std::move(advice);
  c.add_finding(std::move(f));
}

}  // namespace

void check_pipe_bound(Context& c) {
  if (!c.has_column(&KernelFileInfo::has_mte2)) {
    c.skip("pipe_bound", "no aic_/aiv_ pipe ratio columns (the PipeUtilization metric group is "
                         "needed)");
    return;
  }
  const auto& chip = c.report.chip;
  if (!chip.hbm_gbps) c.skip("memory_bound bandwidth", "chip HBM bandwidth unknown: pass --hw");
  std::vector<Hit> memory, scalar, serial, stalled, latency;
  std::vector<std::string> unaligned_names;
  std::set<std::string> memory_pipes;
  bool any_unaligned = false;
  for (const Kernel& k : c.kernels) {
    if (k.pmu_calls == 0 || k.pmu_us <= 0) continue;
    KernelBound b;
    const Verdict v = judge(k, &b.side);
    b.name = k.first_name;
    b.type = k.type;
    b.shapes = k.shapes;
    b.dtypes = k.dtypes;
    b.calls = k.count;
    b.total_us = k.total_us;
    b.bound = v.bound;
    b.why = v.why;
    for (int p = 0; p < kPipeCount; ++p) {
      const Pipe pp = static_cast<Pipe>(p);
      if (k.ratio_us[std::size_t(p)] > 0) b.ratios.emplace_back(pipe_column(pp), k.ratio(pp));
    }
    c.report.kernels.push_back(b);

    Hit h;
    h.k = &k;
    h.v = v;
    const std::string head = fmt::format("{} [{}] {}: {} calls, {}; {}-bound: {}", k.type, k.shapes,
                                         k.dtypes, k.count, fmt_us(k.total_us), v.bound, v.why);
    if (v.pipe == kAicMte2 || v.pipe == kAivMte2 || v.pipe == kMte3 || v.pipe == kMte1 ||
        v.pipe == kFixpipe) {
      // Time at stake: for MTE2, what the loads would save at the chip's HBM rate; for the
      // other movers, the time the compute pipe waits.
      double frac = 1 - v.compute_ratio;
      std::string extra;
      const auto in = input_tensors(k);
      if ((v.pipe == kAicMte2 || v.pipe == kAivMte2) && !in.empty() && k.mte2_time_us > 0) {
        double bytes = 0;
        for (const auto& t : in) bytes += t.elements() * t.elem_bytes;
        const double gbps = bytes * double(k.pmu_calls) / k.mte2_time_us / 1e3;
        extra = fmt::format("; {:.0f} GB/s", gbps);
        if (chip.hbm_gbps && *chip.hbm_gbps > 0) {
          extra += fmt::format(" ({} of {:.0f} GB/s HBM{})", pct(gbps / *chip.hbm_gbps),
                               *chip.hbm_gbps, chip.name.empty() ? "" : ", " + chip.name);
          frac = std::clamp(1 - gbps / *chip.hbm_gbps, 0.0, 1.0);
        }
      }
      if (v.pipe != kFixpipe && v.pipe != kMte1 && !in.empty()) {
        const Alignment a = alignment(k, in);
        h.unaligned = !a.aligned;
        any_unaligned = any_unaligned || h.unaligned;
        if (h.unaligned) unaligned_names.push_back(k.type + " [" + k.shapes + "]");
        extra += a.aligned ? "; last axes 32-byte aligned" : "; NOT aligned: " + a.detail;
      }
      h.at_stake = k.total_us * frac;
      h.text = head + extra;
      memory_pipes.insert(pipe_name(v.pipe));
      memory.push_back(h);
    } else if (v.pipe == kAicScalar || v.pipe == kAivScalar) {
      h.at_stake = k.total_us * (1 - v.compute_ratio);
      h.text = head;
      scalar.push_back(h);
    } else if (v.bound == "serial" || v.bound == "stalled" || v.bound == "latency") {
      // With perfect overlap the kernel would take its busiest pipe's time.
      h.at_stake = k.total_us * (1 - v.max_ratio);
      h.text = head;
      (v.bound == "serial" ? serial : v.bound == "stalled" ? stalled : latency).push_back(h);
    }
  }
  std::stable_sort(c.report.kernels.begin(), c.report.kernels.end(),
                   [](const KernelBound& a, const KernelBound& b) { return a.total_us > b.total_us; });

  std::vector<std::string> mem_advice;
  if (any_unaligned) {
    std::string names;
    for (std::size_t i = 0; i < unaligned_names.size() && i < 3; ++i) {
      names += (i ? "; " : "") + unaligned_names[i];
    }
    if (unaligned_names.size() > 3) names += fmt::format("; {} more", unaligned_names.size() - 3);
    mem_advice.emplace_back(fmt::format("Pad or regroup the last axis to a multiple of 32 bytes "
                                        "so each row is moved in whole blocks: {}",
                                        names));
  }
  if (memory_pipes.count("mte2")) {
    mem_advice.emplace_back("MTE2 (loads from HBM) limits: fuse the op with its producer or "
                            "consumer so the data is not loaded again; keep hot inputs small "
                            "enough to stay in L2; below the chip's bandwidth, larger tiles or "
                            "a better format (ND vs NZ) raise the achieved rate");
  }
  if (memory_pipes.count("mte3")) {
    mem_advice.emplace_back("MTE3 (stores to HBM) limits: write fewer bytes (a lower-precision "
                            "output, fuse the consumer) and contiguous rows");
  }
  if (memory_pipes.count("mte1")) {
    mem_advice.emplace_back("MTE1 (L1 -> L0 moves) limits: larger base blocks reuse each load "
                            "for more MACs; NZ operands skip the ND -> NZ conversion in L1");
  }
  if (memory_pipes.count("fixpipe")) {
    mem_advice.emplace_back("FixPipe (L0C -> HBM) limits: fewer, larger output tiles, a bf16 "
                            "output instead of fp32, or an element-wise consumer fused into it");
  }
  add(c, "memory_bound", "limited by a data-movement pipe (MTE1/MTE2/MTE3/FixPipe)", memory,
      mem_advice);
  add(c, "scalar_bound", "limited by the scalar pipe", scalar,
      {"Scalar work (address arithmetic, loop control, tiling decisions per block) limits: "
       "larger tiles mean fewer iterations; avoid int64 index arithmetic; check the kernel's "
       "tiling for tiny blocks"});
  add(c, "serial_pipes", "running their pipes in turn, not overlapped", serial,
      {"No pipe is saturated but they add up: the kernel does not overlap loads, compute and "
       "stores; a tiling with double buffering (more buffer slots in UB / L1) overlaps them"});
  add(c, "stalled_pipes", "overlapping their pipes with none saturated", stalled,
      {"The pipes overlap but wait on each other's buffers: more buffer slots (double or triple "
       "buffering), tiles that balance loads against compute (for a MatMul a larger base block, "
       "NZ operands), or a split that gives each core more work per hand-off"});
  add(c, "latency_bound", "busy on no pipe (synchronisation, launch and head time)", latency,
      {"Short kernels whose pipes are mostly idle: fuse them with their neighbours, or give them "
       "fewer cores (block dim) so the per-core head costs less"});
}

}  // namespace npusim::profile::advisor
