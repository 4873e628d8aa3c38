#pragma once
// The advisor: the checks a performance engineer runs by hand on a profile, each a small rule in
// its own file under profile/advisor/ (with its thresholds and their source), each finding ranked
// by the time at stake and carrying its evidence and what to try. docs/advisor.md says what each
// rule computes. Rendering to text, JSON and Markdown is here too, so every front end prints the
// same report.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/hw_spec.h"
#include "profile/discover.h"
#include "profile/readers.h"

namespace npusim::profile {

/// The thresholds a user may tune, with their defaults and why. The thresholds of the pipe-bound,
/// communication and reference-advisor rules live in their own files (profile/advisor/*.cpp)
/// beside the rule, each with its source.
struct Thresholds {
  /// An op type above this share of compute time is out of proportion (the field's classic
  /// warning sign: one type above 40 %).
  double type_share = 0.40;
  /// A single op longer than this is worth a look on its own (µs).
  double long_op_us = 1000.0;
  /// Calls of one kernel (same type, shapes, dtypes) whose max exceeds this multiple of their
  /// mean point at a call-site problem (synchronisation, contention). Repeated kernels vary by
  /// a 6-7 % coefficient of variation (observations.md), so 2x is far outside the noise.
  double max_over_mean = 2.0;
  /// ...and the kernel must have been called at least this often for a mean to mean anything.
  int max_over_mean_min_count = 3;
  /// A task wait above this is a scheduling stall worth attributing (µs).
  double task_wait_us = 50.0;
  /// Transfers move whole 32-byte blocks; a last axis whose bytes are not a multiple is padded.
  int alignment_bytes = 32;
  /// Device idle gaps above this share of the step make it host-bound.
  double idle_share = 0.10;
  /// Gaps shorter than this are launch jitter, not idleness worth listing (µs).
  double idle_gap_min_us = 10.0;
  /// Severity: a finding whose time at stake is at least this share of the step time is
  /// "high", at least `medium_share` is "medium", else "low".
  double high_share = 0.20;
  double medium_share = 0.05;
  /// How many ops a finding names.
  int max_ops_listed = 10;
  /// Op types whose output shape depends on their input data: the host must read the shape back
  /// before it can launch the next op (a device->host round trip). DESIGN.md "AICPU and dynamic
  /// shape".
  std::vector<std::string> dynamic_shape_types = {"NonZero", "Unique", "UniqueWithCounts",
                                                  "UniqueConsecutive", "MaskedSelect",
                                                  "Where", "DynamicStitch", "Bucketize"};
};

/// Chip figures the cycle and bandwidth checks need, and where each came from.
struct ChipFigures {
  std::string name;                        ///< chip name when known ("ascend910b3")
  std::optional<int> cube_cores;
  std::optional<int> vector_cores;
  std::optional<double> freq_mhz;
  std::optional<double> hbm_gbps;          ///< nominal HBM bandwidth, GB/s
  std::optional<double> pcie_gbps;         ///< nominal PCIe rate per direction, GB/s
  double pcie_efficiency = 0;              ///< achievable fraction; flagged below it
  std::string cores_source;                ///< "--hw ascend910b3", "inferred from ..."
  std::string bandwidth_source;
};
/// All figures from a chip spec.
[[nodiscard]] ChipFigures chip_figures(const HwSpec& hw, const std::string& source);

/// A named value of a finding's evidence: a number (with unit in the key) or text.
struct Evidence {
  std::string key;
  std::optional<double> number;
  std::string text;
};

/// One thing the advisor found.
struct Finding {
  std::string check;     ///< rule id (docs/advisor.md lists them)
  std::string severity;  ///< high | medium | low | info
  std::string title;     ///< one line
  std::vector<std::string> ops;  ///< op names (or types) concerned, most costly first
  double time_us = 0;    ///< time at stake
  std::vector<Evidence> evidence;
  std::vector<std::string> advice;
};

/// Per op type statistics of compute (or communication) tasks.
struct TypeStat {
  std::string type;
  std::string kind;  ///< task kind of its first call
  std::uint64_t count = 0;
  double total_us = 0, min_us = 0, max_us = 0;
  double share = 0;  ///< of all compute time
  double cube_cycles = 0;
  double mac_cycles = 0;  ///< Σ aic_mac_ratio × aic_total_cycles: cycles the MAC array worked
  /// Σ cycles / (Σ duration × cores × freq): how long the cube cores were active (running this
  /// kernel), not how busy their MAC arrays were.
  std::optional<double> cube_utilization;
  std::optional<double> mac_utilization;  ///< Σ mac cycles / (Σ duration × cores × freq)
  [[nodiscard]] double mean_us() const noexcept { return count ? total_us / double(count) : 0; }
};

/// One step (iteration) of the timeline.
struct StepStat {
  std::int64_t step = -1;  ///< -1: the file has no step column
  std::uint64_t ops = 0;
  double span_us = 0;      ///< first start to last end, all device tasks
  double busy_us = 0;      ///< union of all device task intervals
  double idle_us = 0;      ///< span - busy
  double compute_us = 0;   ///< Σ compute durations
  double cube_cycles = 0;
  double mac_cycles = 0;
  std::optional<double> cube_utilization;  ///< cube cores active over the span
  std::optional<double> mac_utilization;   ///< MAC arrays busy over the span
  /// The breakdown msprof-analyze's step_trace_time.csv gives: computing = union of compute task
  /// intervals; exposed communication = union of communication intervals not covered by compute;
  /// overlapped = communication covered by compute; free = span - computing - exposed. Their
  /// sum computing + exposed + free is the span.
  bool has_communication = false;
  double computing_us = 0;
  double communication_us = 0;           ///< union of communication intervals
  double exposed_communication_us = 0;
  double overlapped_communication_us = 0;
  double free_us = 0;
};

/// One kernel (op type, input shapes and dtypes) judged by its own pipes.
struct KernelBound {
  std::string name;    ///< first op name seen
  std::string type, shapes, dtypes;
  std::string side;    ///< cube | vector | mix
  std::uint64_t calls = 0;
  double total_us = 0;
  /// The limiting pipe: cube, vector, scalar, mte1, mte2, mte3, fixpipe; or "serial" (no pipe
  /// saturated but the pipes add up: they take turns instead of overlapping) or "latency" (no
  /// pipe busy enough: synchronisation, launch and head time dominate).
  std::string bound;
  std::vector<std::pair<std::string, double>> ratios;  ///< duration-weighted mean per pipe
  std::string why;     ///< one line of evidence
};

/// A check that could not run and why.
struct SkippedCheck {
  std::string check;
  std::string reason;
};

/// The advisor's report on one profile.
struct Report {
  std::string profile;             ///< profile name
  std::string producer;            ///< msprof | torch_npu | file
  std::vector<std::string> files;  ///< files read
  std::vector<std::string> layouts;  ///< one per kernel table
  std::vector<std::string> notes;
  std::string cann_version;
  std::uint64_t ops = 0;           ///< compute tasks
  double total_time_us = 0;        ///< Σ compute durations
  std::uint64_t communication_ops = 0;
  double communication_time_us = 0;
  std::uint64_t other_tasks = 0;
  double wait_time_us = 0;         ///< Σ task wait of compute tasks
  std::vector<TypeStat> op_types;  ///< compute, by total time descending
  std::vector<TypeStat> communication_types;
  /// msprof's op_statistic rebuilt from the kernel rows: (OP Type, Core Type) keys, other device
  /// tasks (DSA_SQE...) included, communication not (empty when only op_statistic was read).
  std::vector<OpStatRow> op_statistic;
  /// The rows of op_statistic whose core type is not a kernel's (DSA_SQE...): device work the
  /// compute totals leave out, listed so it is not silently dropped.
  std::vector<OpStatRow> other_device_types;
  std::vector<StepStat> steps;
  std::vector<KernelBound> kernels;  ///< kernels with PMU ratios, by total time descending
  ChipFigures chip;
  std::vector<Finding> findings;   ///< by time at stake descending
  std::vector<SkippedCheck> skipped;
};

/// How to run the advisor.
struct AnalyzeOptions {
  Thresholds thresholds;
  /// Figures from --hw. Cores and frequency missing here are inferred from the profile's cycle
  /// columns when possible; bandwidths missing here skip their checks.
  ChipFigures chip;
  /// True when the user named the chip: its cores and frequency are used as given.
  bool chip_given = false;
  /// The known chips (hw_specs/). When the chip is not given, the one whose cube cores match the
  /// profile's and whose nominal clock is the nearest at or above the measured one gives the
  /// bandwidths and vector core count.
  std::vector<ChipFigures> known_chips;
};

/// Reads one profile (streaming its kernel tables) and runs every check.
[[nodiscard]] Report analyze(const ProfileSource& source, const AnalyzeOptions& options);

/// Short terminal text: totals, top op types, findings with their first advice.
[[nodiscard]] std::string render_text(const std::vector<Report>& reports);
/// Complete, stable JSON (see docs/profile_formats.md for the schema).
[[nodiscard]] std::string render_json(const std::vector<Report>& reports);
/// A Markdown report to paste into a ticket.
[[nodiscard]] std::string render_markdown(const std::vector<Report>& reports);

}  // namespace npusim::profile
