#pragma once
// The hardware spec of one chip: an immutable, validated struct loaded from hw_specs/*.toml
// (CONVENTIONS.md: parsed specs kept apart from the model that evaluates them).
// Every field is required in a chip file; an overlay file may set any subset.
// Field names are the TOML keys (section.key), units are in the names.

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace npusim {

/// Classes of vector instructions with distinct steady-state cost per 256-byte repeat.
/// TOML keys in [vector.cycles_per_repeat] are the names returned by vector_class_name().
enum class VectorClass : std::uint8_t {
  kUnary,           ///< abs, relu, muls/adds, copy, dup, brcb
  kBinary,          ///< add, sub, mul, max, min, cmp, sel
  kConvert,         ///< vconv (Cast)
  kTranscendental,  ///< exp, ln, sqrt, div, rsqrt
  kMultiplyAdd,     ///< vmadd, vmla
  kReduce,          ///< vcadd/vcmax whole-repeat reduce
  kSigmoid,         ///< sigmoid as composed by the op library
  kTanh,            ///< tanh, gelu (tanh form)
  kErf,             ///< erf, exact gelu
  kGather,          ///< vgather
  kSort,            ///< vmrgsort4 / vbitsort, one merge pass
  kTranspose,       ///< vnchwconv (TransData, Transpose)
  kMaskSelect,      ///< vsel by a packed bit mask (ReluGradV2): the mask register set per repeat
  kCount
};
inline constexpr std::size_t kVectorClassCount = static_cast<std::size_t>(VectorClass::kCount);
/// TOML key of a vector class ("unary", "binary", ...).
[[nodiscard]] const char* vector_class_name(VectorClass c) noexcept;

/// [chip]: identity, core counts, clock and on-chip memory sizes.
struct ChipSpec {
  std::string name;          ///< lookup name, e.g. "ascend910b3" (file stem)
  std::string display_name;  ///< e.g. "Ascend 910B3"
  std::string soc_version;   ///< as CANN and profiler_info write it, e.g. "Ascend910B3"
  bool split_cores = true;   ///< true: separate AIC/AIV cores (220x); false: coupled AI cores (200x)
  int cube_cores = 0;        ///< AIC count (coupled: AI core count)
  int vector_cores = 0;      ///< AIV count (coupled: AI core count, their vector units)
  int aicpu_cores = 0;       ///< AI CPU cores available to operators
  double freq_mhz = 0;       ///< AI core clock
  double hbm_bytes = 0;      ///< device memory capacity
  double l2_bytes = 0;
  double l1_bytes = 0;
  double l0a_bytes = 0;
  double l0b_bytes = 0;
  double l0c_bytes = 0;
  double ub_bytes = 0;  ///< unified buffer per vector core
};

/// [cube]: the matrix unit of one AIC.
struct CubeSpec {
  int fractal_m = 0;                 ///< M0 of the fractal (16)
  int fractal_n = 0;                 ///< N0 (16)
  int fractal_k_bytes = 0;           ///< K0 × dtype size (32 B: fp16 K0=16, int8 K0=32, fp32 K0=8)
  double macs_per_cycle_fp16 = 0;    ///< MACs per cycle per cube core at fp16/bf16
  double int8_rate_factor = 0;       ///< int8 MAC rate relative to fp16
  double fp32_rate_factor = 0;       ///< fp32/hf32 MAC rate relative to fp16
  double efficiency = 0;             ///< sustained fraction of peak for a large ND GEMM, (0, 1]
  double transposed_a_efficiency = 0;  ///< extra factor when A is read transposed, (0, 1]
  /// factor on `efficiency` for an implicit-GEMM convolution (load3d img2col operands), (0, 1.5];
  /// optional in a spec file, 1 when absent: a convolution sustains what a GEMM does
  double conv_efficiency = 1;
  double nz_efficiency = 0;          ///< factor for pre-tiled FRACTAL_NZ operands, (0, 1.5]
  int tile_m = 0;                    ///< base block rows per core (elements)
  int tile_n = 0;                    ///< base block columns per core (elements)
  double l1_to_l0a_bytes_per_cycle = 0;  ///< MTE1 rate into L0A
  double l1_to_l0b_bytes_per_cycle = 0;  ///< MTE1 rate into L0B
  double fixpipe_bytes_per_cycle = 0;    ///< L0C -> GM through FixPipe
  double gm_to_l1_bytes_per_cycle = 0;   ///< per-core MTE2 rate GM -> L1 (the cube's operand path)
  double nd2nz_load_factor = 0;          ///< MTE2 rate factor when loading ND and converting to NZ
  /// Share of the graph context's L2 hit ratio (an input another op left in L2) a cube kernel's
  /// operand loads take, [0, 1]; optional, 1 when absent.
  double context_l2_factor = 1;
  double mix_vector_ratio = 0;           ///< AIV used per AIC by a MIX kernel (1:2 on 220x)
  /// An ND operand whose contiguous axis is longer than this is converted to NZ by the vector
  /// cores in a phase before the GEMM (MatMulV3 V_HEAD_ND2NZ); 0 = never.
  int nd2nz_inline_max_elements = 0;
  /// K at or above which a single (unbatched) GEMM runs single-core split-K: each core owns a
  /// block of rows, walks K in chunks and adds fp32 partials atomically; 0 = never.
  int split_k_min_k = 0;
  int split_k_chunk_bytes = 0;  ///< K chunk of one split-K step, in bytes of the operand dtype
  /// The tiler splits a GEMM's output over blocks only by divisors of its M and N fractal counts
  /// (TBE's static matmul tiling on the 910): an axis with more fractals than cores and no divisor
  /// from 2 to the core count (a prime, 21136 = 1321 x 16) is not split, and every block reads
  /// the whole operand on that side; optional, false when absent.
  bool divisor_block_split = false;
};

/// [vector]: the vector unit of one AIV, and its scalar unit.
struct VectorSpec {
  int repeat_bytes = 0;  ///< bytes one vector instruction repeat processes (256)
  std::array<double, kVectorClassCount> cycles_per_repeat{};  ///< [vector.cycles_per_repeat]
  double api_overhead_cycles = 0;        ///< fixed cost of one vector API call on one UB tile
  /// Fixed cost of one vector instruction a TIK kernel issues itself (no API wrapper around it):
  /// the pooling kernels that walk 16-pixel img2col groups (model/cost/pool.cpp).
  double tik_issue_cycles = 0;
  double scalar_cycles_per_element = 0;  ///< scalar-unit fallback (int64 arithmetic), per element
  double scalar_cycles_per_index = 0;    ///< address computation per gathered/scattered row
  double min_bytes_per_core = 0;         ///< smallest chunk a tiler hands one core (no block dim known)
  /// A row norm (Softmax, LayerNorm over an ND last axis) hands each row's reduced value to
  /// the scalar unit and back before the next pass: cycles per row and reduce pass.
  double row_reduce_sync_cycles = 0;
  int ub_buffers = 0;                    ///< UB split for double-buffered in+out tiles
  /// The vector unit computes on bf16 directly; when false a bf16 kernel converts its operands
  /// to fp32, computes in fp32 and converts the result back.
  bool bf16_arithmetic = false;
};

/// [memory]: global memory, L2 and the per-core DMA engines (MTE2 in, MTE3 out).
struct MemorySpec {
  double hbm_bandwidth_gbps = 0;          ///< nominal device HBM bandwidth, GB/s (1e9 B/s)
  double hbm_efficiency = 0;              ///< achievable fraction of nominal for streaming
  double hbm_write_factor = 0;            ///< HBM write rate relative to the read rate
  double hbm_turnaround = 0;              ///< [0, 1]: bus time lost switching between reads and
                                          ///< writes, per byte of the smaller of the two streams
  double l2_bandwidth_gbps = 0;           ///< chip L2 bandwidth, GB/s
  double l2_efficiency = 0;               ///< achievable fraction of it, all cores together
  double l2_hit_ratio_default = 0;        ///< hit ratio assumed by a lone `predict`, [0, 1]
  double gm_read_bytes_per_cycle = 0;     ///< per-core MTE2 rate from HBM
  double l2_read_bytes_per_cycle = 0;     ///< per-core MTE2 rate on an L2 hit
  double gm_write_bytes_per_cycle = 0;    ///< per-core MTE3 rate to GM
  int block_bytes = 0;                    ///< DMA granularity and UB alignment (32)
  double read_latency_cycles = 0;         ///< first-byte latency of a GM read, paid once per kernel
  double write_latency_cycles = 0;        ///< latency of the last write, paid once per kernel
  double read_stream_share = 0;           ///< [0, 1]: of read_latency_cycles, what each further
                                          ///< tensor read stream adds (1: streams wait in series)
  double write_stream_share = 0;          ///< [0, 1]: the same for write_latency_cycles
  double mte2_setup_cycles = 0;           ///< per DMA instruction in
  double mte3_setup_cycles = 0;           ///< per DMA instruction out
  /// per-core rate of a DMA that moves one independently addressed row (a gathered or
  /// scattered row): the next row's address comes from the scalar unit, so one row is in flight
  double row_dma_bytes_per_cycle = 0;
  /// A leading-axis reduction of an ND tensor whose row stride is not a multiple of 32 B loads
  /// each row's slice as its own DMA and adds it before the next: cycles per row beyond the
  /// DMA's setup and bytes (0: not modelled; model/cost/column_split.h)
  double unaligned_row_cycles = 0;
  /// The same reduction with whole-block rows moves a core's columns as one strided DMA: cycles
  /// each burst (one a row) holds MTE2 beyond its bytes (0: not modelled)
  double strided_burst_cycles = 0;
  /// Atomic adds into one region of GM run one at a time, each holding it for this many cycles
  /// plus its bytes at the L2 rate (0: not modelled; docs/accuracy_mechanisms.md, session 16)
  double atomic_add_cycles = 0;
  double atomic_region_bytes = 0;  ///< the bytes one such region spans
};

/// [overhead]: device-side costs that are not data or math.
struct OverheadSpec {
  double launch_cycles = 0;          ///< kernel head: fixed part
  double per_block_cycles = 0;       ///< kernel head: per block (core) launched
  double conflict_coefficient = 0;   ///< (0, 1]: loss from same-address accesses at full cores
  double index_dup_ratio_default = 0;  ///< default `index_dup_ratio` attribute, [0, 1]
  /// The card's task scheduler is busy this long per kernel it dispatches, whichever stream the
  /// kernel is on (the simulator's card-wide dispatch rate); 0 = no limit. Microseconds.
  double scheduler_task_us = 0;
};

/// [host]: the host CPU side of launching work.
struct HostSpec {
  double launch_aclnn_us = 0;        ///< host time to launch one aclnn op
  double launch_aclop_us = 0;        ///< host time to launch one aclop (GE single-op) op
  double recompile_us = 0;           ///< aclop whose attributes changed: online compile
  double dynamic_shape_sync_us = 0;  ///< device->host->device round trip for a data-dependent shape
  double ns_per_element = 0;         ///< an op placed on the host CPU, per element processed
  int launch_queue_depth = 0;        ///< launches that may run ahead of the device
  /// Host CPU cores that serve one card's instances: the launch work of all its streams queues
  /// on them (the simulator); 0 = no limit (every stream has a host thread of its own).
  int cores = 0;
};

/// [aicpu]: the AI CPU cores.
struct AicpuSpec {
  double dispatch_us = 0;     ///< fixed cost of one AI CPU task
  double ns_per_element = 0;  ///< per element processed
};

/// [pcie]: the host link.
struct PcieSpec {
  double bandwidth_gbps = 0;   ///< nominal link rate, GB/s per direction
  double efficiency = 0;       ///< achievable fraction (the advisor flags below this)
  double latency_us = 0;       ///< per transfer
};

/// [intervals.NAME] of a calibration overlay: how measured durations spread around the model's on
/// rows the fit never saw (measured / predicted device time of each held-out row). NAME is an op
/// family ("cube", "elementwise", ...) or "all" (every family pooled). Not part of a chip file.
struct ErrorInterval {
  double p10 = 0;  ///< 10th percentile of measured / predicted, > 0
  double p90 = 0;  ///< 90th percentile of measured / predicted, >= p10
  int rows = 0;    ///< held-out rows behind the percentiles, >= 1
};

/// One chip, fully specified. Immutable after load.
struct HwSpec {
  ChipSpec chip;
  CubeSpec cube;
  VectorSpec vector;
  MemorySpec memory;
  OverheadSpec overhead;
  HostSpec host;
  AicpuSpec aicpu;
  PcieSpec pcie;
  std::filesystem::path source;              ///< the chip file
  std::vector<std::filesystem::path> overlays;  ///< applied overlays, in order
  std::vector<std::string> overlaid_keys;    ///< "section.key" values that an overlay set
  /// Prediction intervals by family name or "all", from the last overlay with [intervals]; empty
  /// when uncalibrated, and cleared by a later overlay that changes the model without carrying
  /// its own (the old intervals described other parameter values).
  std::map<std::string, ErrorInterval> intervals;

  /// Cycles per microsecond (= MHz).
  [[nodiscard]] double cycles_per_us() const noexcept { return chip.freq_mhz; }
  /// Peak cube rate of the whole chip in TFLOP/s for fp16 (2 FLOPs per MAC).
  [[nodiscard]] double peak_cube_tflops_fp16() const noexcept;
  /// Peak vector rate of the whole chip in Telement-ops/s for fp16 (one binary op per lane).
  [[nodiscard]] double peak_vector_tops_fp16() const noexcept;
  /// Effective streaming HBM bandwidth, bytes per microsecond.
  [[nodiscard]] double hbm_bytes_per_us() const noexcept {
    return memory.hbm_bandwidth_gbps * memory.hbm_efficiency * 1e3;
  }
  /// HBM bus time of `read` and `write` bytes, in read bytes (hbm_bytes_per_us() moves that many
  /// per µs): writes at [memory].hbm_write_factor, plus the read-write turnaround, which costs
  /// hbm_turnaround per byte of the smaller stream (a stream in one direction pays none).
  [[nodiscard]] double hbm_bus_bytes(double read, double write) const noexcept {
    const double w = write / memory.hbm_write_factor;
    return read + w + memory.hbm_turnaround * (w < read ? w : read);  // std::min(read, w)
  }
  /// L2 bandwidth, bytes per microsecond.
  [[nodiscard]] double l2_bytes_per_us() const noexcept {
    return memory.l2_bandwidth_gbps * memory.l2_efficiency * 1e3;
  }
};

/// Loads and validates a chip file, then applies each overlay in order.
/// Throws InputError with file:line:col for any defect (type, range, unknown key).
[[nodiscard]] HwSpec load_hw_spec(const std::filesystem::path& file,
                                  const std::vector<std::filesystem::path>& overlays = {});

/// Resolves a chip given by name ("ascend910b3", case-insensitive, "910b3" accepted) or by path.
/// Searches `search_dirs` in order. Throws InputError naming the known chips when not found.
[[nodiscard]] std::filesystem::path resolve_hw_spec(const std::string& name_or_path,
                                                    const std::vector<std::filesystem::path>& search_dirs);

/// All chip files in the search dirs (first occurrence of a name wins), sorted by name.
[[nodiscard]] std::vector<std::filesystem::path> list_hw_specs(
    const std::vector<std::filesystem::path>& search_dirs);

}  // namespace npusim
