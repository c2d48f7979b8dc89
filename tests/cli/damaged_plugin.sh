#!/usr/bin/env bash
# A damaged RL plugin (an interrupted copy, a FIFO in its place) is refused with a message
# and exit code 1, never SIGBUS or a hang:  damaged_plugin.sh CLI PLUGIN
set -u
cli=$1 plugin=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
size=$(stat -c %s "$plugin")
head -c $((size / 2)) "$plugin" > "$dir/half.so"
head -c 100 "$plugin" > "$dir/short.so"
mkfifo "$dir/fifo.so"
fail=0
for case in half:truncated short:truncated fifo:"named pipe (FIFO)"; do
  name=${case%%:*} want=${case#*:}
  err=$(SHARDLAB_RL_PLUGIN="$dir/$name.so" timeout 20 "$cli" search --scenario llama3-70b-8gpu --algo ppo --budget 100 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != 1 ] || [[ "$err" != *"the installation is damaged: the plugin "*"$want"* ]]; then
    echo "FAIL $name.so: exit $rc, stderr: $err" >&2
    fail=1
  else
    echo "ok $name.so: $err"
  fi
done
exit $fail
