#!/usr/bin/env bash
# Installs the Debian packages npusim builds with (nothing is downloaded at build time).
# Skips apt entirely when everything is already installed; uses sudo only when not root.
# The ci preset (scripts/test.sh) and the fuzz preset build with clang and link with lld
# (docs/building.md says why); libclang-rt-14-dev is clang's ASan/UBSan/libFuzzer runtime.
# `--fuzz` is still accepted (scripts/fuzz.sh passes it) and adds nothing now.
set -euo pipefail
packages=(g++ cmake ninja-build pkg-config ccache
  libfmt-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev libeigen3-dev libboost-graph-dev
  libonnx-dev libprotobuf-dev protobuf-compiler  # frontend/: ONNX import (onnx 1.12, protobuf 3.21)
  catch2 libbenchmark-dev python3  # python3: scripts/gen_docs.py and tests/docs_test.py
  python3-pandas python3-matplotlib  # notebooks_export/ and its test
  libsqlite3-dev libsimdjson-dev   # profile/db_reader.cpp (.db exports), profile/trace_reader.cpp
  libxgboost-dev  # model/correction_gbt.cpp: the learned correction's boosted trees
  clang libclang-rt-14-dev lld)  # the ci and fuzz presets: compiler, sanitizer runtimes, linker
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} build packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
