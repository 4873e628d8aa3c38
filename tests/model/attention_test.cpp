// Hand-computed cases for fused attention's vector side (model/cost/attention.cpp): the full
// attention mask and the dropout mask each add their vector passes and their transfers per score
// element; a compressed causal mask and keep_prob = 1 add nothing. Toy chip: 1000 MHz, 256-byte
// repeats, 1 cycle per repeat (2 for binary), 22 cycles per API call, 32 B/cycle GM reads and
// 64 B/cycle GM writes per core, two vector cores per cube core.
#include <catch2/catch.hpp>

#include "model/cost/kernel_plan.h"
#include "model/predict.h"
#include "tests/model/test_ops.h"

using namespace npusim;

namespace {

HwSpec toy_attention_chip() {
  HwSpec hw = npusim::test::toy_vector_chip();
  hw.memory.gm_read_bytes_per_cycle = 32;
  hw.memory.gm_write_bytes_per_cycle = 64;
  hw.cube.mix_vector_ratio = 2;
  hw.cube.tile_m = 128;
  return hw;
}

// SBH, Sq = Sk = 256, B = 1, H = 128 (one head of D = 128): two query blocks of 128 rows, each
// a tile of E = 128 x 256 = 32768 score elements, 131072 fp32 bytes = 512 repeats.
const char* const kQkv = "256,1,128;256,1,128;256,1,128";

}  // namespace

TEST_CASE("a full attention mask and a dropout mask add their passes and transfers per element",
          "[mechanism][attention]") {
  const HwSpec hw = toy_attention_chip();
  const OpDesc plain = test::op("FlashAttentionScore", kQkv, "BF16;BF16;BF16");
  // inputs as the 2023 profile lists them: q, k, v, real_shift (absent), drop_mask (256*256/8 =
  // 8192 bytes), padding_mask (absent), atten_mask [1,1,256,256] bf16
  const OpDesc masked = test::op("FlashAttentionScore", std::string(kQkv) + ";;8192;;1,1,256,256",
                                 "BF16;BF16;BF16;FLOAT;UINT8;FLOAT;BF16");
  const cost::AttentionShape a = cost::attention_shape(masked);
  CHECK(a.valid);
  CHECK(a.heads == 1);
  CHECK(a.d == 128);
  CHECK(a.density == 1);
  CHECK(a.mask_bytes == 2);
  CHECK(a.dropout);

  const cost::KernelPlan p0 = cost::plan_attention(plain, hw);
  const cost::KernelPlan p1 = cost::plan_attention(masked, hw);
  CHECK(p0.tiles == 2);
  // passes scale, max fold, subtract, exp, sum fold, cast: 512 x (1+2+2+1+2+1) + 6 x 22 = 4740
  // cycles, over the two vector cores
  CHECK(p0.vector_cycles == Approx(4740.0 / 2));
  // + mask select (binary): 512 x 2 + 22 = 1046; + dropout select and 1/keep_prob multiply:
  // 1046 + 534 = 1580
  CHECK(p1.vector_cycles == Approx((4740.0 + 1046 + 1580) / 2));
  // transfers: scores in 131072 B / 32 = 4096 cycles, P out 32768 x 2 B / 64 = 1024
  CHECK(p0.vector_dma_cycles == Approx((4096.0 + 1024) / 2));
  // + the mask tile (32768 x 2 B) and the dropout bits (32768 / 8 B) in: 69632 / 32 = 2176
  CHECK(p1.vector_dma_cycles == Approx((4096.0 + 1024 + 2176) / 2));

  // Stores share the chip's HBM: at 64 GB/s (efficiency 1) and 1000 MHz the chip moves 64 B per
  // cycle, 16 B/cycle for each of the 2 x 2 vector cores of the launch; P out then takes
  // 65536 / 16 = 4096 cycles. The score loads (the workspace, in L2) keep one core's 32 B/cycle;
  // the mask tile and the dropout bits come from HBM at the same 16 B/cycle share: 69632 / 16 =
  // 4352 cycles.
  HwSpec narrow = hw;
  narrow.memory.hbm_bandwidth_gbps = 64;
  narrow.memory.hbm_efficiency = 1;
  CHECK(cost::plan_attention(masked, narrow).vector_dma_cycles ==
        Approx((4096.0 + 4096 + 4352) / 2));
  // without mask or dropout nothing loads from HBM: only the store is capped
  CHECK(cost::plan_attention(plain, narrow).vector_dma_cycles == Approx((4096.0 + 4096) / 2));

  // evaluated: one wave of two tiles, the vector stage is the passes plus the serial transfers
  const OpCost c1 = predict(masked, hw);
  CHECK(c1.pipes.vector_us == Approx(3.683));
  CHECK(c1.critical_path.compute_us + c1.critical_path.memory_us >= Approx(3.683 + 3.648));
}

TEST_CASE("a compressed causal mask and keep_prob 1 add no mask or dropout work",
          "[mechanism][attention]") {
  const HwSpec hw = toy_attention_chip();
  const OpDesc plain = test::op("FlashAttentionScore", kQkv, "BF16;BF16;BF16");
  // the 2048 x 2048 boolean mask of sparse_mode 2/3 only touches the diagonal blocks
  const OpDesc causal = test::op("FlashAttentionScore", std::string(kQkv) + ";;;;2048,2048",
                                 "BF16;BF16;BF16;BF16;UINT8;BF16;BOOL");
  const cost::AttentionShape a = cost::attention_shape(causal);
  CHECK(a.density == 0.5);
  CHECK(a.mask_bytes == 0);
  CHECK_FALSE(a.dropout);
  const cost::KernelPlan pc = cost::plan_attention(causal, hw);
  const cost::KernelPlan p0 = cost::plan_attention(plain, hw);
  // half the elements: 256 repeats x 9 + 6 x 22 = 2436 cycles
  CHECK(pc.vector_cycles == Approx(2436.0 / 2));
  CHECK(pc.vector_dma_cycles == Approx(p0.vector_dma_cycles / 2));

  // BNSD with Sk = D = 128: the gradient's dO (1,2,128,128) is shaped like Q, not a mask
  const OpDesc grad =
      test::op("FlashAttentionScoreGrad", "1,2,128,128;1,2,128,128;1,2,128,128;1,2,128,128",
               "BF16;BF16;BF16;BF16", {{"input_layout", "BNSD"}});
  CHECK(cost::attention_shape(grad).mask_bytes == 0);
  CHECK(cost::attention_shape(grad).heads == 2);

  const OpDesc kept = test::op("FlashAttentionScore", std::string(kQkv) + ";;8192",
                               "BF16;BF16;BF16;FLOAT;UINT8", {{"keep_prob", "1"}});
  CHECK_FALSE(cost::attention_shape(kept).dropout);
  CHECK(cost::plan_attention(kept, hw).vector_cycles == Approx(p0.vector_cycles));
}
