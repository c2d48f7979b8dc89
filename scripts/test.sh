#!/usr/bin/env bash
# One command: install what is missing, build, run the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j "${SHARDLAB_JOBS:-2}" "$@"
