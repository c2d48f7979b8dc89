#!/usr/bin/env bash
# One command: install what is missing, build, run the test suite with ctest: every test
# except those labelled `slow` (stress runs, the deep exact oracle, fuzzing, retraining
# checks), which .ci/run adds. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd "${SHARDLAB_BUILD_DIR:-build}"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j "${SHARDLAB_JOBS:-2}" -LE slow "$@"
