// The card model's measurements: the measured window, utilisations, per-op accounting, the
// latency summary and the result.

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/card_model.h"

namespace npusim::sim::card {

namespace {

double sorted_rank(const std::vector<TimeNs>& sorted, double p) {
  if (sorted.empty()) return 0;
  return static_cast<double>(sorted[sim::nearest_rank(sorted.size(), p) - 1]);
}

}  // namespace

// The nearest-rank P99 of the measured requests resolved so far: the completed ones and those
// in flight and already over the target (at their age so far).
double CardModel::p99_so_far_ms() const {
  std::vector<TimeNs> v(latencies_);
  if (watch_) watch_->append_over_in_flight(sim_.now(), v);
  if (v.empty()) return 0;
  const auto at = v.begin() + static_cast<std::ptrdiff_t>(sim::nearest_rank(v.size(), 0.99) - 1);
  std::nth_element(v.begin(), at, v.end());
  return static_cast<double>(*at) / 1e6;
}

// The result: of the whole run once it ended, else of what ran (stopped_early).
SimResult CardModel::end() {
  if (ended()) {
    NPUSIM_CHECK(completed_ == total_requests_);
  } else {
    result_.stopped_early = true;
  }
  finish();
  if (result_.stopped_early && stopped_over()) result_.p99_met = false;
  return std::move(result_);
}

void CardModel::start_measuring() {
  const TimeNs now = sim_.now();
  measure_start_ns_ = now;
  measuring_ = true;
  cube_.busy().restart(now);
  vector_.busy().restart(now);
  aicpu_.busy_time().restart(now);
  pcie_.busy_time().restart(now);
  pcie_out_.busy_time().restart(now);
  if (host_) host_->busy_time().restart(now);
  sched_busy_ns_ = 0;
  in_system_.restart(now);
  device_busy_.restart(now);
  streams_busy_.restart(now);
  hbm_bytes_at_start_ = hbm_.bytes_moved();
}

// Called when the last measured request completes: the window ends here.
void CardModel::snapshot() {
  const TimeNs now = sim_.now();
  end_ns_ = now;
  const double span_ns = static_cast<double>(now - measure_start_ns_);
  result_.window_s = span_ns / 1e9;
  result_.cube_utilization =
      hw_.chip.cube_cores > 0 ? cube_.busy().area(now) / (span_ns * hw_.chip.cube_cores) : 0;
  result_.vector_utilization =
      hw_.chip.vector_cores > 0 ? vector_.busy().area(now) / (span_ns * hw_.chip.vector_cores) : 0;
  result_.aicpu_utilization =
      aicpu_.busy_time().area(now) / (span_ns * std::max(1, hw_.chip.aicpu_cores));
  result_.pcie_utilization = pcie_.busy_time().area(now) / span_ns;
  result_.pcie_out_utilization = pcie_out_.busy_time().area(now) / span_ns;
  if (host_) result_.host_utilization = host_->busy_time().area(now) / (span_ns * hw_.host.cores);
  // (a kernel's scheduler time is counted when it is taken, so the share can pass 1 by a few
  // kernels' worth at the window's end; clamp)
  result_.scheduler_utilization = std::min(1.0, sched_busy_ns_ / span_ns);
  result_.in_system_mean = in_system_.area(now) / span_ns;
  const double stream_busy = streams_busy_.area(now);
  result_.device_idle_share = stream_busy > 0 ? 1.0 - device_busy_.area(now) / stream_busy : 0;
  result_.hbm_bytes_per_us = (hbm_.bytes_moved() - hbm_bytes_at_start_) / (span_ns / 1e3);
  measuring_ = false;
}

void CardModel::finish() {
  SimResult& r = result_;
  r.scenario = sc_.info.name;
  r.hw = hw_.chip.name;
  r.seed = sc_.info.seed;
  r.streams = sc_.deployment.streams;
  r.requests = static_cast<std::int64_t>(latencies_.size());
  r.warmup_requests = sc_.workload.warmup_requests;
  r.samples = measured_samples_;
  r.batches = batches_done_;
  r.split_requests = split_;
  r.mean_batch_samples =
      batches_done_ > 0 ? static_cast<double>(batch_samples_) / static_cast<double>(batches_done_)
                        : 0;
  r.mean_gear = batches_done_ > 0
                    ? static_cast<double>(batch_gears_) / static_cast<double>(batches_done_)
                    : 0;
  // Rates count every completion inside the window: when the card is saturated, warm-up
  // requests still finish inside it, and leaving them out would understate its capacity.
  r.window_completions = window_completions_;
  r.qps = r.window_s > 0 ? static_cast<double>(window_completions_) / r.window_s : 0;
  r.throughput = r.window_s > 0 ? static_cast<double>(window_samples_) / r.window_s : 0;
  double sum = 0;
  double queue_sum = 0;
  for (std::size_t i = 0; i < latencies_.size(); ++i) sum += static_cast<double>(latencies_[i]);
  queue_sum = sum - service_sum_ns_;
  const double n = std::max<double>(1.0, static_cast<double>(latencies_.size()));
  std::sort(latencies_.begin(), latencies_.end());
  r.latency.mean_ms = sum / n / 1e6;
  r.latency.p50_ms = sorted_rank(latencies_, 0.50) / 1e6;
  r.latency.p90_ms = sorted_rank(latencies_, 0.90) / 1e6;
  r.latency.p99_ms = sorted_rank(latencies_, 0.99) / 1e6;
  r.latency.p999_ms = sorted_rank(latencies_, 0.999) / 1e6;
  r.latency.max_ms = latencies_.empty() ? 0 : static_cast<double>(latencies_.back()) / 1e6;
  r.queue_ms_mean = queue_sum / n / 1e6;
  r.service_ms_mean = service_sum_ns_ / n / 1e6;
  r.service_ms_sd = std::sqrt(std::max(0.0, service_sq_sum_ns2_ / n -
                                                (service_sum_ns_ / n) * (service_sum_ns_ / n))) /
                    1e6;
  r.service_ms_min = latencies_.empty() ? 0 : static_cast<double>(service_min_ns_) / 1e6;
  r.service_ms_max = static_cast<double>(service_max_ns_) / 1e6;
  if (sc_.target.traffic_qps && r.qps > 0) {
    r.cards_needed = static_cast<std::int64_t>(std::ceil(*sc_.target.traffic_qps / r.qps - 1e-9));
  }
  if (sc_.target.p99_ms) r.p99_met = r.latency.p99_ms <= *sc_.target.p99_ms;
  double total_ns = 0;
  for (const TimeNs t : op_ns_) total_ns += static_cast<double>(t);
  for (const std::size_t op : order_) {
    OpStats o;
    o.name = ops_[op].name;
    o.type = ops_[op].type;
    o.executions = op_count_[op];
    o.device_us = static_cast<double>(op_ns_[op]) / 1e3;
    o.share = total_ns > 0 ? static_cast<double>(op_ns_[op]) / total_ns : 0;
    o.mean_us = o.executions > 0 ? o.device_us / static_cast<double>(o.executions) : 0;
    // Measured at every gear it ran at, anchored at any, or never measured (the source does
    // not depend on the gear for a graph without a measurement).
    if (!sc_.graph.ops()[op].duration_us) {
      o.source = "predicted";
      ++r.op_sources.predicted;
    } else if (op_anchored_[op] > 0 ||
               (op_count_[op] == 0 && anchoring_.source(op, 0) == TimeSource::kAnchored)) {
      o.source = "anchored";
      ++r.op_sources.anchored;
    } else {
      o.source = "measured";
      ++r.op_sources.measured;
    }
    r.ops.push_back(std::move(o));
  }
  r.events = sim_.stats().events_processed;
}

}  // namespace npusim::sim::card
