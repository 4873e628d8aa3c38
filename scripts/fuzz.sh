#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, the `fuzz` preset: clang, ASan+UBSan) and runs each for
# SECONDS (default 60), seeded from tests/data, hw_specs/, scenarios/ and fuzz/seeds/.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     e.g. scripts/fuzz.sh 5   or   scripts/fuzz.sh 600 fuzz_csv
#
# Each harness keeps what it learns in build/fuzz/corpus/<harness>/ (reused by the next run) and
# writes a crashing input to build/fuzz/findings/<harness>/. Prints one line per harness with its
# executions; exits 1 when any harness found something (its output is in build/fuzz/logs/).
# FUZZ_JOBS=N runs N harnesses at once (default 1: the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${1:-60}
shift || true
./scripts/setup.sh --fuzz >/dev/null
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j"$(nproc)" --target npusim_fuzzers >/dev/null

out=$root/build/fuzz
all=(fuzz_csv fuzz_kernel_table fuzz_summary_tables fuzz_profile_json fuzz_profile_db fuzz_hw_spec
     fuzz_hw_overlay fuzz_graph fuzz_op_text fuzz_scenario fuzz_workload_files fuzz_sweep_json
     fuzz_onnx fuzz_ge_dump)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")

# Seeds: the files of the repository each harness's reader is meant for (copied into the build
# folder because libFuzzer reads a seed folder whole).
seed() {  # seed HARNESS FILE...
  local dir=$out/seeds/$1
  shift
  mkdir -p "$dir"
  local f
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$dir/$(echo "${f#"$root"/}" | tr '/' '_')"
  done
  return 0
}
rm -rf "$out/seeds"
shopt -s globstar nullglob
profiles=(tests/data/profiles/**/*.csv tests/data/bad/profile_*.csv)
seed fuzz_csv "${profiles[@]}" tests/data/scenarios/*.csv
seed fuzz_kernel_table tests/data/profiles/**/op_summary*.csv tests/data/profiles/**/kernel_details*.csv \
  tests/data/profiles/**/OpBasicInfo*.csv tests/data/bad/profile_*.csv
seed fuzz_summary_tables tests/data/profiles/**/op_statistic*.csv tests/data/profiles/**/task_time*.csv \
  tests/data/profiles/**/api_statistic*.csv tests/data/profiles/**/pcie*.csv
seed fuzz_profile_json tests/data/profiles/**/*.json fuzz/seeds/profile_json/*
# Database seeds are written from SQL text (a .db file is binary; none is kept in the repository).
mkdir -p "$out/seeds/fuzz_profile_db"
for f in fuzz/seeds/profile_db/*.sql; do
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[2]); c.executescript(open(sys.argv[1]).read()); c.commit()' \
    "$f" "$out/seeds/fuzz_profile_db/$(basename "$f" .sql).db"
done
seed fuzz_hw_spec hw_specs/*.toml tests/data/bad/hw_*.toml
seed fuzz_hw_overlay tests/data/bad/hw_overlay_*.toml fuzz/seeds/hw_overlay/*
seed fuzz_graph tests/data/bad/graph_*.toml scenarios/**/*graph*.toml tests/data/scenarios/*graph*.toml
seed fuzz_op_text fuzz/seeds/op_text/*
seed fuzz_scenario scenarios/**/*.toml tests/data/scenarios/*.toml tests/data/bad/scenario_*.toml
seed fuzz_workload_files tests/data/scenarios/*.csv tests/data/bad/scenario_*.csv fuzz/seeds/workload_files/*
seed fuzz_sweep_json fuzz/seeds/sweep_json/*
# ONNX seeds are the example models, written by the fuzz build (no binary model is kept).
mkdir -p "$out/seeds/fuzz_onnx"
"$out/fuzz/fuzz_seed_onnx" "$out/seeds/fuzz_onnx"
seed fuzz_ge_dump fuzz/seeds/ge_dump/*

failed=0
total=0
run_one() {  # run_one HARNESS -> prints "HARNESS: N executions in S s, ..."
  local h=$1
  local corpus=$out/corpus/$h findings=$out/findings/$h log=$out/logs/$h.log
  mkdir -p "$corpus" "$findings" "$out/logs"
  local rc=0
  # -timeout: a reader that takes 10 s on a small input hangs; -rss_limit_mb: one that takes
  # 2 GB for one is a memory bomb. Both are findings.
  "$out/fuzz/$h" "$corpus" "$out/seeds/$h" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$findings/" \
    >"$log" 2>&1 || rc=$?
  local runs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    echo "$h: FOUND a defect after ${runs:-?} executions (exit $rc): see $log and $findings/"
    return 1
  fi
  echo "$h: ${runs:-0} executions in ${seconds} s, corpus $(find "$corpus" -type f | wc -l) inputs"
}

jobs=${FUZZ_JOBS:-1}
results=$out/logs/summary.txt
mkdir -p "$out/logs"
: >"$results"
for h in "${harnesses[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  (run_one "$h" >>"$results" || true) &
done
wait
sort "$results"
if grep -q FOUND "$results"; then failed=1; fi
total=$(awk '/ executions in /{s += $2} END {print s + 0}' "$results")
echo "fuzz: ${#harnesses[@]} harnesses, ${total} executions in all"
exit "$failed"
