#pragma once
// OpCost: one op's predicted time with its reasons, never a bare number (DESIGN.md "model").

#include <cstdint>
#include <string>
#include <vector>

namespace npusim {

/// What limits an op.
enum class Bound : std::uint8_t { kCube, kVector, kScalar, kMemory, kHead, kHost };
[[nodiscard]] const char* bound_name(Bound b) noexcept;

/// The op's duration split into parts that sum to duration_us (all µs).
struct CriticalPath {
  double head_us = 0;       ///< kernel launch: fixed + per block
  double compute_us = 0;    ///< cube / vector / scalar work on the critical path
  double memory_us = 0;     ///< MTE2 in, MTE3 out, FixPipe out, first-byte latencies
  double alignment_us = 0;  ///< extra transfers and padding for rows not 32-byte aligned
  double conflict_us = 0;   ///< serialisation of cores hitting the same addresses
  double tail_us = 0;       ///< idle cores in the last partial wave
  double host_us = 0;       ///< host-side work the op's stream waits for (host op, shape sync)
  [[nodiscard]] double sum() const noexcept {
    return head_us + compute_us + memory_us + alignment_us + conflict_us + tail_us + host_us;
  }
};

/// Per-core busy time of each pipe (µs), in the sense of a profile's aic_mte2_time(us) /
/// aiv_vec_time(us) columns: the busiest core's total over all its tiles.
struct PipeTimes {
  double cube_us = 0;
  double vector_us = 0;
  double scalar_us = 0;
  double mte1_us = 0;
  double mte2_us = 0;
  double mte3_us = 0;
  double fixpipe_us = 0;
};

/// Warnings a prediction can carry (kept as flags so predict() never allocates).
enum OpWarning : std::uint32_t {
  kWarnNone = 0,
  kWarnUnknownOpType = 1u << 0,     ///< generic memory + vector model used
  kWarnInt64ScalarFallback = 1u << 1,  ///< int64 arithmetic on the scalar unit
  kWarnOutputInferred = 1u << 2,    ///< output shape inferred by the model
  kWarnShapeMismatch = 1u << 3,     ///< inputs do not fit the op's expected arity/shape; best effort
  /// the inputs read plus the bytes written exceed the chip's device memory (hbm_bytes): no card
  /// holds the op as given, so its time is a formula's extrapolation, not a run that can happen
  kWarnExceedsDeviceMemory = 1u << 4,
};

/// The answer for one op.
struct OpCost {
  double duration_us = 0;   ///< device (or host) time of one execution
  int block_dim = 0;        ///< cores used
  Bound bound = Bound::kMemory;
  double core_time_us = 0;  ///< block_dim × duration_us: what a shared card runs out of
  double bytes_in = 0;      ///< bytes read from GM by the op (after padding)
  double bytes_out = 0;     ///< bytes written to GM
  double flops = 0;         ///< useful floating-point (or integer) operations
  double cube_efficiency = 1;  ///< useful MACs / MACs issued after fractal padding (1 off-cube)
  CriticalPath critical_path;
  PipeTimes pipes;
  int waves = 0;                 ///< ceil(tiles / block_dim)
  std::int64_t tiles = 0;        ///< work units the kernel is split into
  std::uint32_t warnings = kWarnNone;  ///< OpWarning flags
};

/// Human-readable text of each warning flag set, for the CLI.
[[nodiscard]] std::vector<std::string> warning_texts(std::uint32_t flags, const std::string& op_type);

}  // namespace npusim
