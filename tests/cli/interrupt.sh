#!/usr/bin/env bash
# Ctrl-C during a long search: the CLI stops through the stop token, prints the best plan
# found so far marked as interrupted, writes it with --out, and exits 130.
#   interrupt.sh CLI OUT_DIR
set -u
CLI=$1
OUT=$2
mkdir -p "$OUT"
json="$OUT/interrupted.json"
plan="$OUT/interrupted_plan.json"
rm -f "$json" "$plan"
# The budget would take minutes: only the signal ends this run in time.
"$CLI" search --scenario llama3-70b-8gpu --algo random --budget 100000000 --json --out "$plan" > "$json" &
pid=$!
# The signal must not arrive before the handler is installed (the default action would
# kill the CLI): wait until /proc shows SIGINT caught (SigCgt bit 1).
for _ in $(seq 1 1200); do
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [ -n "$mask" ] && [ $(( 0x$mask & 2 )) -ne 0 ] && break
  sleep 0.05
done
sleep 0.5 # long enough for random search to find a valid plan of this small space
kill -INT "$pid"
wait "$pid"
rc=$?
fail() { echo "FAIL: $*"; cat "$json"; exit 1; }
[ "$rc" -eq 130 ] || fail "exit code $rc, expected 130"
grep -q '"interrupted": true' "$json" || fail "no \"interrupted\": true"
grep -q '"stopped": true' "$json" || fail "no \"stopped\": true"
grep -q '"found": true' "$json" || fail "no best plan"
# A stopped search ends where it was stopped: no batch refinement ran after the signal.
grep -q '"refinement"' "$json" && fail "a batch refinement is reported after the stop"
[ -s "$plan" ] || fail "--out file not written"
"$CLI" evaluate --scenario llama3-70b-8gpu --plan "$plan" > /dev/null || fail "the saved plan does not evaluate"
echo "interrupted search: exit 130, best plan printed and saved"
