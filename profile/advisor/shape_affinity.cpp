// Rule shape_affinity: cube and attention kernels whose inner axes are not multiples of the
// sizes their kernels tile by, so the last tile of each row is padded. Source: msprof-analyze
// advisor ai_core_performance_checker.py: a MatMul's inner axes (the last axis of each ND
// input) divisible by 256 elements (kCubeAxis); FlashAttention's head dim D and sequence S
// divisible by 128 (kAttentionAxis). npusim adds what the reference leaves out: the padding's
// cost, at stake = time × (1 - actual / padded elements of the worst axis), the work done on
// padding if the kernel's time scales with padded size.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/op_desc.h"
#include "profile/advisor/context.h"

namespace npusim::profile::advisor {
namespace {

constexpr std::int64_t kCubeAxis = 256;
constexpr std::int64_t kAttentionAxis = 128;

double padded_share(std::int64_t n, std::int64_t tile) {
  const double padded = std::ceil(double(n) / double(tile)) * double(tile);
  return 1 - double(n) / padded;
}

bool is_matmul(const std::string& type) {
  return type.rfind("MatMul", 0) == 0 || type.rfind("BatchMatMul", 0) == 0;
}
bool is_attention(const std::string& type) { return type.rfind("FlashAttentionScore", 0) == 0; }

// FlashAttention's query and its softmax statistics [B, N, S, 8] give D and S: a 3-D query
// (BSH / SBH) holds H = N x D, a 4-D one (BNSD / BSND) holds D last. Without the statistics
// tensor (N unknown) only a 4-D query's D is judged.
struct AttentionAxes {
  std::int64_t d = 0, s = 0;
};
AttentionAxes attention_axes(const Kernel& k) {
  AttentionAxes a;
  std::vector<std::vector<std::int64_t>> all;
  try {
    const SourcePos pos{"", 0, 0};
    all = parse_shape_list(k.shapes, pos);
    for (auto& s : parse_shape_list(k.output_shapes, pos)) all.push_back(std::move(s));
  } catch (const InputError&) {
    return a;
  }
  if (all.empty() || all[0].empty()) return a;
  const std::vector<std::int64_t>* stats = nullptr;
  for (const auto& s : all) {
    if (s.size() == 4 && s[3] == 8) {
      stats = &s;
      break;
    }
  }
  const auto& q = all[0];
  if (q.size() == 4) a.d = q[3];
  if (stats != nullptr) {
    a.s = (*stats)[2];
    if (q.size() == 3 && (*stats)[1] > 0 && q[2] % (*stats)[1] == 0) a.d = q[2] / (*stats)[1];
  }
  return a;
}

}  // namespace

void check_shape_affinity(Context& c) {
  struct Hit {
    const Kernel* k;
    double at_stake;
    std::string text;
  };
  std::vector<Hit> hits;
  for (const Kernel& k : c.kernels) {
    std::string why;
    double share = 0;
    if (is_matmul(k.type)) {
      const auto in = input_tensors(k);
      if (in.size() < 2) continue;
      for (std::size_t i = 0; i < 2; ++i) {
        if (in[i].dims.size() < 2) continue;
        const std::int64_t axis = in[i].dims.back();
        if (axis % kCubeAxis == 0) continue;
        share = std::max(share, padded_share(axis, kCubeAxis));
        why += fmt::format("{}input {} inner axis {} not a multiple of {}", why.empty() ? "" : "; ",
                           i, axis, kCubeAxis);
      }
    } else if (is_attention(k.type)) {
      const AttentionAxes a = attention_axes(k);
      if (a.d > 0 && a.d % kAttentionAxis != 0) {
        share = std::max(share, padded_share(a.d, kAttentionAxis));
        why += fmt::format("head dim D = {} not a multiple of {}", a.d, kAttentionAxis);
      }
      if (a.s > 0 && a.s % kAttentionAxis != 0) {
        share = std::max(share, padded_share(a.s, kAttentionAxis));
        why += fmt::format("{}sequence S = {} not a multiple of {}", why.empty() ? "" : "; ", a.s,
                           kAttentionAxis);
      }
    } else {
      continue;
    }
    if (why.empty()) continue;
    hits.push_back({&k, k.total_us * share,
                    fmt::format("{} [{}] {}: {}; {} calls, {}, {} of the work padding", k.type,
                                k.shapes, k.dtypes, why, k.count, fmt_us(k.total_us),
                                pct(share))});
  }
  if (hits.empty()) return;
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit& a, const Hit& b) { return a.at_stake > b.at_stake; });
  Finding f;
  f.check = "shape_affinity";
  for (const Hit& h : hits) {
    f.time_us += h.at_stake;
    if (f.ops.size() >= c.max_listed()) continue;
    f.ops.push_back(h.k->first_name);
    f.evidence.push_back({h.k->first_name, std::nullopt, h.text});
  }
  f.title = fmt::format("{} cube / attention kernels have inner axes their kernels pad", hits.size());
  f.advice = {"Pad the hidden, intermediate or vocabulary size to a multiple of 256 (MatMul) and "
              "the head dim and sequence length to a multiple of 128 (FlashAttention), or choose "
              "model dimensions that are",
              "For a sequence length that varies, bucket the lengths to multiples of 128"};
  c.add_finding(std::move(f));
}

}  // namespace npusim::profile::advisor
