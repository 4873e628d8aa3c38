// Fused attention (FlashAttentionScore and its gradient): one MIX kernel whose cube cores compute
// the score and output products per query block and whose paired vector cores run the softmax
// between them (DESIGN.md "Cube tile efficiency" for the cube side).
//
// Per query block of tile_m rows the vector side (ops-transformer flash_attention_score
// s1s2_bn2gs1, ProcessVec1) works on the score tile of tile_m x Sk elements (E below):
//   - it reads the fp32 scores the cube wrote to a GM workspace and writes P back in the input
//     dtype for the cube's second product (the gradient: S and dP in, P and dS out). Each
//     sub-block's load is waited for before the vector work and the store waits for it
//     (MTE2_V / V_MTE3 flags), so these transfers run in series with the vector passes; the
//     stores share the chip's HBM with every other vector core of the launch;
//   - a full attention mask (last two dims Sq x Sk, sparse_mode 0: every block computed) is
//     read per tile in its own dtype and applied by a select pass; a compressed causal mask
//     (sparse_mode 2/3, or the 2-D boolean mask) only touches the diagonal blocks and is not
//     counted;
//   - dropout (a bit mask of B*N*Sq*Sk/8 bytes, keep_prob < 1) reads one bit per element and
//     applies a select and a multiply by 1/keep_prob.
#include <algorithm>
#include <cmath>

#include "model/cost/kernel_plan.h"
#include "model/op_table.h"

namespace npusim::cost {

namespace {

double dim(const TensorDesc& t, std::size_t i) { return static_cast<double>(t.shape[i]); }

}  // namespace

// Q (B, Sq, N, D) and K/V (B, Sk, Nkv, D). Layouts: 4-D BSND (default) or BNSD (attribute
// input_layout), 3-D SBH or BSH with the head count from the attribute head_num or from the
// softmax statistics tensor (B, N, S, 8) that the gradient takes; D defaults to 128.
AttentionShape attention_shape(const OpDesc& op) noexcept {
  AttentionShape a;
  if (op.inputs.size() < 3 || op.inputs[0].shape.size() < 3) return a;
  const TensorDesc& q = op.inputs[0];
  const TensorDesc& k = op.inputs[1];
  const std::string_view layout =
      op.attr("input_layout").value_or(q.shape.size() == 4 ? "BSND" : "SBH");
  if (q.shape.size() == 4) {
    const bool bnsd = layout == "BNSD";
    a.b = dim(q, 0);
    a.sq = bnsd ? dim(q, 2) : dim(q, 1);
    a.heads = bnsd ? dim(q, 1) : dim(q, 2);
    a.d = dim(q, 3);
    a.sk = k.shape.size() == 4 ? (bnsd ? dim(k, 2) : dim(k, 1)) : a.sq;
  } else {
    const bool sbh = layout != "BSH";
    a.sq = sbh ? dim(q, 0) : dim(q, 1);
    a.b = sbh ? dim(q, 1) : dim(q, 0);
    a.sk = k.shape.size() == 3 ? (sbh ? dim(k, 0) : dim(k, 1)) : a.sq;
    const double h = dim(q, 2);
    double heads = op.attr_number("head_num", 0);
    for (const auto& t : op.inputs) {  // softmax max/sum statistics: (B, N, S, 8)
      if (heads <= 0 && t.shape.size() == 4 && t.shape[3] == 8 && dim(t, 2) == a.sq)
        heads = dim(t, 1);
    }
    if (heads <= 0) heads = std::max(1.0, h / 128);
    a.heads = heads;
    a.d = h / heads;
  }
  a.valid = true;
  // a causal mask (a 2-D boolean mask input, or sparse_mode 2/3) leaves half the score matrix
  bool causal = op.attr_number("sparse_mode", 0) >= 2;
  for (const auto& t : op.inputs) causal |= t.dtype == DType::kBool && t.shape.size() == 2;
  a.density = causal ? 0.5 : 1.0;
  const double score_elements = a.b * a.heads * a.sq * a.sk;
  for (std::size_t i = 3; i < op.inputs.size(); ++i) {
    const TensorDesc& t = op.inputs[i];
    const std::size_t r = t.shape.size();
    // a full mask (or bias): its last two dims are Sq x Sk, read and applied on every computed
    // block (a tensor shaped like Q -- the gradient's dO, the forward output -- is not one, even
    // when D equals Sk)
    if (!causal && a.mask_bytes == 0 && r >= 2 && dim(t, r - 2) == a.sq && dim(t, r - 1) == a.sk &&
        t.shape != op.inputs[0].shape)
      a.mask_bytes = dtype_bytes(t.dtype);
    // the dropout mask: one bit per score element
    if (!a.dropout && t.dtype == DType::kUInt8 && r == 1 && score_elements > 0 &&
        dim(t, 0) * 8.0 >= score_elements)
      a.dropout = true;
  }
  if (op.attr_number("keep_prob", 0.5) >= 1.0) a.dropout = false;
  return a;
}

KernelPlan plan_attention(const OpDesc& op, const HwSpec& hw) noexcept {
  KernelPlan p;
  p.unit = Placement::kMix;
  p.cube_operand_path = true;
  // The cube (AIC) and the paired vector cores (AIV) of a MIX kernel are separate pipes: the
  // softmax of one query block overlaps the products of the next, so they pipeline like any
  // other stage. Running them one after the other per block was the first model: it predicted
  // the CANN 8.3 FlashAttentionScore 44 % slow after calibration and pinned the fitted cube
  // efficiency at its bound (docs/accuracy.md).
  const AttentionShape a = attention_shape(op);
  if (!a.valid) {
    p.warnings |= kWarnShapeMismatch;
    return p;
  }
  const TensorDesc& q = op.inputs[0];
  const bool grad = op.type.find("Grad") != std::string::npos;
  const double ds = dtype_bytes(q.dtype);
  // forward: S = QK^T, O = PV (2 products); backward: recompute S, then dV, dP, dQ, dK (5)
  const double products = grad ? 5 : 2;
  const double block_q = hw.cube.tile_m;
  const double tiles = a.b * a.heads * fast_ceil(a.sq / block_q);
  p.tiles = saturating_count(tiles);
  const double macs_tile = products * block_q * a.sk * a.d * a.density;
  p.cube_cycles = macs_tile / (hw.cube.macs_per_cycle_fp16 * hw.cube.efficiency);
  p.flops = 2 * products * a.b * a.heads * a.sq * a.sk * a.d * a.density;
  // the softmax (and its gradient) over the tile's score rows, in fp32, on the vector cores that
  // pair with this cube core
  const double aivs = std::max(1.0, hw.cube.mix_vector_ratio);
  const double elements = block_q * a.sk * a.density;  // E: score elements of one tile
  const double score_bytes = elements * 4.0 * (grad ? 2 : 1);
  double vector = pass_cycles(*op.kind, score_bytes, hw);
  if (a.mask_bytes > 0) vector += class_pass_cycles(VectorClass::kBinary, score_bytes, hw);
  if (a.dropout) {
    vector += class_pass_cycles(VectorClass::kBinary, score_bytes, hw) +
              class_pass_cycles(VectorClass::kUnary, score_bytes, hw);
  }
  p.vector_cycles = vector / aivs;
  // The vector cores' own transfers, in series with their passes (see the top of the file):
  // scores in (fp32), P out (input dtype), the mask tile and the dropout bits in.
  // Workspace loads run at one core's DMA rate (the workspace was just written and hits L2: the
  // CANN 8.3 llama profile's FA loads at 25 B/cycle per vector core, aiv_mte2_time). Stores go on
  // to HBM, where every vector core of the launch stores at once, so each gets its share of the
  // chip's HBM bandwidth (the same profile stores P at 19 B/cycle per core, aiv_mte3_time: the
  // HBM share of 40 cores at 1.65 GHz, not the 64 B/cycle of one core alone). A full mask and the
  // dropout bits are not the workspace: they come from HBM too (llm-2023's [1,1,8192,8192] mask
  // is 128 MB, read once per batch and head, beside an 84 MB dropout mask and the K / V streams),
  // each core reading them at its HBM share. (Capping the score loads too over-priced the CANN
  // 8.3 llama FA, 1.26x: those hit L2; the llama FA has neither a full mask nor dropout.)
  const double hbm_in = elements * (a.mask_bytes + (a.dropout ? 0.125 : 0.0));
  const double aiv_out = elements * ds * (grad ? 2 : 1);
  const double cores = std::min(tiles, std::max(1.0, static_cast<double>(hw.chip.cube_cores)));
  const double hbm_share = hw.hbm_bytes_per_us() / hw.cycles_per_us() / (cores * aivs);
  const auto at_hbm_share = [hbm_share](double rate) {
    return hbm_share > 0 ? std::min(rate, hbm_share) : rate;
  };
  p.vector_dma_cycles = (score_bytes / hw.memory.gm_read_bytes_per_cycle +
                         hbm_in / at_hbm_share(hw.memory.gm_read_bytes_per_cycle) +
                         aiv_out / at_hbm_share(hw.memory.gm_write_bytes_per_cycle)) /
                        aivs;
  // Q block in, K and V (and for the gradient dO, O) streamed per tile; outputs per tile
  const double kv_bytes = 2 * a.sk * a.d * ds * (grad ? 2 : 1);
  p.in = flat_transfer((block_q * a.d * ds + kv_bytes) * tiles, tiles);
  p.reread_fraction = std::clamp(1.0 - (a.b * a.heads * (a.sq + 2 * a.sk) * a.d * ds) /
                                           std::max(1.0, p.in.padded_bytes * tiles),
                                 0.0, 1.0);
  p.fixpipe_bytes = block_q * a.d * ds * (grad ? 3 : 1);
  p.cube_efficiency = 1;
  return p;
}

}  // namespace npusim::cost
