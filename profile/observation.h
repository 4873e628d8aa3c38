#pragma once
// Rows of a kernel table turned into model observations: the op as an OpDesc plus what the
// hardware measured (duration, wait, block dim, pipe times and ratios). Calibration fits the op
// model to these. Communication and other non-kernel tasks are kept apart, never mixed in.

#include <cstdint>
#include <string>
#include <vector>

#include "model/error.h"
#include "model/op_cost.h"
#include "model/op_desc.h"
#include "profile/readers.h"

namespace npusim::profile {

/// One measured execution of one op.
struct Observation {
  OpDesc op;                 ///< shapes, dtypes, formats, type, placement (from the task type)
  SourcePos pos;             ///< file and line of the row
  TaskKind kind = TaskKind::kUnknown;
  std::int64_t step_id = -1;
  std::int64_t stream_id = -1;
  std::int64_t start_ns = 0;
  int block_dim = 0;
  int mix_block_dim = 0;
  double duration_us = 0;    ///< Task Duration(us)
  double wait_us = 0;        ///< Task Wait Time(us)
  bool has_pmu = false;      ///< pipe times below were measured
  PipeTimes pipes;           ///< measured per-core pipe busy times (0 when not measured)
  double aic_total_cycles = 0;
  double aiv_total_cycles = 0;
  double mac_ratio = 0;      ///< aic_mac_ratio
  double vec_ratio = 0;      ///< aiv_vec_ratio
  double mte2_ratio = 0;     ///< the larger of the aic/aiv (or unprefixed) mte2 ratios
};

/// A row that could not become an observation, and why.
struct SkippedRow {
  SourcePos pos;
  std::string reason;
};

/// Observations of a profile, with non-compute tasks kept apart.
struct ObservationSet {
  std::vector<Observation> compute;    ///< cube, vector, mix, AI CPU kernels with shapes
  std::vector<KernelRow> communication;  ///< hcom_* / HCCL / COMMUNICATION
  std::vector<KernelRow> other;        ///< DSA, SDMA, event tasks ...
  std::vector<SkippedRow> skipped;     ///< compute rows without usable shapes (first 100 kept)
  std::uint64_t skipped_count = 0;     ///< all skipped rows
  std::vector<KernelFileInfo> files;   ///< what each reader found (layout, malformed rows, clock)
};

/// The Placement of a compute task kind (vector, mix, aicpu); empty for AI_CORE (the op's family
/// decides cube or vector) and for unknown.
[[nodiscard]] std::string placement_text(TaskKind k);
/// The Placement of a row: placement_text of its kind, except MIX_AIV, a vector-led mix kernel
/// whose block dim counts vector cores, which is placed on the vector cores.
[[nodiscard]] std::string placement_of(const KernelRow& row);

/// Converts one compute row. Throws InputError (at the row) when its shapes, dtypes or formats
/// cannot be parsed; a row without shapes (N/A) also throws, naming the reason.
[[nodiscard]] Observation observe(const KernelRow& row, const std::string& file);

/// Reads every kernel file of `files` and sorts its rows into observations, communication and
/// other tasks. Rows whose shapes are missing or malformed are counted in `skipped`; rows the
/// reader could not parse at all are counted in `malformed` (options.strict: an InputError).
[[nodiscard]] ObservationSet read_observations(const std::vector<std::string>& files,
                                               const ReadOptions& options = {});

}  // namespace npusim::profile
