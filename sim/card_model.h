#pragma once
// The card model behind simulate() and SimRun (sim/card_sim.h), internal to the simulator. One
// class, its member functions split by mechanism:
//   sim/card_ops.cpp      op table and op timings (prediction, anchoring, L2 working sets)
//   sim/card_batcher.cpp  arrivals, the batcher, input copies, request completion
//   sim/card_stream.cpp   event dispatch; per stream the host thread and the in-order device
//                         queue contending for cores, HBM / L2 bandwidth, host cores, scheduler
//   sim/card_metrics.cpp  the measured window, per-op accounting, the result
// Mechanisms and their choices: docs/scenarios.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/hw_spec.h"
#include "model/op_desc.h"
#include "sim/anchoring.h"
#include "sim/card_sim.h"
#include "sim/p99_watch.h"
#include "sim/resources.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace npusim::sim::card {

// Event kinds this model schedules on itself (or receives from its resources).
enum Kind : std::uint32_t {
  kArrival,
  kWindowExpired,
  kPcieDone,
  kLaunchDone,
  kHostOpDone,
  kSyncDone,
  kMemoryDone,
  kComputeDone,
  kAicpuDone,
  kPcieOutDone,
  kHostDone,    // host work of any stream on the shared host cores (payload: stream, HostWork)
  kDispatched,  // the task scheduler reaches a stream's next op
  kL2Done,
};

// What a stream's host thread runs on the shared host cores; its completion's tag is
// stream << kHostWorkBits | HostWork (a shift and a mask to take apart, not a division).
enum HostWork : std::uint64_t { kLaunch, kHostOp, kSync, kHostWorkKinds };
constexpr unsigned kHostWorkBits = 2;
static_assert(kHostWorkKinds <= (1U << kHostWorkBits));

// Among events of the same nanosecond, completions run before arrivals and batching windows, so
// a request arriving exactly when a stream frees finds the stream free.
constexpr std::int32_t kPrioCompletion = 0;
constexpr std::int32_t kPrioArrival = 1;

// L2 hit ratios are quantised to 1/32 so contention changes hit the prediction cache.
constexpr int kL2Buckets = 32;

enum class Unit : std::uint8_t { kCube, kVector, kMix, kAicpu, kHost };

// What never changes about an op across gears and core grants.
struct OpInfo {
  std::string name;
  std::string type;
  Unit unit = Unit::kVector;
  bool dynamic = false;   // data-dependent output shape: host round trip after it
  bool bypass = false;    // ignores the stream's core limit (dynamic-shape or marked op)
  bool any_core = false;  // bypass, and the scenario lets it (contention.core_limit_bypass)
  TimeNs launch_ns = 0;   // host time to launch it
  std::optional<double> fixed_us;
  int fixed_block_dim = 1;
  double device_scale = 1;  // SimOptions::device_time_scale of its family (predicted ops only)
};

// One op at one gear, core grant and L2 hit ratio.
struct Timing {
  TimeNs compute_ns = 0;  // device time outside the memory phase
  TimeNs memory_ns = 0;   // the memory phase when alone
  double hbm_bytes = 0;   // bytes the memory phase moves through the shared HBM
  double l2_bytes = 0;    // bytes it moves through the shared L2 (every byte read or written)
  double bytes_in = 0;    // bytes the op reads (the graph's working set in L2)
  TimeNs host_ns = 0;     // host ops: their whole time on the host thread
  int cube = 0;           // cores held
  int vector = 0;
  // The memory phase's transfers, worked out once (plan_memory()): through HBM and through L2
  // (when that contention is on), each at its cap (bytes over memory_ns) and how it runs alone.
  int memory_parts = 0;
  bool via_hbm = false;
  bool via_l2 = false;
  double hbm_cap = 0;
  double l2_cap = 0;
  FluidBandwidth::Alone hbm_alone;
  FluidBandwidth::Alone l2_alone;
};

struct Request {
  TimeNs arrival_ns = 0;
  std::int64_t samples = 0;
  std::int32_t chunks_left = 0;
  TimeNs service_ns = 0;  // of the chunk that finished last
};

struct Batch {
  std::uint32_t first_member = 0;  // into members_
  std::uint32_t member_count = 0;
  std::int64_t chunk_of = -1;  // a chunk of an oversize request: that request's id
  std::int64_t samples = 0;
  std::int64_t gear = 0;
  std::uint32_t gear_idx = 0;
  TimeNs start_ns = 0;
};

struct Stream {
  std::int64_t batch = -1;
  std::uint32_t launched = 0;   // ops handed to the device (or run on the host)
  std::uint32_t completed = 0;  // ops finished
  bool host_busy = false;
  bool device_busy = false;
  bool barrier = false;       // a launched dynamic-shape op has not been synced yet
  bool sync_pending = false;  // the host owes a shape round trip for a completed dynamic op
  bool waiting_cores = false;
  bool dispatched = false;        // the scheduler has taken the next op
  bool waiting_dispatch = false;  // ... and reaches it at a later time
  int memory_parts = 0;           // transfers of the memory phase still moving (HBM, L2)
  bool output_copying = false;    // the result is on its way back to the host
  bool output_copied = false;
  const Timing* running = nullptr;
  int held_cube = 0;
  int held_vector = 0;
  TimeNs op_start_ns = 0;
  TimeNs launch_start_ns = 0;
};

inline std::uint64_t timing_key(std::size_t op, std::uint32_t gear_idx, int cube, int vector,
                                int l2) {
  return (static_cast<std::uint64_t>(op) << 44) | (static_cast<std::uint64_t>(gear_idx) << 32) |
         (static_cast<std::uint64_t>(cube) << 20) | (static_cast<std::uint64_t>(vector) << 8) |
         static_cast<std::uint64_t>(l2 + 1);
}

class CardModel final : public EventTarget {
 public:
  CardModel(const Scenario& sc, const HwSpec& hw, const SimOptions& opt);

  SimResult run() {
    begin();
    run_events();
    return end();
  }

  // ---- stepwise runs (SimRun) ----------------------------------------------------------------

  void begin() {
    requests_.reserve(static_cast<std::size_t>(total_requests_));
    members_.reserve(static_cast<std::size_t>(total_requests_));
    latencies_.reserve(static_cast<std::size_t>(sc_.workload.requests));
    start_arrivals();
  }
  // Watches the P99 verdict; with `stop` the run pauses for good once it is settled over.
  void watch_p99(bool stop) {
    if (!sc_.target.p99_ms) return;
    watch_.emplace(sc_.workload.requests, *sc_.target.p99_ms);
    stop_when_over_ = stop;
  }
  // Runs until `measured` measured requests completed (a pause, resumed by the next call), the
  // verdict is settled over (when watched with stop), or the run is over.
  void advance(std::int64_t measured) {
    if (measured < 0) stop_when_over_ = false;  // to the end, whatever the verdict
    if (measured >= 0 && measured_done() >= measured) return;
    pause_after_ = measured;
    if (!ended() && !stopped_over()) run_events();
  }
  [[nodiscard]] bool ended() const { return sim_.pending_events() == 0; }
  [[nodiscard]] bool stopped_over() const {
    return stop_when_over_ && watch_ && watch_->settled_over();
  }
  [[nodiscard]] const std::optional<P99Watch>& watch() const { return watch_; }
  [[nodiscard]] std::uint64_t events() const { return sim_.stats().events_processed; }
  [[nodiscard]] double p99_so_far_ms() const;
  [[nodiscard]] std::int64_t measured_done() const {
    return static_cast<std::int64_t>(latencies_.size());
  }
  SimResult end();

  void on_event(std::uint32_t kind, std::uint64_t payload) override;

 private:
  // sim_.run() with this model's events handled in the loop (Simulator::run_for), and what
  // on_event() does, inline there: both in card_stream.cpp.
  void run_events();
  friend class sim::Simulator;
  [[gnu::always_inline]] void handle_event(std::uint32_t kind, std::uint64_t payload);

  // ---- setup ------------------------------------------------------------------------------

  void check_fits() const;

  void build_ops();

  const PreparedOp& desc(std::size_t op, std::uint32_t gear_idx);

  const Timing& timing(std::size_t op, std::uint32_t gear_idx, int cube, int vector, int l2) {
    const std::uint64_t key = timing_key(op, gear_idx, cube, vector, l2);
    // A direct-mapped memo in front of the map: an op starts several times per batch with the
    // same few keys, and hashing into the node map was a visible share of each op start.
    MemoEntry& memo = timing_memo_[(key * 0x9E3779B97F4A7C15ULL) >> (64 - kTimingMemoBits)];
    if (memo.timing != nullptr && memo.key == key) return *memo.timing;
    memo = MemoEntry{key, &timing_slow(key, op, gear_idx, cube, vector, l2)};
    return *memo.timing;
  }
  // timing() past the memo: the map, or a prediction stored in it.
  const Timing& timing_slow(std::uint64_t key, std::size_t op, std::uint32_t gear_idx, int cube,
                            int vector, int l2);

  // Fills the memory-phase plan of a new timing (Timing::memory_parts and after).
  void plan_memory(Timing& t) const;

  [[nodiscard]] double capacity_bytes_per_ns() const { return hw_.hbm_bytes_per_us() / 1e3; }

  // One copy over one direction of the PCIe link: latency + bytes at the achievable rate.
  [[nodiscard]] TimeNs pcie_ns(double bytes) const {
    return us_to_ns(hw_.pcie.latency_us +
                    bytes / (hw_.pcie.bandwidth_gbps * hw_.pcie.efficiency * 1e3));
  }

  double graph_working_set(std::uint32_t gi);

  [[nodiscard]] int l2_bucket() const {
    if (active_ws_ <= hw_.chip.l2_bytes) return kL2Buckets;
    return static_cast<int>(std::floor(hw_.chip.l2_bytes / active_ws_ * kL2Buckets));
  }

  // ---- arrivals and batching -------------------------------------------------------------

  void start_arrivals();

  void on_arrival(std::uint64_t /*payload*/);

  void route(std::uint32_t id);

  void try_form();

  void form();

  std::int64_t new_batch();

  void add_member(std::int64_t b, std::uint32_t id, std::int64_t samples);

  void dispatch(std::int64_t b);

  void batch_ready(std::int64_t b);

  // ---- one stream: host dispatch and the in-order device queue ---------------------------

  void start_batch(std::size_t s, std::int64_t b);

  // The pumps and checks below run several times per op and usually find nothing to do: that
  // test is inline, the work out of line (so the early way out saves no registers).
  void pump_host(std::size_t s) {
    const Stream& st = streams_[s];
    if (st.host_busy) return;
    if (!st.sync_pending &&
        (st.launched == batch_ops_ || st.barrier || st.launched - st.completed >= launch_depth_))
      return;
    host_next(s);
  }
  // pump_host() with the host thread free and work for it: the shape sync owed, or the next op.
  [[gnu::noinline]] void host_next(std::size_t s);

  [[gnu::always_inline]] void run_on_host(std::size_t s, TimeNs ns, HostWork what);

  // (inlined into the event loop, its caller)
  [[gnu::always_inline]] void on_host_done(std::uint64_t tag);

  // (inlined into the event loop, its callers)
  [[gnu::always_inline]] void on_launch_done(std::size_t s);

  void on_host_op_done(std::size_t s);

  void on_sync_done(std::size_t s);

  void pump_device(std::size_t s) {
    const Stream& st = streams_[s];
    if (st.device_busy || st.waiting_cores || st.waiting_dispatch || st.completed == st.launched)
      return;
    device_next(s);
  }
  // pump_device() with the device queue free and a launched op waiting: dispatch and start it.
  [[gnu::noinline]] void device_next(std::size_t s);

  // (inlined into device_next(), the usual caller; wake_core_waiters() calls it through
  // retry_on_cores())
  [[gnu::always_inline]] bool try_start_on_cores(std::size_t s);
  [[gnu::noinline]] bool retry_on_cores(std::size_t s) { return try_start_on_cores(s); }

  // One transfer of an op's memory phase ended; the phase ends with the last.
  void on_memory_done(std::size_t s) {
    Stream& st = streams_[s];
    NPUSIM_CHECK(st.memory_parts > 0);
    if (--st.memory_parts > 0) return;
    memory_phase_done(s);
  }
  [[gnu::always_inline]] void memory_phase_done(std::size_t s);

  // (inlined into the event loop, its caller)
  [[gnu::always_inline]] void on_op_done(std::size_t s);

  void wake_core_waiters();

  void on_output_copied(std::size_t s);

  // Finishes the stream's batch when its last op and shape sync are done (then true).
  bool maybe_finish_batch(std::size_t s) {
    const Stream& st = streams_[s];
    if (st.completed != batch_ops_ || st.sync_pending || st.host_busy) return false;
    return finish_batch(s);
  }
  // maybe_finish_batch() once every op is done: the output copy, then the batch's requests.
  [[gnu::noinline]] bool finish_batch(std::size_t s);

  void complete(std::uint32_t id);

  // ---- metrics ---------------------------------------------------------------------------

  void start_measuring();

  void snapshot();

  [[nodiscard]] std::uint32_t batch_gear(const Stream& st) const {
    return batches_[static_cast<std::size_t>(st.batch)].gear_idx;
  }

  // Counts an op run in the measured window (inline: once per op).
  void account_op(std::size_t op, std::uint32_t gear_idx, TimeNs ns) {
    if (!measuring_) return;
    op_ns_[op] += ns;
    ++op_count_[op];
    switch (op_source_[op * gears_ + gear_idx]) {
      case TimeSource::kMeasured:
        ++result_.execution_sources.measured;
        break;
      case TimeSource::kAnchored:
        ++op_anchored_[op];
        ++result_.execution_sources.anchored;
        break;
      case TimeSource::kPredicted:
        ++result_.execution_sources.predicted;
        break;
    }
  }

  // The timeline's records: the test inline, the recording out of line (so that a handler
  // without a trace keeps its registers).
  void span(std::uint32_t track, std::uint32_t name, TimeNs start, TimeNs dur, std::int64_t batch) {
    if (opt_.trace) record_span(track, name, start, dur, batch);
  }
  [[gnu::noinline]] void record_span(std::uint32_t track, std::uint32_t name, TimeNs start,
                                     TimeNs dur, std::int64_t batch) {
    if (result_.trace.size() >= opt_.trace_max_spans) return;
    result_.trace.push_back(TraceSpan{track, name, start, dur, batch});
  }
  void cores_sample(TimeNs now) {
    if (opt_.trace) record_cores(now);
  }
  [[gnu::noinline]] void record_cores(TimeNs now) {
    if (result_.trace.size() >= opt_.trace_max_spans) return;
    const TraceCores c{now, cube_.total() - cube_.free(), vector_.total() - vector_.free()};
    // several changes at one instant: keep the last
    if (!result_.trace_cores.empty() && result_.trace_cores.back().at_ns == now) {
      result_.trace_cores.back() = c;
    } else {
      result_.trace_cores.push_back(c);
    }
  }
  [[nodiscard]] std::uint32_t device_track(std::size_t s) const {
    return static_cast<std::uint32_t>(2 * s);
  }
  [[nodiscard]] std::uint32_t host_track(std::size_t s) const {
    return static_cast<std::uint32_t>(2 * s + 1);
  }

  void finish();

  // ---- state -----------------------------------------------------------------------------

  const Scenario& sc_;
  const HwSpec& hw_;
  SimOptions opt_;
  std::optional<P99Watch> watch_;  // SimRun: the early P99 verdict
  bool stop_when_over_ = false;
  std::int64_t pause_after_ = -1;  // SimRun: pause once this many measured requests completed
  Simulator sim_;
  std::vector<OpInfo> ops_;
  std::vector<std::size_t> order_;
  std::uint32_t batch_ops_ = 0;  // order_.size(): the ops of one batch, as the streams count them
  std::vector<std::optional<PreparedOp>> descs_;
  std::unordered_map<std::uint64_t, Timing> timings_;  // node-based: references stay valid
  struct MemoEntry {
    std::uint64_t key = 0;
    const Timing* timing = nullptr;
  };
  static constexpr int kTimingMemoBits = 10;
  // try_start_on_cores(): per op x gear, the timing at the op's full core budget for the last
  // L2 bucket it started under.
  struct WantMemo {
    int l2 = -2;  // none: buckets are -1 (the spec's default) to kL2Buckets
    const Timing* timing = nullptr;
  };
  std::vector<WantMemo> want_memo_;
  std::vector<MemoEntry> timing_memo_ = std::vector<MemoEntry>(std::size_t{1} << kTimingMemoBits);
  std::vector<Stream> streams_;
  CorePool cube_;
  CorePool vector_;
  FluidBandwidth hbm_;
  FluidBandwidth l2_;
  std::unique_ptr<ServerPool> host_;  // the shared host cores, when that contention is on
  std::uint32_t launch_depth_ = 1;    // ops a stream's host may launch ahead of the device
  TimeNs sched_ns_ = 0;               // the task scheduler's time per kernel (0: no limit)
  TimeNs sched_free_ns_ = 0;          // when it is free for the next kernel
  double sched_busy_ns_ = 0;          // its busy time inside the measured window
  ServerPool aicpu_;
  ServerPool pcie_;
  ServerPool pcie_out_;
  Anchoring anchoring_;                // which ops run measured, anchored or predicted
  std::vector<TimeSource> op_source_;  // anchoring_.source() by op x gear, for account_op()
  std::size_t gears_ = sc_.deployment.gears.size();
  std::deque<std::size_t> core_waiters_;
  std::deque<std::int64_t> ready_;
  std::vector<Request> requests_;
  std::vector<Batch> batches_;
  std::vector<std::uint32_t> members_;
  std::deque<std::uint32_t> pending_;  // requests waiting for the batcher, FIFO
  std::int64_t pending_samples_ = 0;
  TimeNs window_ns_ = us_to_ns(sc_.deployment.batch_window_us);
  EventHandle window_;
  TimeNs window_at_ = 0;
  int idle_streams_ = sc_.deployment.streams;
  int in_flight_ = 0;  // batches formed but not yet started (copying in, or in ready_)
  std::int64_t total_requests_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t arrivals_scheduled_ = 0;  // closed loop: requests already promised
  std::vector<double> graph_ws_;         // per gear: bytes one batch's ops read (-1 = not computed)
  double active_ws_ = 0;                 // sum of graph_ws_ over the streams running a batch

  bool measuring_ = false;
  TimeNs measure_start_ns_ = 0;
  TimeNs end_ns_ = 0;
  TimeWeighted in_system_;
  TimeWeighted device_busy_;
  TimeWeighted streams_busy_;
  double hbm_bytes_at_start_ = 0;
  std::vector<TimeNs> latencies_;
  double service_sum_ns_ = 0;
  double service_sq_sum_ns2_ = 0;
  TimeNs service_min_ns_ = kTimeNever;
  TimeNs service_max_ns_ = 0;
  std::int64_t measured_samples_ = 0;
  std::int64_t window_completions_ = 0;  // any request, warm-up or not, completed in the window
  std::int64_t window_samples_ = 0;
  std::int64_t split_ = 0;
  std::int64_t batch_samples_ = 0;
  std::int64_t batch_gears_ = 0;
  std::int64_t batches_done_ = 0;
  std::vector<TimeNs> op_ns_ = std::vector<TimeNs>(sc_.graph.size(), 0);
  std::vector<std::int64_t> op_count_ = std::vector<std::int64_t>(sc_.graph.size(), 0);
  std::vector<std::int64_t> op_anchored_ = std::vector<std::int64_t>(sc_.graph.size(), 0);

  std::uint32_t pcie_track_ = 0;
  std::uint32_t pcie_out_track_ = 0;
  std::uint32_t output_name_ = 0;
  std::uint32_t sync_name_ = 0;
  std::uint32_t pcie_name_ = 0;
  std::deque<std::pair<std::int64_t, TimeNs>> pcie_spans_pending_;
  SimResult result_;
};

}  // namespace npusim::sim::card
