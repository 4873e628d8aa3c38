#pragma once
// A timeline JSON (torch_npu's trace_view.json, msprof's msprof_<ts>.json: Chrome trace events) as
// a per-op time source when a profile holds nothing better. The file is streamed: a small scanner
// cuts the top-level event array into single events (tracking strings and nesting across read
// blocks) and each event is parsed on its own with simdjson's on-demand API, so memory grows with
// the number of device tasks kept, not with the file size (several hundred MB is common).
//
// What a timeline gives: each device task's name, start (exact ns from the "ts" string), duration,
// stream and hardware task type from the "Ascend Hardware" track, and the HCCL track's hcom_* ops
// as communication. What it lacks: op types, shapes, block dims, task wait, PMU: the advisor's
// timeline checks run, accuracy and calibration find no usable compute rows.

#include <filesystem>
#include <functional>

#include "profile/readers.h"

namespace npusim::profile {

/// Streams the kernel tasks (AI_CORE, AI_VECTOR_CORE, MIX_AIC/AIV, AI_CPU, DSA_SQE) of the
/// "Ascend Hardware" process and the hcom_* ops of the "HCCL" process to `on_row`, in start order.
/// Runtime tasks (events, notifies, SDMA copies) are counted in the layout, not passed on.
/// KernelRow::line is the line on which the event starts. The highest "AI Core Freq" counter
/// value is KernelFileInfo::aicore_freq_mhz. Throws InputError at file:line for JSON that is not
/// an event array (or an object with "traceEvents") or that ends inside an event when
/// options.strict; otherwise a malformed or cut event is skipped and reported like a CSV row.
KernelFileInfo read_trace_kernels(const std::filesystem::path& file,
                                  const std::function<void(const KernelRow&)>& on_row,
                                  const ReadOptions& options = {});

}  // namespace npusim::profile
