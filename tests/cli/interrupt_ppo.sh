#!/usr/bin/env bash
# Signals during ppo. A Ctrl-C while the RL plugin (LibTorch) still loads gets the same clean
# report as a later one: complete JSON, "interrupted": true, exit 130. Two signals 30 ms
# apart give either that, or an immediate stop with exit 131 and a line on stderr; stdout is
# then empty or one complete JSON document, never a truncated one.
#   interrupt_ppo.sh CLI OUT_DIR [TRIALS]
set -u
CLI=$1 OUT=$2 TRIALS=${3:-4}
mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }
complete_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null; }

# Waits until the process has installed its SIGINT handler (SigCgt bit 1 in /proc).
wait_for_handler() {
  for _ in $(seq 1 400); do
    mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    [ -n "$mask" ] && [ $(( 0x$mask & 2 )) -ne 0 ] && return 0
    sleep 0.005
  done
  return 1
}

for t in $(seq 1 "$TRIALS"); do
  out="$OUT/early$t.json" err="$OUT/early$t.err"
  "$CLI" search --scenario llama3-70b-8gpu --algo ppo --budget 1000000 --json > "$out" 2> "$err" &
  pid=$!
  wait_for_handler "$pid" || fail "no SIGINT handler installed"
  kill -INT "$pid"
  wait "$pid"; rc=$?
  [ "$rc" -eq 130 ] || fail "early Ctrl-C: exit $rc, expected 130 ($(cat "$err"))"
  complete_json "$out" || fail "early Ctrl-C: stdout is not one complete JSON document"
  grep -q '"interrupted": true' "$out" || fail "early Ctrl-C: no \"interrupted\": true"
done
echo "early Ctrl-C: $TRIALS of $TRIALS clean reports (exit 130)"

cut=0 clean=0
for t in $(seq 1 "$TRIALS"); do
  out="$OUT/twice$t.json" err="$OUT/twice$t.err"
  "$CLI" search --scenario llama3-70b-8gpu --algo ppo --budget 1000000 --json > "$out" 2> "$err" &
  pid=$!
  wait_for_handler "$pid" || fail "no SIGINT handler installed"
  sleep 0.$((t % 10))
  kill -INT "$pid"; sleep 0.03; kill -INT "$pid" 2>/dev/null
  wait "$pid"; rc=$?
  if [ "$rc" -eq 130 ]; then
    complete_json "$out" || fail "two signals, exit 130: stdout is not one complete JSON document"
    clean=$((clean + 1))
  elif [ "$rc" -eq 131 ]; then
    grep -q "interrupted again" "$err" || fail "two signals, exit 131: no line on stderr"
    [ ! -s "$out" ] || complete_json "$out" || fail "two signals, exit 131: stdout holds a truncated document"
    cut=$((cut + 1))
  else
    fail "two signals: exit $rc ($(cat "$err"))"
  fi
done
echo "two signals 30 ms apart: $clean complete reports (exit 130), $cut cut off (exit 131), 0 truncated"
