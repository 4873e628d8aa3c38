#include "profile/op_statistic.h"

#include <algorithm>

namespace npusim::profile {

void OpStatistic::add(const KernelRow& row) {
  if (row.kind == TaskKind::kCommunication) return;
  const std::string& type = row.type.empty() ? row.name : row.type;
  auto [it, fresh] = rows_.try_emplace({type, row.task_type});
  OpStatRow& r = it->second;
  if (fresh) {
    r.type = type;
    r.core_type = row.task_type;
    r.min_us = row.duration_us;
    r.max_us = row.duration_us;
  }
  ++r.count;
  r.total_us += row.duration_us;
  r.min_us = std::min(r.min_us, row.duration_us);
  r.max_us = std::max(r.max_us, row.duration_us);
}

std::vector<OpStatRow> OpStatistic::rows() const {
  std::vector<OpStatRow> out;
  out.reserve(rows_.size());
  double total = 0;
  for (const auto& [k, r] : rows_) total += r.total_us;
  for (const auto& [k, r] : rows_) {
    OpStatRow o = r;
    o.avg_us = o.count > 0 ? o.total_us / static_cast<double>(o.count) : 0;
    o.ratio_pct = total > 0 ? 100.0 * o.total_us / total : 0;
    out.push_back(std::move(o));
  }
  std::stable_sort(out.begin(), out.end(), [](const OpStatRow& a, const OpStatRow& b) {
    return a.total_us > b.total_us;  // ties keep the map's (type, core type) order
  });
  return out;
}

std::vector<OpStatRow> OpStatistic::other_device_rows() const {
  std::vector<OpStatRow> out;
  for (auto& r : rows()) {
    if (classify_task(r.core_type, r.type) == TaskKind::kOther) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace npusim::profile
