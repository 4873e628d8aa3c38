// The card model's streams: event dispatch, and per stream the host thread (launches, host ops,
// shape syncs) and the in-order device queue, contending for cube/vector cores, HBM and L2
// bandwidth, AI CPU cores, the shared host cores, the task scheduler and the output copy.

#include <algorithm>

#include "sim/card_model.h"

namespace npusim::sim::card {

// The memory phase's last transfer ended: the rest of the op (inlined into the event loop).
inline void CardModel::memory_phase_done(std::size_t s) {
  const Stream& st = streams_[s];
  sim_.schedule_in(st.running->compute_ns, this, kComputeDone, s, kPrioCompletion);
}

// The resources route their completions here (route_to_owner()): each is booked in its
// resource first, as the resource's own on_event() would, then handled.
inline void CardModel::handle_event(std::uint32_t kind, std::uint64_t payload) {
  switch (kind) {
    case kArrival:
      on_arrival(payload);
      break;
    case kWindowExpired:
      try_form();
      break;
    case kPcieDone:
      pcie_.complete();
      batch_ready(static_cast<std::int64_t>(payload));
      break;
    case kLaunchDone:
      on_launch_done(static_cast<std::size_t>(payload));
      break;
    case kHostOpDone:
      on_host_op_done(static_cast<std::size_t>(payload));
      break;
    case kSyncDone:
      on_sync_done(static_cast<std::size_t>(payload));
      break;
    case kMemoryDone:
      hbm_.complete(payload);
      on_memory_done(static_cast<std::size_t>(payload));
      break;
    case kL2Done:
      l2_.complete(payload);
      on_memory_done(static_cast<std::size_t>(payload));
      break;
    case kHostDone:
      host_->complete();
      on_host_done(payload);
      break;
    case kDispatched:
      streams_[payload].waiting_dispatch = false;
      pump_device(static_cast<std::size_t>(payload));
      break;
    case kAicpuDone:
      aicpu_.complete();
      [[fallthrough]];
    case kComputeDone:
      on_op_done(static_cast<std::size_t>(payload));
      break;
    case kPcieOutDone:
      pcie_out_.complete();
      on_output_copied(static_cast<std::size_t>(payload));
      break;
    default:
      NPUSIM_CHECK(false);
  }
}

void CardModel::on_event(std::uint32_t kind, std::uint64_t payload) { handle_event(kind, payload); }

void CardModel::run_events() { sim_.run_for(*this); }

void CardModel::start_batch(std::size_t s, std::int64_t b) {
  Stream& st = streams_[s];
  st = Stream{};
  st.batch = b;
  --idle_streams_;
  --in_flight_;
  batches_[static_cast<std::size_t>(b)].start_ns = sim_.now();
  active_ws_ += graph_working_set(batches_[static_cast<std::size_t>(b)].gear_idx);
  streams_busy_.add(sim_.now(), 1);
  pump_host(s);
}

// A stream's host work: on its own thread, or queued FIFO with every stream's on the card's
// shared host cores ([host].cores) when that contention is on.
// (Inlined into host_next(), its only caller: a call cost a sixth of it.)
inline void CardModel::run_on_host(std::size_t s, TimeNs ns, HostWork what) {
  if (host_) {
    host_->submit(ns, s << kHostWorkBits | what);
    return;
  }
  static constexpr std::uint32_t kDone[] = {kLaunchDone, kHostOpDone, kSyncDone};
  sim_.schedule_in(ns, this, kDone[what], s, kPrioCompletion);
}

void CardModel::host_next(std::size_t s) {
  Stream& st = streams_[s];
  if (st.sync_pending) {
    // The shape round trip of a finished dynamic op: device -> host -> device.
    st.host_busy = true;
    st.launch_start_ns = sim_.now();
    run_on_host(s, us_to_ns(hw_.host.dynamic_shape_sync_us), kSync);
    return;
  }
  const std::size_t op = order_[st.launched];
  const Batch& batch = batches_[static_cast<std::size_t>(st.batch)];
  if (ops_[op].unit == Unit::kHost) {
    // A host op needs its inputs: it runs when the device has drained.
    if (st.completed != st.launched) return;
    const Timing& t = timing(op, batch.gear_idx, cube_.cap(), vector_.cap(), -1);
    st.host_busy = true;
    st.launch_start_ns = sim_.now();
    run_on_host(s, t.host_ns, kHostOp);
    return;
  }
  st.host_busy = true;
  st.launch_start_ns = sim_.now();
  run_on_host(s, ops_[op].launch_ns, kLaunch);
}

inline void CardModel::on_host_done(std::uint64_t tag) {
  const auto s = static_cast<std::size_t>(tag >> kHostWorkBits);
  switch (tag & ((1U << kHostWorkBits) - 1)) {
    case kLaunch:
      on_launch_done(s);
      break;
    case kHostOp:
      on_host_op_done(s);
      break;
    default:
      on_sync_done(s);
      break;
  }
}

inline void CardModel::on_launch_done(std::size_t s) {
  Stream& st = streams_[s];
  st.host_busy = false;
  const std::size_t op = order_[st.launched];
  span(host_track(s), static_cast<std::uint32_t>(ops_.size() + op), st.launch_start_ns,
       sim_.now() - st.launch_start_ns, st.batch);
  ++st.launched;
  if (ops_[op].dynamic) st.barrier = true;
  pump_device(s);
  pump_host(s);
}

void CardModel::on_host_op_done(std::size_t s) {
  Stream& st = streams_[s];
  st.host_busy = false;
  const std::size_t op = order_[st.launched];
  span(host_track(s), static_cast<std::uint32_t>(op), st.launch_start_ns,
       sim_.now() - st.launch_start_ns, st.batch);
  account_op(op, batch_gear(st), sim_.now() - st.launch_start_ns);
  ++st.launched;
  ++st.completed;
  if (!maybe_finish_batch(s)) pump_host(s);
}

void CardModel::on_sync_done(std::size_t s) {
  Stream& st = streams_[s];
  st.host_busy = false;
  st.sync_pending = false;
  st.barrier = false;
  span(host_track(s), sync_name_, st.launch_start_ns, sim_.now() - st.launch_start_ns, st.batch);
  if (!maybe_finish_batch(s)) pump_host(s);
}

void CardModel::device_next(std::size_t s) {
  Stream& st = streams_[s];
  if (sched_ns_ > 0 && !st.dispatched) {
    // The card's one task scheduler takes kernels first come, first served, each for
    // sched_ns_. Its work on a kernel is part of that kernel's head (the op model's launch
    // cost), so an op waits only while the scheduler serves earlier ones.
    const TimeNs now = sim_.now();
    const TimeNs start = std::max(now, sched_free_ns_);
    sched_free_ns_ = start + sched_ns_;
    if (measuring_) sched_busy_ns_ += static_cast<double>(sched_ns_);
    st.dispatched = true;
    if (start > now) {
      st.waiting_dispatch = true;
      sim_.schedule_at(start, this, kDispatched, s, kPrioCompletion);
      return;
    }
  }
  const std::size_t op = order_[st.completed];
  const OpInfo& info = ops_[op];
  const std::uint32_t gi = batches_[static_cast<std::size_t>(st.batch)].gear_idx;
  if (info.unit == Unit::kAicpu) {
    const Timing& t = timing(op, gi, cube_.cap(), vector_.cap(), -1);
    st.device_busy = true;
    st.running = &t;
    st.op_start_ns = sim_.now();
    device_busy_.add(sim_.now(), 1);
    aicpu_.submit(t.compute_ns + t.memory_ns, s);
    return;
  }
  if (!try_start_on_cores(s)) {
    st.waiting_cores = true;
    core_waiters_.push_back(s);
  }
}

// Takes what the op wants, or fewer cores when fewer are free (then it runs more waves: the
// timing at the smaller budget). With no core free at all it waits.
inline bool CardModel::try_start_on_cores(std::size_t s) {
  Stream& st = streams_[s];
  const std::size_t op = order_[st.completed];
  const std::uint32_t gi = batches_[static_cast<std::size_t>(st.batch)].gear_idx;
  const int si = static_cast<int>(s);
  const int l2 = l2_bucket();
  // An op that ignores the core limit is planned for the whole chip and takes any free core,
  // also those of other streams' shares.
  const bool bypass = ops_[op].any_core;
  const int cube_budget = bypass ? cube_.total() : cube_.cap();
  const int vector_budget = bypass ? vector_.total() : vector_.cap();
  // What the op wants at its full budget depends only on (op, gear) and the L2 bucket: one
  // remembered entry per (op, gear) spares the key and the memo's hash at most starts.
  WantMemo& wm = want_memo_[op * gears_ + gi];
  if (wm.l2 != l2) {  // (an empty entry's l2 matches no bucket)
    wm = WantMemo{l2, &timing(op, gi, cube_budget, vector_budget, l2)};
  }
  const Timing* want = wm.timing;
  const int gc = want->cube > 0 ? cube_.grantable(si, want->cube, bypass) : 0;
  const int gv = want->vector > 0 ? vector_.grantable(si, want->vector, bypass) : 0;
  if ((want->cube > 0 && gc == 0) || (want->vector > 0 && gv == 0)) return false;
  const Timing* t = want;
  if (gc < want->cube || gv < want->vector) {
    t = &timing(op, gi, want->cube > 0 ? gc : cube_budget, want->vector > 0 ? gv : vector_budget,
                l2);
  }
  const TimeNs now = sim_.now();
  cube_.acquire(si, t->cube, now, bypass);
  vector_.acquire(si, t->vector, now, bypass);
  cores_sample(now);
  st.held_cube = t->cube;
  st.held_vector = t->vector;
  st.device_busy = true;
  st.running = t;
  st.op_start_ns = now;
  device_busy_.add(now, 1);
  // The memory phase (plan_memory()): through HBM and L2, ending when both transfers have.
  st.memory_parts = t->memory_parts;
  if (t->via_hbm) hbm_.start(t->hbm_bytes, t->hbm_cap, t->hbm_alone, s);
  if (t->via_l2) l2_.start(t->l2_bytes, t->l2_cap, t->l2_alone, s);
  if (st.memory_parts == 0) {
    sim_.schedule_in(t->memory_ns + t->compute_ns, this, kComputeDone, s, kPrioCompletion);
  }
  return true;
}

inline void CardModel::on_op_done(std::size_t s) {
  Stream& st = streams_[s];
  const std::size_t op = order_[st.completed];
  const TimeNs now = sim_.now();
  if (st.held_cube > 0 || st.held_vector > 0) {
    cube_.release(static_cast<int>(s), st.held_cube, now);
    vector_.release(static_cast<int>(s), st.held_vector, now);
    cores_sample(now);
    st.held_cube = 0;
    st.held_vector = 0;
  }
  st.device_busy = false;
  st.dispatched = false;
  device_busy_.add(now, -1);
  span(device_track(s), static_cast<std::uint32_t>(op), st.op_start_ns, now - st.op_start_ns,
       st.batch);
  account_op(op, batch_gear(st), now - st.op_start_ns);
  ++st.completed;
  if (ops_[op].dynamic) st.sync_pending = true;
  wake_core_waiters();
  if (!maybe_finish_batch(s)) {
    pump_device(s);
    pump_host(s);
  }
}

void CardModel::wake_core_waiters() {
  // FIFO: the longest waiter first; stop at the first that still cannot start so a big op is
  // not starved by small ones behind it.
  while (!core_waiters_.empty()) {
    const std::size_t w = core_waiters_.front();
    if (!retry_on_cores(w)) break;
    streams_[w].waiting_cores = false;
    core_waiters_.pop_front();
  }
}

void CardModel::on_output_copied(std::size_t s) {
  Stream& st = streams_[s];
  const Batch& batch = batches_[static_cast<std::size_t>(st.batch)];
  // The link serves copies in order, so this one ran for the last `ns` before now.
  const TimeNs ns = pcie_ns(sc_.workload.output_bytes_per_sample * static_cast<double>(batch.gear));
  span(pcie_out_track_, output_name_, sim_.now() - ns, ns, st.batch);
  st.output_copied = true;
  (void)maybe_finish_batch(s);
}

bool CardModel::finish_batch(std::size_t s) {
  Stream& st = streams_[s];
  const std::int64_t b = st.batch;
  const Batch& batch = batches_[static_cast<std::size_t>(b)];
  const TimeNs now = sim_.now();
  // The instance copies the result back before it answers and takes the next batch.
  const double out_bytes = sc_.workload.output_bytes_per_sample * static_cast<double>(batch.gear);
  if (out_bytes > 0 && !st.output_copied) {
    if (!st.output_copying) {
      st.output_copying = true;
      const TimeNs ns = pcie_ns(out_bytes);
      pcie_out_.submit(ns, s);
    }
    return false;
  }
  streams_busy_.add(now, -1);
  active_ws_ -= graph_working_set(batch.gear_idx);
  if (active_ws_ < 0.5) active_ws_ = 0;  // absorb rounding of the running sum
  st.batch = -1;
  batch_samples_ += batch.samples;
  batch_gears_ += batch.gear;
  ++batches_done_;
  auto finish_request = [&](std::uint32_t id) {
    Request& r = requests_[id];
    r.service_ns = now - batch.start_ns;
    NPUSIM_CHECK(r.chunks_left > 0);  // a request completes exactly once
    if (--r.chunks_left == 0) complete(id);
  };
  if (batch.chunk_of >= 0) finish_request(static_cast<std::uint32_t>(batch.chunk_of));
  for (std::uint32_t m = 0; m < batch.member_count; ++m) {
    finish_request(members_[batch.first_member + m]);
  }
  ++idle_streams_;
  if (!ready_.empty()) {
    const std::int64_t next = ready_.front();
    ready_.pop_front();
    start_batch(s, next);
  } else {
    try_form();  // requests that gathered while every stream was busy
  }
  return true;
}

}  // namespace npusim::sim::card
