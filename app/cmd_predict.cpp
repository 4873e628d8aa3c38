// npusim predict: one op, its time and the reasons.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/common.h"
#include "model/accuracy.h"
#include "model/calibration.h"
#include "model/correction.h"
#include "model/error.h"
#include "model/graph.h"
#include "model/op_table.h"
#include "model/predict.h"
#include "model/shape_infer.h"

namespace npusim::app {

namespace {

struct PredictArgs {
  std::string hw = "ascend910b3";
  std::vector<std::string> overlays;
  std::string op_type;
  std::string name;
  std::string shapes;
  std::string dtypes;
  std::string formats;
  std::string output_shapes;
  std::string output_dtypes;
  std::string output_formats;
  std::string placement;
  std::vector<std::string> attrs;
  int cube_cores = 0;
  int vector_cores = 0;
  double l2_hit_ratio = -1;
  bool json = false;
  std::string correction;
};

/// The P10-P90 range of an op's duration on a calibrated chip. The factors apply to the device
/// time only (what the holdout measured); a host-side part (dynamic-shape round trip, host op)
/// is added unscaled.
struct DurationRange {
  double p10_us = 0;
  double p90_us = 0;
  IntervalLookup lookup;
};

std::optional<DurationRange> duration_range(const OpCost& c, const OpDesc& op, const HwSpec& hw) {
  const auto lookup = interval_for(hw, op.kind->family);
  if (!lookup) return std::nullopt;
  const double host_us = c.critical_path.host_us;
  const double device_us = std::max(0.0, c.duration_us - host_us);
  return DurationRange{host_us + device_us * lookup->interval.p10,
                       host_us + device_us * lookup->interval.p90, *lookup};
}

nlohmann::ordered_json to_json(const OpCost& c, const std::optional<DurationRange>& range) {
  nlohmann::ordered_json j;
  j["duration_us"] = c.duration_us;
  j["block_dim"] = c.block_dim;
  j["bound"] = bound_name(c.bound);
  j["core_time_us"] = c.core_time_us;
  j["bytes_in"] = c.bytes_in;
  j["bytes_out"] = c.bytes_out;
  j["flops"] = c.flops;
  j["cube_efficiency"] = c.cube_efficiency;
  const CriticalPath& p = c.critical_path;
  j["critical_path"] = {{"head_us", p.head_us},         {"compute_us", p.compute_us},
                        {"memory_us", p.memory_us},     {"alignment_us", p.alignment_us},
                        {"conflict_us", p.conflict_us}, {"tail_us", p.tail_us},
                        {"host_us", p.host_us}};
  const PipeTimes& q = c.pipes;
  j["pipes"] = {{"cube_us", q.cube_us},   {"vector_us", q.vector_us},   {"scalar_us", q.scalar_us},
                {"mte1_us", q.mte1_us},   {"mte2_us", q.mte2_us},       {"mte3_us", q.mte3_us},
                {"fixpipe_us", q.fixpipe_us}};
  if (range) {
    j["interval"] = {{"p10_us", range->p10_us},
                     {"p90_us", range->p90_us},
                     {"rows", range->lookup.interval.rows},
                     {"source", range->lookup.source}};
  } else {
    j["interval"] = nullptr;
  }
  return j;
}

std::string why(const OpCost& c, const OpDesc& op, const HwSpec& hw) {
  const CriticalPath& p = c.critical_path;
  const double d = c.duration_us > 0 ? c.duration_us : 1;
  switch (c.bound) {
    case Bound::kHead:
      return fmt::format("launch overhead is {:.0f}% of the time: the op is too small to amortise "
                         "its head; fusing it or batching more work per launch pays",
                         100 * p.head_us / d);
    case Bound::kHost:
      return fmt::format("{:.0f}% of the time is host-side ({}): the stream waits for the host",
                         100 * p.host_us / d,
                         op.kind->family == OpFamily::kAicpu ? "dynamic-shape sync" : "host op");
    case Bound::kScalar:
      return fmt::format("scalar unit does the work ({:.1f} us of {:.1f} us){}", c.pipes.scalar_us,
                         c.duration_us,
                         op.kind->family == OpFamily::kAicpu ||
                                 op.placement == Placement::kAicpu
                             ? ": an AI CPU op; moving it to AI Core or host may pay"
                         : (c.warnings & kWarnInt64ScalarFallback)
                             ? ": int64 has no vector path; cast to int32/fp32 where values fit"
                             : ": per-row address computation; fewer, longer rows pay");
    case Bound::kMemory: {
      const double bytes = c.bytes_in + c.bytes_out;
      std::string s = fmt::format("memory-bound: {:.3g} MB moved in {:.1f} us ({:.0f} GB/s effective, "
                                  "HBM {:.0f} GB/s)",
                                  bytes / 1e6, c.duration_us, bytes / d / 1e3,
                                  hw.hbm_bytes_per_us() / 1e3);
      if (p.alignment_us > 0.05 * d) {
        s += fmt::format("; rows not 32-byte aligned cost {:.0f}%", 100 * p.alignment_us / d);
      }
      if (p.conflict_us > 0.05 * d) {
        s += fmt::format("; same-address conflicts cost {:.0f}%", 100 * p.conflict_us / d);
      }
      return s;
    }
    case Bound::kCube:
      return fmt::format("cube-bound at {:.0f}% fractal efficiency, {:.1f} TFLOP/s achieved of {:.1f} "
                         "peak on {} cores",
                         100 * c.cube_efficiency, c.flops / d / 1e6,
                         hw.peak_cube_tflops_fp16() * c.block_dim / hw.chip.cube_cores, c.block_dim);
    case Bound::kVector:
      return fmt::format("vector-bound: {:.1f} us of vector work per core on {} cores", c.pipes.vector_us,
                         c.block_dim);
  }
  return "";
}

std::string text_report(const OpCost& c, const OpDesc& op, const HwSpec& hw,
                        const std::optional<DurationRange>& range) {
  std::string s;
  s += fmt::format("{} on {} ({}, {} family)\n", op.type, hw.chip.display_name,
                   placement_name(op.placement.value_or(op.kind->placement)),
                   family_name(op.kind->family));
  s += fmt::format("  duration     {:>12.3f} us   bound: {}\n", c.duration_us, bound_name(c.bound));
  if (range) {
    s += fmt::format("  P10-P90      {:>12.3f} - {:.3f} us  ({})\n", range->p10_us, range->p90_us,
                     interval_source_text(range->lookup));
  } else {
    s += "  P10-P90      uncalibrated (no prediction intervals on this chip; npusim calibrate writes "
         "them)\n";
  }
  s += fmt::format("  block dim    {:>12d}      waves {} over {} tiles\n", c.block_dim, c.waves, c.tiles);
  s += fmt::format("  core time    {:>12.3f} us\n", c.core_time_us);
  s += fmt::format("  bytes in/out {:>12.0f} / {:.0f}\n", c.bytes_in, c.bytes_out);
  s += fmt::format("  flops        {:>12.4g}      cube efficiency {:.3f}\n", c.flops, c.cube_efficiency);
  s += "critical path (sums to duration)\n";
  const CriticalPath& p = c.critical_path;
  const double d = c.duration_us > 0 ? c.duration_us : 1;
  auto row = [&](const char* name, double v) {
    s += fmt::format("  {:<10} {:>12.3f} us  {:>5.1f}%\n", name, v, 100 * v / d);
  };
  row("head", p.head_us);
  row("compute", p.compute_us);
  row("memory", p.memory_us);
  row("alignment", p.alignment_us);
  row("conflict", p.conflict_us);
  row("tail", p.tail_us);
  row("host", p.host_us);
  s += "pipes (busiest core's busy time)\n";
  const PipeTimes& q = c.pipes;
  s += fmt::format("  cube {:.3f}  vector {:.3f}  scalar {:.3f}  mte1 {:.3f}  mte2 {:.3f}  mte3 {:.3f}  "
                   "fixpipe {:.3f} us\n",
                   q.cube_us, q.vector_us, q.scalar_us, q.mte1_us, q.mte2_us, q.mte3_us, q.fixpipe_us);
  s += "why: " + why(c, op, hw) + "\n";
  return s;
}

// Outputs not given come from the shape rules graphs use (model/shape_infer.h), which also
// refuse attributes that contradict the inputs (a perm naming an axis twice, a zero stride, a
// window larger than its map, an output past 64 bits) with an error instead of a number.
void infer_outputs(OpText& t, const SourcePos& pos) {
  if (!t.output_shapes.empty()) return;
  const std::vector<std::string> shapes = split_shape_list(t.input_shapes);
  std::vector<std::string> dtypes = split_shape_list(t.input_dtypes);
  if (dtypes.size() == 1 && shapes.size() > 1) dtypes.assign(shapes.size(), dtypes.front());
  const auto inferred = infer_output_templates(t, shapes, dtypes, pos);
  if (!inferred) return;  // no rule: the cost model derives what it needs, or says it could not
  for (const std::string& s : inferred->shapes) {
    if (mentions_batch(s)) {  // the inputs are concrete, so an attribute brought B in
      throw InputError(pos, fmt::format("{}: an attribute mentions the batch B (output '{}'); "
                                        "predict takes concrete values: write the batch size "
                                        "in its place",
                                        t.type, s));
    }
  }
  t.output_shapes = fmt::format("{}", fmt::join(inferred->shapes, ";"));
  if (t.output_dtypes.empty()) t.output_dtypes = fmt::format("{}", fmt::join(inferred->dtypes, ";"));
  if (!inferred->exact) {
    warn(fmt::format("{}: outputs inferred as an upper bound ({}); give --output-shapes for an "
                     "exact answer",
                     t.type, inferred->note.empty() ? "data-dependent size" : inferred->note));
  }
}

void run_predict(const PredictArgs& a) {
  const SourcePos pos{"<command line>", 0, 0};
  OpText t;
  t.name = a.name;
  t.type = a.op_type;
  t.input_shapes = a.shapes;
  t.input_dtypes = a.dtypes;
  t.input_formats = a.formats;
  t.output_shapes = a.output_shapes;
  t.output_dtypes = a.output_dtypes;
  t.output_formats = a.output_formats;
  t.placement = a.placement;
  for (const auto& kv : a.attrs) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError(pos, fmt::format("--attr '{}': expected key=value", kv));
    }
    t.attrs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  infer_outputs(t, pos);
  const OpDesc op = make_op(t, pos);
  if (op.inputs.empty()) throw InputError(pos, "--shapes: at least one input shape is required");
  const HwSpec hw = load_hw(a.hw, a.overlays);
  if (a.cube_cores < 0 || a.cube_cores > hw.chip.cube_cores) {
    throw InputError(pos, fmt::format("--cube-cores {}: expected 1..{} on {} (0, the default, is all)", a.cube_cores,
                                      hw.chip.cube_cores, hw.chip.name));
  }
  if (a.vector_cores < 0 || a.vector_cores > hw.chip.vector_cores) {
    throw InputError(pos, fmt::format("--vector-cores {}: expected 1..{} on {} (0, the default, is all)", a.vector_cores,
                                      hw.chip.vector_cores, hw.chip.name));
  }
  PredictContext ctx;
  ctx.l2_hit_ratio = a.l2_hit_ratio;
  const OpCost c = predict(op, hw, CoreBudget{a.cube_cores, a.vector_cores}, ctx);
  for (const auto& w : warning_texts(c.warnings, op.type)) warn(w);
  const std::optional<DurationRange> range = duration_range(c, op, hw);
  std::optional<CorrectionApplied> corr;
  double corrected_us = 0;
  if (!a.correction.empty()) {
    // The learned correction scales the device time (what it was trained on); host time stays.
    const Correction model = load_correction(a.correction);
    Sample s;
    s.op = op;
    s.l2_hit_ratio = a.l2_hit_ratio;
    SamplePrediction sp;
    sp.cost = c;
    sp.predicted_us = c.duration_us - c.critical_path.host_us;
    if (sp.predicted_us > 0) {
      corr = model.apply({correction_features(s, sp, hw, model.options().features)}).front();
      corrected_us = c.critical_path.host_us + sp.predicted_us * corr->factor;
      if (corr->ood) {
        warn(fmt::format("learned correction not applied: the op lies outside what it was "
                         "trained on ({})", corr->why));
      }
    }
  }
  if (a.json) {
    nlohmann::ordered_json j = to_json(c, range);
    if (corr) {
      j["correction"] = {{"factor", corr->factor},
                         {"out_of_distribution", corr->ood},
                         {"why", corr->why},
                         {"corrected_duration_us", corrected_us}};
    }
    std::cout << j.dump(2) << '\n';
  } else {
    std::cout << text_report(c, op, hw, range);
    if (corr) {
      std::cout << (corr->ood ? fmt::format("learned correction: none (outside its training: {}); "
                                            "duration stays {:.3f} us\n",
                                            corr->why, corrected_us)
                              : fmt::format("learned correction: x{:.3f} on the device time -> "
                                            "{:.3f} us\n",
                                            corr->factor, corrected_us));
    }
  }
}

}  // namespace

void register_predict(CLI::App& app) {
  auto a = std::make_shared<PredictArgs>();
  CLI::App* sub = app.add_subcommand(
      "predict", "Predict one op's duration on a chip, with the breakdown and pipe times");
  sub->add_option("--hw", a->hw, "chip name (see `npusim hw list`) or spec file")
      ->capture_default_str();
  sub->add_option("--overlay", a->overlays, "overlay file(s) applied on the chip spec (calibration)");
  sub->add_option("--op", a->op_type, "op type as CANN spells it (MatMulV2, GatherV2, ...)")
      ->required();
  sub->add_option("--name", a->name, "op instance name (for messages)");
  sub->add_option("--shapes", a->shapes, "input shapes, profile syntax: \"1,4000;400,1\"")->required();
  sub->add_option("--dtypes", a->dtypes, "input dtypes: \"INT64;INT64\" (one for all is fine)")
      ->required();
  sub->add_option("--formats", a->formats, "input formats: \"ND;FRACTAL_NZ\" (default ND)");
  sub->add_option("--output-shapes", a->output_shapes,
                  "output shapes (default: inferred by the graph shape rules, which also check the "
                  "attributes against the inputs)");
  sub->add_option("--output-dtypes", a->output_dtypes, "output dtypes (default: inferred)");
  sub->add_option("--output-formats", a->output_formats, "output formats");
  sub->add_option("--placement", a->placement, "cube | vector | mix | aicpu | host (default: the op's)");
  sub->add_option("--attr", a->attrs, "attribute key=value (repeatable): transpose_b=true, axis=0, "
                                      "index_dup_ratio=0.3, k=100, valid_length=512, ...");
  sub->add_option("--cube-cores", a->cube_cores, "cube core limit (0 or absent: all)");
  sub->add_option("--vector-cores", a->vector_cores, "vector core limit (0 or absent: all)");
  sub->add_option("--l2-hit-ratio", a->l2_hit_ratio, "fraction of reads that hit L2 (default: the spec's)")
      ->check(finite_range(0.0, 1.0), "FLOAT in [0, 1]");
  sub->add_option("--correction", a->correction,
                  "learned correction file (npusim calibrate --correction-out): prints its factor "
                  "and the corrected time, or why the op lies outside its training");
  sub->add_flag("--json", a->json,
                "one JSON object: duration_us, block_dim, bound, core_time_us, "
                "bytes_in, bytes_out, flops, cube_efficiency, critical_path, pipes, "
                "interval (P10-P90 from a calibration overlay, or null)");
  sub->callback([a] { run_predict(*a); });
}

}  // namespace npusim::app
