#!/usr/bin/env bash
# Ctrl-C during a command that writes files and has no clean stop (gen-scenarios): it ends
# at once with exit 130 and a line on stderr, leaving no temporary file behind; every
# scenario file already written is whole.
#   interrupt_writes.sh CLI OUT_DIR
set -u
CLI=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"
"$CLI" gen-scenarios --seed 8 --count 3000 --feasible-only --out "$OUT/g" > "$OUT/listed" 2> "$OUT/err" &
pid=$!
# Interrupt once some files are written.
for _ in $(seq 1 600); do
  [ -n "$(find "$OUT/g" -name 'gen-*.json' 2> /dev/null | head -1)" ] && break
  sleep 0.05
done
kill -INT "$pid"
wait "$pid"
rc=$?
fail() { echo "FAIL: $*"; cat "$OUT/err"; exit 1; }
[ "$rc" -eq 130 ] || fail "exit code $rc, expected 130"
grep -q "interrupted: stopped at once" "$OUT/err" || fail "no line on stderr"
left=$(find "$OUT/g" -name '*.tmp-*' | wc -l)
[ "$left" -eq 0 ] || fail "$left temporary files left"
for f in "$OUT"/g/*.json; do
  "$CLI" validate "$f" > /dev/null || fail "$f is not a whole scenario"
done
echo "interrupted gen-scenarios: exit 130, no temporary file, every file whole"
