#include "model/op_table.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace npusim {

namespace {

using VC = VectorClass;
using F = OpFamily;
using R = OpRole;
using P = Placement;

OpKindInfo row(std::string_view type, F family, R role, P placement,
               std::initializer_list<VC> passes = {}, bool int64_vector = false,
               bool compare = false) {
  OpKindInfo k{type, family, role, placement, {}, 0, {}, 0, int64_vector, compare, false};
  for (VC c : passes) {
    if (k.pass_count < k.passes.size()) k.passes[k.pass_count++] = c;
  }
  return k;
}

// Vector passes per element follow how the CANN op library composes each op from Ascend C
// instructions (e.g. Softmax = reduce-max, sub, exp, reduce-sum, div); their cycle costs come from
// the hw spec's [vector.cycles_per_repeat].
std::vector<OpKindInfo> build_table() {
  std::vector<OpKindInfo> t;
  auto cube = [&](std::string_view n, R r) { t.push_back(row(n, F::kCube, r, P::kCube)); };
  for (auto n : {"MatMul", "MatMulV2", "MatMulV3", "MatMulV2Compress", "QuantMatmul", "GEMM",
                 "MatmulAllReduce"}) {
    cube(n, R::kMatMul);
  }
  for (auto n : {"BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "BatchMatmul",
                 "QuantBatchMatmulV3", "WeightQuantBatchMatmulV2", "GroupedMatmul"}) {
    cube(n, R::kBatchMatMul);
  }
  // A forward or input-gradient convolution over an NC1HWC0 map deals whole images to the cores
  // (the filter gradient reduces over them): at batch 32 on the 910's 30 blocks two cores run two
  // images. FusionOp_Conv2D_BNTrainingReduce [N,10,17,17,16] takes 30.9 us at batch 16 on 16
  // blocks and 57.9 at batch 32 on 30 (MindSpore Inception v3); per shape the batch-32 time is
  // 1.84 (median of 90 rows), 1.95 (44, with ReluGradV2) and 1.79 (43, Conv2DBackpropInput)
  // times the batch-16 one, where an even split gives 32/30 (docs/accuracy_mechanisms.md,
  // "Convolutions deal whole images").
  for (auto n : {"Conv2D", "Conv2DV2", "DepthwiseConv2D", "Conv3D", "Convolution"}) {
    cube(n, R::kConv2D);
    t.back().whole_images = true;
  }
  // (Conv2DTranspose takes x before the filter, unlike these: not one of them)
  for (auto n : {"Conv2DBackpropInput", "Conv2DBackpropInputD", "Conv2DBackpropInputV2",
                 "DepthwiseConv2DBackpropInput"}) {
    cube(n, R::kConvBackpropInput);
    t.back().whole_images = true;
  }
  for (auto n : {"Conv2DBackpropFilter", "Conv2DBackpropFilterD", "Conv2DBackpropFilterV2",
                 "DepthwiseConv2DBackpropFilter"}) {
    cube(n, R::kConvBackpropFilter);
  }
  // Fused attention: QK^T and PV (and their gradients) on the cube, the softmax on the vector
  // cores, in one MIX kernel. Per score element (ops-transformer flash_attention_score
  // ProcessVec1 and the SoftmaxFlashV2 API): the scale multiply, the row max and row sum folded
  // repeat by repeat with elementwise max / add (one whole-repeat reduce per row is left, not
  // counted), the subtract, the exp, and the cast of P to the input dtype. A whole-repeat
  // reduce per repeat (SoftmaxV2's passes, 22 cycles per repeat) put the CANN 8.3 llama
  // profile's FlashAttentionScore vector time at 711 us against 430 us measured (aiv_vec_time);
  // these passes, 12 cycles per repeat, give 388 us.
  for (auto n : {"FlashAttentionScore", "FlashAttentionScoreGrad", "FusedInferAttentionScore",
                 "PromptFlashAttention", "IncreFlashAttention", "FlashAttention"}) {
    t.push_back(row(n, F::kCube, R::kAttention, P::kMix,
                    {VC::kUnary, VC::kBinary, VC::kBinary, VC::kTranscendental, VC::kBinary,
                     VC::kConvert}));
  }

  auto ew = [&](std::string_view n, std::initializer_list<VC> p, bool i64 = false,
                bool cmp = false) {
    t.push_back(row(n, F::kElementwise, R::kElementwise, P::kVector, p, i64, cmp));
  };
  for (auto n : {"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "BiasAdd", "LogicalAnd",
                 "LogicalOr", "BitwiseAnd", "BitwiseOr", "SquaredDifference", "AddN", "Axpy",
                 "AxpyV2"}) {
    ew(n, {VC::kBinary});
  }
  for (auto n : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
    ew(n, {VC::kBinary}, false, true);
  }
  for (auto n : {"Select", "SelectV2", "MaskedFill"}) ew(n, {VC::kBinary, VC::kBinary});
  for (auto n : {"Relu", "Abs", "Neg", "Muls", "Adds", "LeakyRelu", "Relu6", "LogicalNot",
                 "Square", "Reciprocal", "Sign", "ClipByValue", "Round", "Floor", "Ceil", "Identity",
                 "ReluGrad"}) {
    ew(n, {VC::kUnary});
  }
  // Ops that only need their output's shape: the kernel writes, it reads no input data.
  for (auto n : {"ZerosLike", "OnesLike", "Fill", "Fills", "Range", "Arange", "LinSpace", "Empty"}) {
    ew(n, {VC::kUnary});
    t.back().writes_only = true;
  }
  for (auto n : {"Sin", "Cos", "Pows", "Atan", "Asin", "Acos", "Tan"}) ew(n, {VC::kTanh});
  // rotary embedding: x * cos + rotate(x) * sin, with the cos/sin tables broadcast
  ew("RotaryPositionEmbedding", {VC::kMultiplyAdd, VC::kBinary, VC::kUnary});
  ew("SwiGluGrad", {VC::kSigmoid, VC::kBinary, VC::kMultiplyAdd, VC::kBinary});
  // AdamW: two moment updates, bias corrections, sqrt, divide, decay and step
  for (auto n : {"ApplyAdamWV2", "ApplyAdamWD", "FusedAdamW"}) {
    ew(n, {VC::kMultiplyAdd, VC::kMultiplyAdd, VC::kTranscendental, VC::kTranscendental,
           VC::kMultiplyAdd, VC::kBinary});
  }
  // MindSpore / TBE training ops of the Ascend 910 corpus, composed the same way:
  // LAMB's moment updates, bias corrections, sqrt, divide and weight decay, one vector pass per
  // operation of its formula: m' = b1 m + (1-b1) g (2 muls, add), v' = b2 v + (1-b2) g^2 (mul,
  // 2 muls, add), m'/(1-b1^t) and v'/(1-b2^t) (2 divides), m_hat / (sqrt(v_hat) + eps) (sqrt,
  // add, divide), + decay x var x use_decay (2 muls, add): 7 unary, 4 binary, 4 transcendental.
  // (Its TBE compute, lamb_apply_optimizer_assign.py, runs 25: every scalar broadcast to the full
  // shape, pow(beta, steps) as vexp(steps x vln(beta)). Measured in sessions 9, 15 and 17: they
  // bring the type to 0.93 held out but lower the fitted transcendental factor for every run,
  // and the step totals of llama, deepfm and the CNN runs get worse; docs/accuracy_mechanisms.md.)
  ew("LambApplyOptimizerAssign",
     {VC::kUnary, VC::kUnary, VC::kBinary, VC::kBinary, VC::kUnary, VC::kUnary, VC::kBinary,
      VC::kTranscendental, VC::kTranscendental, VC::kTranscendental, VC::kUnary,
      VC::kTranscendental, VC::kUnary, VC::kUnary, VC::kBinary});
  // (Its tiles in series as well, ub_serial, fit its rows: 6.7 us + 60.8 ps an element on 30
  // blocks, the 28 bytes an element at ~1 TB/s and the passes added, not overlapped. Measured in
  // session 17 and not kept: the fitted transcendental factor, which these rows held at ~3 x its
  // spec, falls by 6-25 % in every fold and llama's held-out step total goes -7.7 -> -10.5 %;
  // docs/accuracy_mechanisms.md, "Session 17".)
  // LAMB's weight step (lamb_apply_weight_assign.py): the trust ratio from the two norms on
  // their [1] shape, then over the full shape the broadcast learning rate and ratio (two
  // vector_dup), vmul, vmul and vsub: two scalar-operand and three binary passes. Each tile's
  // load, passes and store run in series (ub_serial): 768x768 fp32 (three 2.36 MB streams) takes
  // 11.8 us on 30 blocks (MindSpore bert on the 910), where a core's 157 KB in at 32 B/cycle,
  // 79 KB out at 64 and the passes over its 307 repeats take 4.9, 1.2 and 2.5 us at 1 GHz: their
  // sum and the launch, not the longest of them (docs/accuracy_mechanisms.md, "Session 17").
  ew("LambApplyWeightAssign",
     {VC::kUnary, VC::kBinary, VC::kUnary, VC::kBinary, VC::kBinary});
  t.back().ub_serial = true;
  // relu that also writes its mask (a compare), and the gradient that selects by it
  ew("ReLUV2", {VC::kUnary, VC::kBinary});
  t.back().relu_mask = true;
  // Batch-norm apply over NC1HWC0 with per-channel statistics, in fp32 (bn_training_update.py
  // casts fp16 x). The TBE compute (CANN bn_training_update.py, bn_training_update_compute)
  // folds mean, rsqrt(var), scale and offset into a per-channel multiplier and addend, so the
  // full-size work is vmul(multiplier, x) and vadd(., addend); the statistics are per channel.
  ew("BNTrainingUpdate", {VC::kBinary, VC::kBinary});
  t.back().fp32_compute = true;
  // fused with ReLUV2, its tiles whose bit mask is not whole 32-byte blocks run in series
  // (bn_update_schedule.py's tile; model/cost/bn_schedules.cpp)
  t.back().bn_apply = true;
  // Its input gradient dx = scale * rsqrt(var) * (dy - (diff_offset + x_hat * diff_scale) / N),
  // in fp32. The TBE compute (CANN bn_training_reduce_grad.py) folds the per-channel terms into a
  // multiplier, an addend and a scale, so the full-size work is vmul(multiplier, x),
  // vadd(dy, .), vadd(., addend) and vmul(., scale): four binary passes.
  ew("BNTrainingReduceGrad", {VC::kBinary, VC::kBinary, VC::kBinary, VC::kBinary});
  t.back().fp32_compute = true;
  // TBE's bn_grad_reduce schedule (an elewise block tiling over NC1HWC0) deals whole images:
  // block dim min(N, 30) on 273 of the 274 rows of the 910 CNN runs, and per shape the batch-32
  // time is 1.8-2.0 times the batch-16 one on every map ([32,4,147,147,16] 518.3 us on 30 blocks,
  // [16,4,147,147,16] 260.8 us on 16: two images on two of the cores; docs/accuracy_mechanisms.md,
  // "Session 16")
  t.back().whole_images = true;
  // relu's gradient selects dy or 0 by ReLUV2's packed mask (one bit per element, uint8): the
  // TBE compute (relu_grad_v2.py) is one vsel in bit mode, costed per repeat as mask_select
  ew("ReluGradV2", {VC::kMaskSelect});
  // it deals whole images to the cores: [32,4,112,112,16] takes 196.6 us on 30 blocks, twice
  // the 97.5 us of [16,4,112,112,16] on 16 (MindSpore resnet50 on the 910)
  t.back().whole_images = true;
  for (auto n : {"SigmoidCrossEntropyWithLogits", "SigmoidCrossEntropyWithLogitsGrad"}) {
    ew(n, {VC::kSigmoid, VC::kMultiplyAdd});
  }
  for (auto n : {"NPUGetFloatStatus", "NPUClearFloatStatus", "NPUAllocFloatStatus", "OneHot"}) {
    ew(n, {VC::kUnary});
  }
  for (auto n : {"Exp", "Log", "Sqrt", "Rsqrt", "Pow", "Log1p", "Expm1", "RsqrtGrad", "SqrtGrad"}) {
    ew(n, {VC::kTranscendental});
  }
  // A division computes in fp32: fp16 operands are widened first and the quotient narrowed after
  // (TBE's vdiv, te.lang.cce elewise_compute, is wrapped in auto_cast_of_elewise). MindSpore on
  // the 910: RealDiv [128,50,768] / [] fp16 takes 39.4 us on 30 blocks (vit-128, 48 rows) and
  // [64,50,768] 22.4 us (vit-64), as long per element as fp32 division ([192,48,16,16] / [1]
  // fp32: 16.4-20.3 us for 2.36 M elements), twice an fp16 pass's time.
  for (auto n : {"Div", "RealDiv", "DivNoNan"}) {
    ew(n, {VC::kTranscendental});
    t.back().fp32_compute = true;
  }
  for (auto n : {"FloorMod", "FloorDiv", "Mod", "TruncateDiv", "TruncateMod"}) {
    // a floor-mod is a division, a floor and a multiply-subtract
    ew(n, {VC::kTranscendental, VC::kUnary, VC::kMultiplyAdd});
  }
  for (auto n : {"Sigmoid", "SigmoidGrad", "Swish", "Silu", "SiLU", "HardSigmoid", "HardSwish"}) {
    ew(n, {VC::kSigmoid});
  }
  for (auto n : {"Tanh", "TanhGrad", "FastGelu", "FastGeluV2", "Mish", "Softplus"}) {
    ew(n, {VC::kTanh});
  }
  // GeLU is not one tanh: the TBE compute (gelu.py, gelu_compute) casts fp16 to fp32 and runs
  // x*x, *x (vmul), *0.044715 (vmuls), +x (vadd), *2sqrt(2/pi), min(., 0) (vmuls, vmins),
  // exp, |.|, *-1 (vexp, vabs, vmuls), exp, +1 (vexp, vadds), x / . (vdiv), * (vmul): four
  // binary, six scalar-operand and three transcendental passes.
  for (auto n : {"Gelu", "GeluV2"}) {
    ew(n, {VC::kBinary, VC::kBinary, VC::kUnary, VC::kBinary, VC::kUnary, VC::kUnary,
           VC::kTranscendental, VC::kUnary, VC::kUnary, VC::kTranscendental, VC::kUnary,
           VC::kTranscendental, VC::kBinary});
    t.back().fp32_compute = true;
  }
  for (auto n : {"Erf", "Erfc"}) ew(n, {VC::kErf});
  // GeLU's gradient, from its TBE compute (gelu_grad.py, gelu_grad_compute) in fp32: the tanh
  // argument (vmul, vmul, vmuls, vadd, vmuls), its exp-based tanh (vabs, vmuls, vexp, vmul, vsub,
  // vadds, vadds, vmul, vdiv), 1 - tanh^2 times x (vmul, vmuls, vadds, vmul), the polynomial
  // factor (vmul, vmuls, vadds), the product and sum (vmul, vadds, vmuls, vadd) and dy times it,
  // keeping y alive (vmul, vmuls, vadd): 13 binary, 13 scalar-operand, 2 transcendental passes.
  ew("GeluGrad", {VC::kBinary, VC::kBinary, VC::kUnary, VC::kBinary, VC::kUnary,
                  VC::kUnary, VC::kUnary, VC::kTranscendental, VC::kBinary, VC::kBinary,
                  VC::kUnary, VC::kUnary, VC::kBinary, VC::kTranscendental,
                  VC::kBinary, VC::kUnary, VC::kUnary, VC::kBinary,
                  VC::kBinary, VC::kUnary, VC::kUnary,
                  VC::kBinary, VC::kUnary, VC::kUnary, VC::kBinary,
                  VC::kBinary, VC::kUnary, VC::kBinary});
  t.back().fp32_compute = true;
  for (auto n : {"SwiGlu", "GeGlu"}) ew(n, {VC::kSigmoid, VC::kBinary});
  for (auto n : {"Addcmul", "Addcdiv", "Lerp", "ApplyAdam", "FusedMulAdd"}) {
    ew(n, {VC::kMultiplyAdd, VC::kBinary});
  }

  auto red = [&](std::string_view n, R r, std::initializer_list<VC> p) {
    t.push_back(row(n, F::kReduction, r, P::kVector, p));
  };
  for (auto n : {"ReduceSum", "ReduceSumD", "ReduceMean", "ReduceMeanD", "ReduceMax", "ReduceMaxD",
                 "ReduceMin", "ReduceMinD", "ReduceProd", "ReduceProdD", "ReduceAll", "ReduceAny",
                 "ArgMax", "ArgMaxV2", "ArgMaxD", "ArgMin", "ArgMinV2", "ArgMinD", "ReduceLogSumExp",
                 "Norm", "LpNormV2"}) {
    red(n, R::kReduce, {VC::kReduce});
  }
  // Per-channel sum and sum of squares over N, H, W of NC1HWC0, in fp32: x * x and two vector
  // adds across the leading axes (binary-class vadds, model/cost/reduce_layout.h), not vcadd.
  red("BNTrainingReduce", R::kReduce, {VC::kBinary, VC::kBinary, VC::kBinary});
  t.back().fp32_compute = true;
  // pooling windows over NC1HWC0 maps (model/cost/pool.cpp); passes are the pool plan's own
  for (auto n : {"MaxPool", "MaxPoolV3", "MaxPoolWithArgmax", "MaxPoolWithArgmaxV1",
                 "MaxPoolWithArgmaxV2", "AvgPool", "AvgPoolV2"}) {
    red(n, R::kPool, {VC::kBinary});
  }
  for (auto n : {"MaxPoolGrad", "MaxPoolGradWithArgmax", "MaxPoolGradWithArgmaxV1",
                 "MaxPoolGradWithArgmaxV2", "AvgPoolGrad", "AvgPoolGradVm", "AvgPoolV2Grad"}) {
    red(n, R::kPoolGrad, {VC::kBinary});
  }
  // sums of squares over the last axis (the per-channel BN / bias-gradient sums are left
  // generic: as reductions they predicted 1.3-6 times slow on the 910 corpus). SquareSumV2
  // (square_sum_v2.py) is vmul(x, x) and a sum of it, and it also writes the square: a second,
  // full-size output (model/cost/vector_ops.cpp, reduction_plan).
  for (auto n : {"SquareSumV1", "SquareSumV2", "LpNormReduceV2", "SquareSumAll"}) {
    red(n, R::kReduce, {VC::kBinary, VC::kReduce});
  }
  // Per-channel gradient sums over NC1HWC0 / FRACTAL_NZ (model/cost/reduce_layout.h): vector
  // adds of C0-wide vectors or 16x16 fractals across the leading axes. BNTrainingUpdateGrad:
  // x - mean, * rsqrt(var), * dy, then the sums of dy and dy * x_hat.
  red("BNTrainingUpdateGrad", R::kReduce,
      {VC::kBinary, VC::kBinary, VC::kBinary, VC::kReduce, VC::kReduce});
  t.back().fp32_compute = true;  // bn_training_update_grad.py casts fp16 inputs to fp32
  // below the core count in both N and C1, the atomic reduce schedule: one image a core, tiles
  // of whole rows dividing H (the batch-16 rows of the 910 CNN runs: 0.34-0.39 ns an element on
  // ResNet's maps, 0.61-0.68 on Inception's prime 71 and 73, where a tile is one row)
  t.back().atomic_rows = true;
  red("BiasAddGrad", R::kReduce, {VC::kReduce});
  // LayerNorm's dgamma, dbeta: dy * x_hat, then the sums of it and of dy
  for (auto n : {"LayerNormBetaGammaBackpropV2", "LayerNormBetaGammaBackprop"}) {
    red(n, R::kReduce, {VC::kBinary, VC::kReduce, VC::kReduce});
  }
  red("LayerNormXBackpropV2", R::kRowwise,
      {VC::kReduce, VC::kBinary, VC::kMultiplyAdd, VC::kReduce, VC::kMultiplyAdd,
       VC::kMultiplyAdd});
  for (auto n : {"SoftmaxV2", "Softmax", "LogSoftmaxV2", "LogSoftmax", "SoftmaxGrad",
                 "SoftmaxCrossEntropyWithLogits"}) {
    red(n, R::kRowwise,
        {VC::kReduce, VC::kBinary, VC::kTranscendental, VC::kReduce, VC::kTranscendental});
    t.back().logits_2d = std::string_view(n) == "SoftmaxCrossEntropyWithLogits";
  }
  for (auto n : {"LayerNorm", "LayerNormV3", "LayerNormV4", "LayerNormGrad", "BatchNorm",
                 "BNInfer", "GroupNorm", "InstanceNorm", "AddLayerNorm"}) {
    red(n, R::kRowwise,
        {VC::kReduce, VC::kBinary, VC::kMultiplyAdd, VC::kReduce, VC::kTranscendental,
         VC::kMultiplyAdd});
  }
  for (auto n : {"RmsNorm", "AddRmsNorm", "RmsNormGrad", "L2Normalize"}) {
    red(n, R::kRowwise, {VC::kBinary, VC::kReduce, VC::kTranscendental, VC::kBinary});
  }

  auto mv = [&](std::string_view n, R r, std::initializer_list<VC> p, bool i64 = true) {
    t.push_back(row(n, F::kDataMovement, r, P::kVector, p, i64));
  };
  for (auto n : {"Tile", "TileD", "BroadcastTo", "BroadcastToD", "Expand", "ExpandD", "Repeat",
                 "TileWithAxis"}) {
    mv(n, R::kTile, {VC::kUnary});
  }
  for (auto n : {"Concat", "ConcatD", "ConcatV2", "ConcatV2D", "Pack", "Stack", "ConcatOffset"}) {
    mv(n, R::kConcat, {});
  }
  for (auto n : {"Transpose", "TransposeD", "ConfusionTransposeD", "Permute"}) {
    mv(n, R::kTranspose, {VC::kTranspose});
  }
  mv("TransData", R::kTransData, {VC::kTranspose});
  mv("TransDataRNN", R::kTransData, {VC::kTranspose});
  for (auto n : {"Cast", "CastD"}) mv(n, R::kCast, {VC::kConvert});
  for (auto n : {"Slice", "SliceD", "StridedSlice", "StridedSliceD", "StridedSliceV2",
                 "StridedSliceV3", "Narrow", "Gather_Slice"}) {
    mv(n, R::kSlice, {});
  }
  for (auto n : {"TensorMove", "Reshape", "Squeeze", "Unsqueeze", "ExpandDims", "Flatten",
                 "ViewCopy", "AsStrided", "Contiguous", "MemSet", "MemcpyAsync", "Assign"}) {
    mv(n, R::kCopy, {});
  }
  for (auto n : {"Split", "SplitD", "SplitV", "SplitVD", "Unpack", "Unstack", "Chunk"}) {
    mv(n, R::kSplit, {});
  }
  // AtomicAddrClean zeroes the output workspace of a kernel that adds into it atomically
  mv("AtomicAddrClean", R::kCopy, {});
  t.back().writes_only = true;
  for (auto n : {"Pad", "PadD", "PadV2", "PadV3", "PadV3D", "MirrorPad", "ConstantPad",
                 "StridedSliceGrad"}) {
    mv(n, R::kPad, {VC::kUnary});
  }

  auto idx = [&](std::string_view n, R r, std::initializer_list<VC> p) {
    t.push_back(row(n, F::kIndex, r, P::kVector, p, true));
  };
  for (auto n : {"Gather", "GatherV2", "GatherV2D", "Embedding", "EmbeddingLookup", "IndexSelect",
                 "GatherNd", "EmbeddingBag", "Index"}) {
    idx(n, R::kGather, {});
  }
  for (auto n : {"GatherElements", "GatherD", "TakeAlongDim"}) {
    idx(n, R::kGatherElements, {VC::kGather});
  }
  for (auto n : {"ScatterNd", "ScatterNdUpdate", "ScatterNdAdd", "ScatterUpdate", "ScatterAdd",
                 "ScatterElements", "IndexPut", "IndexPutV2", "InplaceIndexAdd", "IndexAdd",
                 "UnsortedSegmentSum", "UnsortedSegmentSumD", "EmbeddingDenseGrad",
                 "EmbeddingDenseGradV2",
                 "TensorScatterUpdate", "ScatterList"}) {
    idx(n, R::kScatter, {VC::kBinary});
  }

  for (auto n : {"TopK", "TopKV2", "TopKD", "TopKV3"}) {
    t.push_back(row(n, F::kSort, R::kTopK, P::kVector, {VC::kSort}));
  }
  for (auto n : {"Sort", "SortV2", "ArgSort"}) {
    t.push_back(row(n, F::kSort, R::kSort, P::kVector, {VC::kSort}));
  }

  for (auto n : {"Where", "Unique", "UniqueV2", "UniqueWithCounts", "UniqueConsecutive",
                 "NonZero", "NonZeroWithValue", "MaskedSelect", "BooleanMask"}) {
    t.push_back(row(n, F::kAicpu, R::kDynamicShape, P::kAicpu, {VC::kUnary}));
  }
  for (auto n : {"Bucketize", "StringToHashBucketFast", "RandomUniform", "Multinomial",
                 "RandomChoiceWithMask", "DropOutGenMask", "SearchSorted", "HistogramFixedWidth",
                 "StatelessRandomUniform"}) {
    t.push_back(row(n, F::kAicpu, R::kAicpuStatic, P::kAicpu, {VC::kBinary}));
  }
  return t;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A fusion's row owns the name its `type` views.
struct FusedRow {
  std::string name;
  OpKindInfo info;
};

struct Index {
  std::vector<OpKindInfo> rows = build_table();
  std::unordered_map<std::string, std::size_t> by_name;
  OpKindInfo generic = row("<generic>", F::kGeneric, R::kGeneric, P::kVector, {VC::kUnary}, true);
  std::mutex fused_mutex;
  std::unordered_map<std::string, std::unique_ptr<FusedRow>> fused;  // by lower-case name
  Index() {
    for (std::size_t i = 0; i < rows.size(); ++i) by_name.emplace(lower(rows[i].type), i);
  }
  [[nodiscard]] const OpKindInfo* find(const std::string& key) const {
    const auto it = by_name.find(key);
    return it == by_name.end() ? nullptr : &rows[it->second];
  }
};

// GE names a fused kernel after the ops it fuses, in order: FusionOp_Conv2D_BNTrainingReduce,
// FusionOp_MatMul_Mul, FusionOp_BNTrainingUpdate_ReLUV2 (MindSpore on the Ascend 910). The
// parts are split on '_', joining a part with the next while it names no op (op types may hold
// an underscore themselves).
std::vector<const OpKindInfo*> fusion_parts(const Index& idx, std::string_view rest) {
  std::vector<const OpKindInfo*> parts;
  std::string pending;
  std::size_t pos = 0;
  while (pos <= rest.size()) {
    const std::size_t end = std::min(rest.find('_', pos), rest.size());
    if (!pending.empty()) pending += '_';
    pending += rest.substr(pos, end - pos);
    if (const OpKindInfo* k = idx.find(pending)) {
      parts.push_back(k);
      pending.clear();
    }
    pos = end + 1;
  }
  if (!pending.empty()) parts.clear();  // a tail that names no op: not a fusion we can cost
  return parts;
}

const OpKindInfo* fusion_kind(Index& idx, const std::string& key, std::string_view type) {
  static constexpr std::string_view kPrefix = "fusionop_";
  if (key.rfind(kPrefix, 0) != 0) return nullptr;
  const std::lock_guard<std::mutex> lock(idx.fused_mutex);
  if (const auto it = idx.fused.find(key); it != idx.fused.end()) return &it->second->info;
  const std::vector<const OpKindInfo*> parts =
      fusion_parts(idx, std::string_view(key).substr(kPrefix.size()));
  if (parts.empty()) return nullptr;
  const OpKindInfo* main = parts.front();
  for (const OpKindInfo* k : parts) {
    if (k->family == F::kCube) {
      main = k;
      break;
    }
  }
  auto fused = std::make_unique<FusedRow>();
  fused->name = std::string(type);
  OpKindInfo& info = fused->info;
  info = *main;
  const bool cube = info.family == F::kCube;
  for (const OpKindInfo* k : parts) {
    info.fp32_compute = info.fp32_compute || k->fp32_compute;
    info.relu_mask = info.relu_mask || k->relu_mask;
    if (k == main) continue;
    for (std::uint8_t i = 0; i < k->pass_count; ++i) {
      auto& passes = cube ? info.epilogue : info.passes;
      auto& count = cube ? info.epilogue_count : info.pass_count;
      if (count < passes.size()) passes[count++] = k->passes[i];
    }
  }
  // A vector main op computing in fp32 casts its result back before the parts that do not (the
  // BN apply's fused ReLUV2 runs on fp16 y): only the main op's own passes stay in fp32.
  const auto fp32 = [](const OpKindInfo* k) { return k->fp32_compute; };
  if (main->fp32_compute && !cube && !std::all_of(parts.begin(), parts.end(), fp32)) {
    info.fp32_passes = main->pass_count;
  }
  info.type = fused->name;
  const OpKindInfo* out = &info;
  idx.fused.emplace(key, std::move(fused));
  return out;
}

Index& index() {
  static Index idx;
  return idx;
}

}  // namespace

const OpKindInfo& lookup_op_kind(std::string_view type) noexcept {
  Index& idx = index();
  std::string key = lower(type);
  // aclnn kernels appear in profiles as "aclnnAdd"; the op type behind them is the rest.
  if (key.rfind("aclnn", 0) == 0) key.erase(0, 5);
  if (const OpKindInfo* k = idx.find(key)) return *k;
  if (const OpKindInfo* k = fusion_kind(idx, key, type)) return *k;
  return idx.generic;
}

const std::vector<OpKindInfo>& op_table() { return index().rows; }

}  // namespace npusim
