#!/usr/bin/env bash
# Configures (once) and builds ShardLab in ./build, incrementally. Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hashes paths under the checkout relative to it (and not the build directory's
# path), so another clone on this machine, CI's clean clone included, reuses what was compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
BUILD_DIR=${SHARDLAB_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build "$BUILD_DIR" -j "${SHARDLAB_JOBS:-2}"
