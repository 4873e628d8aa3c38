#include "sim/count_model.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "model/error.h"

namespace npusim::sim {

CountModel::CountModel(const std::vector<SimRun::RequestTimes>& times, double rate_qps,
                       TimeNs limit_ns, int servers)
    : rate_qps_(rate_qps), limit_ns_(static_cast<double>(limit_ns)), servers_(std::max(1, servers)) {
  NPUSIM_CHECK(rate_qps > 0);
  const std::size_t n = times.size();
  arrival_.reserve(n);
  latency_.reserve(n);
  std::vector<TimeNs> start(n);
  std::vector<TimeNs> end(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& t = times[i];
    NPUSIM_CHECK(t.latency_ns >= 0 && t.service_ns >= 0 && t.service_ns <= t.latency_ns);
    arrival_.push_back(static_cast<double>(t.arrival_ns));
    latency_.push_back(static_cast<double>(t.latency_ns));
    end[i] = t.arrival_ns + t.latency_ns;
    start[i] = end[i] - t.service_ns;
  }
  // A batch's members started and completed together: group them, in the order they started.
  members_.resize(n);
  std::iota(members_.begin(), members_.end(), 0U);
  std::sort(members_.begin(), members_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::tie(start[a], end[a], a) < std::tie(start[b], end[b], b);
  });
  // The measured schedule, with each job on the stream that freed first: its hold is what of
  // its start neither its release nor a busy stream explains.
  std::vector<double> free_at(static_cast<std::size_t>(servers_),
                              -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < n;) {
    const std::uint32_t a = members_[i];
    std::size_t j = i + 1;
    while (j < n && start[members_[j]] == start[a] && end[members_[j]] == end[a]) ++j;
    Job job;
    job.first = static_cast<std::uint32_t>(i);
    job.count = static_cast<std::uint32_t>(j - i);
    for (std::size_t m = i; m < j; ++m) job.release = std::max(job.release, arrival_[members_[m]]);
    job.service = static_cast<double>(end[a] - start[a]);
    auto f = std::min_element(free_at.begin(), free_at.end());
    const double s = static_cast<double>(start[a]);
    job.hold = std::max(0.0, s - std::max(job.release, *f));
    *f = s + job.service;
    jobs_.push_back(job);
    i = j;
  }
  std::vector<double> s1;
  replay(1.0, s1);
  for (std::size_t j = 0; j < jobs_.size(); ++j) jobs_[j].start = s1[j];
}

void CountModel::replay(double x, std::vector<double>& start) const {
  start.resize(jobs_.size());
  std::vector<double> free_at(static_cast<std::size_t>(servers_),
                              -std::numeric_limits<double>::infinity());
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = jobs_[j];
    auto f = std::min_element(free_at.begin(), free_at.end());
    start[j] = std::max(job.release * x + job.hold, *f);
    *f = start[j] + job.service;
  }
}

std::int64_t CountModel::count(double rate_qps) const {
  const double x = rate_qps_ / rate_qps;
  std::vector<double> start;
  replay(x, start);
  std::int64_t over = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const Job& job = jobs_[j];
    const double moved = start[j] - job.start;
    for (std::uint32_t m = job.first; m < job.first + job.count; ++m) {
      const std::uint32_t i = members_[m];
      const double latency = x == 1.0 ? latency_[i] : latency_[i] + moved - arrival_[i] * (x - 1);
      if (latency > limit_ns_) ++over;
    }
  }
  return over;
}

}  // namespace npusim::sim
