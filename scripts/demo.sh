#!/usr/bin/env bash
# The README's first command: set up, build in release mode, run the main job on the bundled
# default — simulate scenarios/default.toml (a recommendation coarse-ranking model served on an
# Ascend 910B3), then a predict tour of the ops that dominate it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
npusim=build/release/app/npusim
hw=${NPUSIM_HW:-ascend910b3}
tour() {
  local title=$1; shift
  printf '\n=== %s\n$ npusim predict --hw %s %s\n' "$title" "$hw" "$*"
  "$npusim" predict --hw "$hw" "$@"
}
printf '\n=== simulate the bundled default scenario\n$ npusim simulate scenarios/default.toml\n'
"$npusim" simulate scenarios/default.toml
tour "embedding lookup, 400x50 table, 4000 indices per sample, batch 64" \
  --op GatherV2 --shapes "400,50;64,4000;1" --dtypes "FLOAT16;INT64;INT32"
tour "int64 Equal of (1,4000) against (400,1): no vector path for int64" \
  --op Equal --shapes "1,4000;400,1" --dtypes INT64
tour "the same Equal run through int32" --op Equal --shapes "1,4000;400,1" --dtypes INT32
tour "feature hashing on int64 (AI CPU)" --op Bucketize --shapes "64,4000" --dtypes INT64
tour "masking missing indices: Where with a data-dependent output shape" \
  --op Where --shapes "64,4000" --dtypes BOOL
tour "TopK over a padded sequence" --op TopKV2 --shapes "64,4000" --dtypes FLOAT16 --attr k=100
tour "the same TopK given its valid length" --op TopKV2 --shapes "64,4000" --dtypes FLOAT16 \
  --attr k=100 --attr valid_length=400
tour "BatchMatMul of 128x8 batches of (1,32).(32,300): 1/16 of the cube used" \
  --op BatchMatMulV2 --shapes "1024,1,32;32,300" --dtypes FLOAT16
tour "the same product with the batch folded into M" --op MatMulV2 --shapes "1024,32;32,300" \
  --dtypes FLOAT16
tour "MLP tower layer at 12 cube cores (a core limit)" --op MatMulV2 \
  --shapes "64,1024;1024,512" --dtypes FLOAT16 --cube-cores 12
tour "Concat of same-source features" --op ConcatD --shapes "64,400;64,400" --dtypes FLOAT16 \
  --attr concat_dim=1
