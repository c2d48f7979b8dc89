#!/usr/bin/env bash
# Builds the libFuzzer targets with clang + ASan + UBSan and runs each one.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 600)] [TARGET...]
# Targets: scenario, plan, hf_config, search (builds the search space and runs every
# non-RL algorithm for a few hundred calls per input). Corpora grow in
# build-fuzz/corpus/<target>; crashing inputs land in build-fuzz/crashes/ (copy each into
# tests/fuzz/regressions/<target>/ so ctest's fuzz.replay.* tests keep it fixed).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(scenario plan hf_config search)
scripts/install-deps.sh clang libclang-rt-14-dev
BUILD=build-fuzz
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSHARDLAB_BUILD_GUI=OFF -DSHARDLAB_BUILD_RL=OFF -DSHARDLAB_BUILD_QT_TESTS=OFF -DSHARDLAB_BUILD_FUZZERS=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link -fno-omit-frame-pointer"
fi
cmake --build "$BUILD" -j "${SHARDLAB_JOBS:-2}" --target $(printf 'fuzz_%s ' "${TARGETS[@]}")
mkdir -p "$BUILD/crashes"
status=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD/corpus/$t"
  mkdir -p "$corpus"
  case $t in
    scenario) seeds=(resources/scenarios resources/models resources/clusters tests/data/bad) ;;
    plan) seeds=(tests/data/plans tests/data/bad) ;;
    hf_config) seeds=(tests/data/hf tests/data/bad) ;;
    search) seeds=(resources/scenarios tests/fuzz/seeds/search) ;; # raw seeds are *.bin
  esac
  for d in "${seeds[@]}" "tests/fuzz/regressions/$t"; do
    find "$d" -type f \( -name '*.json' -o -name '*.bin' \) -exec cp -n {} "$corpus/" \; 2>/dev/null || true
  done
  echo "== fuzz_$t: ${SECONDS_PER_TARGET}s, seed corpus $(ls "$corpus" | wc -l) files"
  if ! ASAN_OPTIONS=detect_leaks=1 "$BUILD/tests/fuzz/fuzz_$t" "$corpus" -max_total_time="$SECONDS_PER_TARGET" \
      -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix="$BUILD/crashes/$t-" 2>&1 | tee "$BUILD/fuzz_$t.log" | grep -E "^(#[0-9]+ +DONE|stat::|==[0-9]+==ERROR|SUMMARY|Done )"; then
    :
  fi
  if grep -qE "ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error|fuzz invariant broken" "$BUILD/fuzz_$t.log"; then
    echo "== fuzz_$t: FINDING (see $BUILD/fuzz_$t.log and $BUILD/crashes/)"
    status=1
  else
    echo "== fuzz_$t: no crash, hang or leak; corpus now $(ls "$corpus" | wc -l) files"
  fi
done
exit $status
