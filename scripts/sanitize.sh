#!/usr/bin/env bash
# Sanitizer runs of the test suite.
#   scripts/sanitize.sh asan   ASan + UBSan: the core, the RL library (ppo), their Qt Test
#                              units, the CLI and fuzz replays (no GUI). .ci/run runs it with
#                              SHARDLAB_SANITIZE_RL=OFF (no LibTorch: every instrumented CLI
#                              start then takes well under a second instead of ~3 s), to stay
#                              within CI's 90 minutes; docs/hardening.md has the full runs.
#   scripts/sanitize.sh asan-ui  ASan + UBSan on the window's input and session tests
#                              (tst_window_inputs: the runs table, the wheel, long names;
#                              tst_session: saving, restoring and setting aside the
#                              session files), the GUI built without the RL library.
#   scripts/sanitize.sh tsan   TSan: the search, ppo, fuzz_search replay and GUI threading tests
# Only ShardLab's code is instrumented: LibTorch, Qt and the C++ runtime come from Debian
# as they are. LibTorch needs no suppression in either mode (tst_ppo runs free of ASan,
# LSan and TSan reports); if a LibTorch update brings reports whose every frame is inside
# libtorch_cpu/libc10, suppress those libraries only (tests/tsan.supp for TSan, an
# LSAN_OPTIONS=suppressions=... file for leaks), never a ShardLab frame.
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache hashes paths under the checkout relative to it (and not the build directory's
# path), so another clone on this machine, CI's clean clone included, reuses what was compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
MODE=${1:-asan}
TARGETS=()
scripts/install-deps.sh
case $MODE in
  asan)
    BUILD=build-asan
    FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    OPTS=(-DSHARDLAB_BUILD_GUI=OFF "-DSHARDLAB_BUILD_RL=${SHARDLAB_SANITIZE_RL:-ON}" -DSHARDLAB_BUILD_QT_TESTS=ON)
    # Not the docs label: it reruns the figure generators through the CLI (minutes when
    # instrumented, past its time limit) to compare the docs with the Release build's
    # figures, which the plain suite already does.
    TESTS=(-LE docs)
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    # Fewer cases in the heaviest tests (brute force, thousands of constructed plans):
    # instrumented code runs 5-20x slower (tests/core/tst_search_fixtures.h).
    export SHARDLAB_QUICK_TESTS=1
    export QTEST_FUNCTION_TIMEOUT=1200000
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  asan-ui)
    BUILD=build-asan-ui
    FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
    OPTS=(-DSHARDLAB_BUILD_GUI=ON -DSHARDLAB_BUILD_RL=OFF -DSHARDLAB_BUILD_QT_TESTS=ON)
    TESTS=(-R "^(tst_window_inputs|tst_session)$")
    TARGETS=(--target tst_window_inputs tst_session)
    # Qt's own allocations outlive the test's QApplication: leaks are not this test's subject.
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  tsan)
    BUILD=build-tsan
    FLAGS="-fsanitize=thread -fno-omit-frame-pointer"
    OPTS=(-DSHARDLAB_BUILD_GUI=ON -DSHARDLAB_BUILD_RL=ON -DSHARDLAB_BUILD_QT_TESTS=ON)
    TESTS=(-R "tst_search|tst_ppo|tst_main_window|tst_background_job|fuzz.replay.search")
    # Qt itself is not built with TSan: its internal synchronization is invisible to
    # TSan, so reports whose every frame is inside Qt are suppressed (tests/tsan.supp).
    # die_after_fork=0: tst_main_window starts shardlab-cli through QProcess.
    export SHARDLAB_QUICK_TESTS=1
    export QTEST_FUNCTION_TIMEOUT=1200000
    export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp:halt_on_error=1:second_deadlock_stack=1:die_after_fork=0"
    ;;
  *) echo "usage: scripts/sanitize.sh asan|asan-ui|tsan" >&2; exit 2 ;;
esac
# Configured every time: a build directory made before the options changed (e.g. without
# the RL library) picks them up.
# -O1 -g1 (line tables: every report's frames keep function, file and line) compiles about
# a third faster than -O2 -g with objects a third the size, which keeps a build from an
# empty compiler cache within CI's 90 minutes.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${OPTS[@]}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="$FLAGS" > /dev/null
cmake --build "$BUILD" -j "${SHARDLAB_JOBS:-2}" "${TARGETS[@]}"
cd "$BUILD"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j "${SHARDLAB_JOBS:-2}" "${TESTS[@]}"
