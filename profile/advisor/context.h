#pragma once
// What the advisor's rules share: the profile's tasks in a compact form (the kernel table is
// streamed once; each rule then reads these), per-kernel statistics, the report being built and
// small helpers. Each rule is one function in its own file (profile/advisor/<rule>.cpp) with its
// thresholds and their source; analyzer.cpp reads the profile and runs them in order.

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/advisor.h"
#include "profile/json_readers.h"

namespace npusim::profile::advisor {

/// The pipes whose busy shares (PipeUtilization ratios) a kernel row carries. Coupled-core chips
/// write them unprefixed: mac/scalar/mte1/mte2 go to the cube side, vec/mte3 to the vector side.
enum Pipe : std::uint8_t {
  kMac, kAicScalar, kMte1, kAicMte2, kFixpipe,  // cube core
  kVec, kAivScalar, kAivMte2, kMte3,            // vector core
  kPipeCount
};
/// "cube", "scalar", "mte1", "mte2", "fixpipe", "vector", "scalar", "mte2", "mte3".
[[nodiscard]] const char* pipe_name(Pipe p) noexcept;
/// The column the ratio came from ("aic_mac_ratio", ...).
[[nodiscard]] const char* pipe_column(Pipe p) noexcept;

inline constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

/// One device task, compact (about 64 bytes), in file order.
struct Task {
  std::int64_t start_ns = 0, end_ns = 0;
  double duration_us = 0, wait_us = 0;
  std::int64_t stream = -1, step = -1;
  std::uint32_t line = 0;
  std::uint32_t name = 0;        ///< index into Context::strings
  std::uint32_t type = 0;        ///< index into Context::strings (the name when N/A)
  std::uint32_t kernel = kNone;  ///< index into Context::kernels; kNone unless compute
  TaskKind kind = TaskKind::kUnknown;
};

/// Calls of one kernel: the same op type, input shapes and dtypes.
struct Kernel {
  std::string type, shapes, dtypes, output_shapes, first_name;
  TaskKind kind = TaskKind::kUnknown;
  std::uint64_t count = 0;
  double total_us = 0, max_us = 0;
  std::string max_name;
  std::uint32_t max_line = 0;
  int block_dim = 0, mix_block_dim = 0;  ///< of the longest call
  /// Σ ratio × duration per pipe over the calls that carry PMU data, and their Σ duration.
  std::array<double, kPipeCount> ratio_us{};
  double pmu_us = 0;
  std::uint64_t pmu_calls = 0;
  double mte2_time_us = 0;  ///< Σ MTE2 busy time of the loading side (for bandwidth)
  bool cube_side = false, vector_side = false;  ///< which core types ran it
  [[nodiscard]] double ratio(Pipe p) const { return pmu_us > 0 ? ratio_us[p] / pmu_us : 0; }
};

/// An interval of device time [start, end) in ns.
struct Interval {
  std::int64_t start = 0, end = 0;
  std::uint32_t task = 0;  ///< index into Context::tasks
};

/// Everything the rules read and the report they write.
struct Context {
  Context(const ProfileSource& s, const AnalyzeOptions& o) : src(s), opt(o), th(o.thresholds) {}
  const ProfileSource& src;
  const AnalyzeOptions& opt;
  const Thresholds& th;
  Report report;
  std::vector<KernelFileInfo> infos;
  std::vector<Task> tasks;
  std::vector<std::string> strings;
  std::unordered_map<std::string, std::uint32_t> string_ids;
  std::vector<Kernel> kernels;
  std::unordered_map<std::string, std::uint32_t> kernel_ids;
  /// Task indices sorted by (step, start, file order): the timeline.
  std::vector<std::uint32_t> by_start;
  /// Communication task intervals, sorted by start.
  std::vector<Interval> communication;
  /// communication.json's operations (empty without the file) and profiler_metadata.json.
  std::vector<CollectiveRecord> collectives;
  ProfilerMetadata metadata;
  bool timeline = false;   ///< every kernel file has start times
  bool unordered = false;  ///< rows not in start order within a step
  std::vector<double> freq_samples;                  ///< MHz, from cycles
  std::vector<std::array<double, 3>> util_samples;   ///< cycles, duration, util %
  std::uint64_t untyped = 0;

  [[nodiscard]] std::uint32_t intern(const std::string& s);
  [[nodiscard]] const std::string& str(std::uint32_t id) const { return strings[id]; }
  [[nodiscard]] bool has_column(bool KernelFileInfo::*flag) const;
  /// Σ step spans, or Σ compute when there is no timeline: the base of severities.
  [[nodiscard]] double step_time_us() const;
  /// Ranks severity from the time at stake (unless set) and adds the finding.
  void add_finding(Finding f);
  void skip(const std::string& check, const std::string& reason) {
    report.skipped.push_back({check, reason});
  }
  [[nodiscard]] std::size_t max_listed() const { return std::size_t(th.max_ops_listed); }
};

// Helpers shared by the rules (context.cpp).
[[nodiscard]] double us(std::int64_t ns);
[[nodiscard]] std::string fmt_us(double v);
[[nodiscard]] std::string pct(double share);
/// An op is "aclop-style" (the GE single-op path, compiled online per attribute set) when its
/// name does not carry the aclnn prefix of the two-phase aclnn API.
[[nodiscard]] bool is_aclop_style(const std::string& name);
[[nodiscard]] double median(std::vector<double> v);
/// Length of the union of intervals (sorted by start or not).
[[nodiscard]] std::int64_t union_ns(std::vector<Interval> v);
/// Merges intervals into a sorted, disjoint list.
[[nodiscard]] std::vector<Interval> merged(std::vector<Interval> v);
/// Length of [a, b) covered by the sorted disjoint list `m`.
[[nodiscard]] std::int64_t covered_ns(const std::vector<Interval>& m, std::int64_t a,
                                      std::int64_t b);

/// One input tensor of a kernel, parsed from its shapes and dtypes; nullopt fields when the
/// text does not parse.
struct Tensor {
  std::vector<std::int64_t> dims;
  double elem_bytes = 0;
  [[nodiscard]] double elements() const;
};
/// The input tensors of a kernel; empty when its shapes or dtypes do not parse.
[[nodiscard]] std::vector<Tensor> input_tensors(const Kernel& k);

// The rules, in the order analyzer.cpp runs them. Each is in profile/advisor/<rule>.cpp.
void compute_step_breakdown(Context& c);     // exposed_communication.cpp
void check_type_share(Context& c);           // type_share.cpp
void check_long_ops(Context& c);             // long_ops.cpp
void check_max_over_mean(Context& c);        // max_over_mean.cpp
void check_task_wait(Context& c);            // task_wait.cpp
void check_aicpu(Context& c);                // aicpu.cpp
void check_cube_utilization(Context& c);     // cube_utilization.cpp
void check_pipe_bound(Context& c);           // pipe_bound.cpp
void check_idle(Context& c);                 // idle_gaps.cpp
void check_exposed_communication(Context& c);  // exposed_communication.cpp
void check_comm_byte_alignment(Context& c);  // comm_byte_alignment.cpp
void check_comm_small_packets(Context& c);   // comm_small_packets.cpp
void check_block_dim(Context& c);            // block_dim.cpp
void check_shape_affinity(Context& c);       // shape_affinity.cpp
void check_fused_ops(Context& c);            // fused_ops.cpp
void check_host_bound_sequences(Context& c);  // host_bound_sequences.cpp
void check_environment(Context& c);          // environment.cpp
void check_aicore_freq(Context& c);          // aicore_freq.cpp
void check_pcie(Context& c);                 // pcie.cpp

}  // namespace npusim::profile::advisor
