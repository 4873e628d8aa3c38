#include "profile/advisor/context.h"

#include <fmt/format.h>

#include <algorithm>

#include "model/op_desc.h"

namespace npusim::profile::advisor {

const char* pipe_name(Pipe p) noexcept {
  static const char* const kNames[kPipeCount] = {"cube", "scalar", "mte1", "mte2", "fixpipe",
                                                 "vector", "scalar", "mte2", "mte3"};
  return p < kPipeCount ? kNames[p] : "?";
}

const char* pipe_column(Pipe p) noexcept {
  static const char* const kNames[kPipeCount] = {
      "aic_mac_ratio", "aic_scalar_ratio", "aic_mte1_ratio",  "aic_mte2_ratio", "aic_fixpipe_ratio",
      "aiv_vec_ratio", "aiv_scalar_ratio", "aiv_mte2_ratio", "aiv_mte3_ratio"};
  return p < kPipeCount ? kNames[p] : "?";
}

std::uint32_t Context::intern(const std::string& s) {
  const auto it = string_ids.find(s);
  if (it != string_ids.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(strings.size());
  strings.push_back(s);
  string_ids.emplace(s, id);
  return id;
}

bool Context::has_column(bool KernelFileInfo::*flag) const {
  return std::any_of(infos.begin(), infos.end(), [&](const KernelFileInfo& i) { return i.*flag; });
}

double Context::step_time_us() const {
  double span = 0;
  for (const auto& s : report.steps) span += s.span_us;
  return span > 0 ? span : report.total_time_us;
}

void Context::add_finding(Finding f) {
  const double base = step_time_us();
  if (f.severity.empty()) {
    const double share = base > 0 ? f.time_us / base : 0;
    f.severity = share >= th.high_share ? "high" : share >= th.medium_share ? "medium" : "low";
  }
  report.findings.push_back(std::move(f));
}

double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string fmt_us(double v) {
  if (v >= 100) return fmt::format("{:.0f} us", v);
  return fmt::format("{:.2f} us", v);
}

std::string pct(double share) { return fmt::format("{:.1f} %", share * 100.0); }

bool is_aclop_style(const std::string& name) { return name.rfind("aclnn", 0) != 0; }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (i.end <= i.start) continue;
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

std::int64_t union_ns(std::vector<Interval> v) {
  std::int64_t total = 0;
  for (const auto& i : merged(std::move(v))) total += i.end - i.start;
  return total;
}

std::int64_t covered_ns(const std::vector<Interval>& m, std::int64_t a, std::int64_t b) {
  if (b <= a) return 0;
  // First interval that ends after a.
  auto it = std::lower_bound(m.begin(), m.end(), a,
                             [](const Interval& i, std::int64_t t) { return i.end <= t; });
  std::int64_t total = 0;
  for (; it != m.end() && it->start < b; ++it) {
    total += std::min(b, it->end) - std::max(a, it->start);
  }
  return total;
}

double Tensor::elements() const {
  double n = 1;
  for (auto d : dims) n *= static_cast<double>(d);
  return n;
}

std::vector<Tensor> input_tensors(const Kernel& k) {
  std::vector<Tensor> out;
  try {
    const SourcePos pos{"", 0, 0};
    const auto shapes = parse_shape_list(k.shapes, pos);
    const auto dtypes = parse_dtype_list(k.dtypes, pos);
    if (shapes.empty() || (dtypes.size() != shapes.size() && dtypes.size() != 1)) return {};
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      out.push_back({shapes[i], dtype_bytes(dtypes.size() == 1 ? dtypes[0] : dtypes[i])});
    }
  } catch (const InputError&) {
    return {};  // shapes unreadable: the rules that need them skip this kernel
  }
  return out;
}

}  // namespace npusim::profile::advisor
