// The card model's front end: arrivals (Poisson, closed loop, trace), the batcher (window, gears,
// oversize split), the input copy over PCIe, the ready queue, and request completion.

#include <algorithm>

#include "sim/card_model.h"

namespace npusim::sim::card {

void CardModel::start_arrivals() {
  const Workload& w = sc_.workload;
  switch (w.arrival) {
    case ArrivalKind::kPoisson:
      sim_.schedule_at(us_to_ns(sim_.exponential(1e6 / w.rate_qps)), this, kArrival, 0,
                       kPrioArrival);
      break;
    case ArrivalKind::kClosed:
      for (std::int64_t c = 0; c < std::min<std::int64_t>(w.concurrency, total_requests_); ++c) {
        sim_.schedule_at(0, this, kArrival, 0, kPrioArrival);
        ++arrivals_scheduled_;
      }
      break;
    case ArrivalKind::kTrace:
      sim_.schedule_at(w.trace.front().arrival_ns, this, kArrival, 0, kPrioArrival);
      break;
  }
}

void CardModel::on_arrival(std::uint64_t /*payload*/) {
  const Workload& w = sc_.workload;
  const auto id = static_cast<std::int64_t>(requests_.size());
  NPUSIM_CHECK(id < total_requests_);
  Request r;
  r.arrival_ns = sim_.now();
  if (w.arrival == ArrivalKind::kTrace && w.trace[static_cast<std::size_t>(id)].batch_size > 0) {
    r.samples = w.trace[static_cast<std::size_t>(id)].batch_size;
  } else {
    r.samples = w.batch_size.draw(sim_.uniform01());
  }
  requests_.push_back(r);
  if (id == w.warmup_requests) start_measuring();
  if (watch_ && id >= w.warmup_requests) {
    watch_->arrived(sim_.now());
    watch_->age(sim_.now());
    if (stopped_over()) sim_.stop();
  }
  in_system_.add(sim_.now(), 1);

  // The next arrival of an open workload.
  if (id + 1 < total_requests_) {
    if (w.arrival == ArrivalKind::kPoisson) {
      sim_.schedule_in(us_to_ns(sim_.exponential(1e6 / w.rate_qps)), this, kArrival, 0,
                       kPrioArrival);
    } else if (w.arrival == ArrivalKind::kTrace) {
      sim_.schedule_at(w.trace[static_cast<std::size_t>(id + 1)].arrival_ns, this, kArrival, 0,
                       kPrioArrival);
    }
  }
  route(static_cast<std::uint32_t>(id));
}

void CardModel::route(std::uint32_t id) {
  Request& r = requests_[id];
  const std::int64_t max_gear = sc_.deployment.gears.back();
  if (r.samples > max_gear) {
    // Oversize: chunks of the largest gear, each its own batch, run in parallel on streams.
    std::int64_t left = r.samples;
    r.chunks_left = static_cast<std::int32_t>((left + max_gear - 1) / max_gear);
    while (left > 0) {
      const std::int64_t chunk = std::min(left, max_gear);
      left -= chunk;
      const std::int64_t b = new_batch();
      // A chunk carries its request itself rather than through members_.
      batches_[static_cast<std::size_t>(b)].chunk_of = id;
      batches_[static_cast<std::size_t>(b)].samples = chunk;
      dispatch(b);
    }
    return;
  }
  r.chunks_left = 1;
  pending_.push_back(id);
  pending_samples_ += r.samples;
  try_form();
}

// The batcher (dynamic batching as serving front ends do it): waiting requests are taken
// first come, first served into a batch of at most the largest gear. A full batch is formed at
// once; a partial one only when a stream is free to run it, and then only once the oldest
// waiting request has waited batch_window_us (0: at once). While every stream is busy,
// requests keep gathering, so a loaded card runs fuller batches.
void CardModel::try_form() {
  const std::int64_t max_gear = sc_.deployment.gears.back();
  while (pending_samples_ >= max_gear) form();
  while (!pending_.empty() && idle_streams_ > in_flight_) {
    const TimeNs deadline = requests_[pending_.front()].arrival_ns + window_ns_;
    if (sim_.now() < deadline) {
      if (!sim_.pending(window_) || window_at_ != deadline) {
        sim_.cancel(window_);
        window_ = sim_.schedule_at(deadline, this, kWindowExpired, 0, kPrioArrival);
        window_at_ = deadline;
      }
      return;
    }
    form();
  }
}

void CardModel::form() {
  const std::int64_t max_gear = sc_.deployment.gears.back();
  const std::int64_t b = new_batch();
  while (!pending_.empty()) {
    const std::uint32_t id = pending_.front();
    const std::int64_t n = requests_[id].samples;
    if (batches_[static_cast<std::size_t>(b)].samples + n > max_gear) break;
    pending_.pop_front();
    pending_samples_ -= n;
    add_member(b, id, n);
  }
  NPUSIM_CHECK(batches_[static_cast<std::size_t>(b)].member_count > 0);
  dispatch(b);
}

std::int64_t CardModel::new_batch() {
  Batch b;
  b.first_member = static_cast<std::uint32_t>(members_.size());
  batches_.push_back(b);
  return static_cast<std::int64_t>(batches_.size()) - 1;
}

void CardModel::add_member(std::int64_t b, std::uint32_t id, std::int64_t samples) {
  Batch& batch = batches_[static_cast<std::size_t>(b)];
  NPUSIM_CHECK(batch.first_member + batch.member_count == members_.size());
  members_.push_back(id);
  ++batch.member_count;
  batch.samples += samples;
}

// Pads to the next gear, copies the input over PCIe, then queues the batch for a stream.
void CardModel::dispatch(std::int64_t b) {
  ++in_flight_;
  Batch& batch = batches_[static_cast<std::size_t>(b)];
  const auto& gears = sc_.deployment.gears;
  const auto g = std::lower_bound(gears.begin(), gears.end(), batch.samples);
  NPUSIM_CHECK(g != gears.end());
  batch.gear = *g;
  batch.gear_idx = static_cast<std::uint32_t>(g - gears.begin());
  const double bytes = sc_.workload.input_bytes_per_sample * static_cast<double>(batch.gear);
  if (bytes > 0) {
    const TimeNs ns = pcie_ns(bytes);
    if (opt_.trace) pcie_spans_pending_.push_back({b, ns});
    pcie_.submit(ns, static_cast<std::uint64_t>(b));
  } else {
    batch_ready(b);
  }
}

void CardModel::batch_ready(std::int64_t b) {
  if (opt_.trace && !pcie_spans_pending_.empty() && pcie_spans_pending_.front().first == b) {
    const TimeNs d = pcie_spans_pending_.front().second;
    pcie_spans_pending_.pop_front();
    span(pcie_track_, pcie_name_, sim_.now() - d, d, b);
  }
  for (std::size_t s = 0; s < streams_.size(); ++s) {
    if (streams_[s].batch < 0) {
      start_batch(s, b);
      return;
    }
  }
  ready_.push_back(b);
}

void CardModel::complete(std::uint32_t id) {
  const Request& r = requests_[id];
  const TimeNs now = sim_.now();
  in_system_.add(now, -1);
  ++completed_;
  if (measuring_) {
    ++window_completions_;
    window_samples_ += r.samples;
  }
  if (static_cast<std::int64_t>(id) >= sc_.workload.warmup_requests) {
    latencies_.push_back(now - r.arrival_ns);
    service_sum_ns_ += static_cast<double>(r.service_ns);
    service_sq_sum_ns2_ += static_cast<double>(r.service_ns) * static_cast<double>(r.service_ns);
    service_min_ns_ = std::min(service_min_ns_, r.service_ns);
    service_max_ns_ = std::max(service_max_ns_, r.service_ns);
    measured_samples_ += r.samples;
    if (r.samples > sc_.deployment.gears.back()) ++split_;
    if (static_cast<std::int64_t>(latencies_.size()) == sc_.workload.requests) snapshot();
    if (watch_) {
      watch_->completed(static_cast<std::int64_t>(id) - sc_.workload.warmup_requests,
                        latencies_.back());
      watch_->age(now);
      if (stopped_over()) sim_.stop();
    }
    if (static_cast<std::int64_t>(latencies_.size()) == pause_after_) sim_.stop();
  }
  // Closed loop: the client whose request completed sends its next one now (no think time).
  if (sc_.workload.arrival == ArrivalKind::kClosed && arrivals_scheduled_ < total_requests_) {
    sim_.schedule_in(0, this, kArrival, 0, kPrioArrival);
    ++arrivals_scheduled_;
  }
}

}  // namespace npusim::sim::card
