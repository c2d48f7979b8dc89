#!/usr/bin/env bash
# The real window, killed with SIGKILL during a search after an edit-free start: its
# session files are already on disk (a run cut off, kept as interrupted with its curve so
# far; the scenario's file), and a second start restores them and says so.
#   killed_window.sh GUI REPO OUT_DIR
set -u
gui=$1 repo=$2 out=$3
rm -rf "$out" && mkdir -p "$out/data" "$out/config"
export XDG_DATA_HOME="$out/data" XDG_CONFIG_HOME="$out/config" QT_QPA_PLATFORM=offscreen
fail() { echo "FAIL: $*"; exit 1; }
runs="$out/data/ShardLab/ShardLab/runs.json"
"$gui" --scenario "$repo/resources/scenarios/llama3-70b-8gpu.json" --algo random --budget 1000000 \
    --autostart >"$out/first.log" 2>&1 &
pid=$!
# The run's curve reaches the file within a second or two of the search starting.
for _ in $(seq 1 100); do
    if [ -s "$runs" ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"]; sys.exit(0 if r and r[-1]["curve"] else 1)' "$runs" 2>/dev/null; then
        break
    fi
    sleep 0.2
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -s "$runs" ] || fail "no runs file after 20 s: $(cat "$out/first.log")"
python3 - "$runs" "$out/data/ShardLab/ShardLab/draft.json" <<'PY' || exit 1
import json, sys
runs = json.load(open(sys.argv[1]))
assert runs["format"] == "shardlab-runs" and runs["version"] == 1, runs.keys()
run = runs["runs"][-1]
assert run["status"] == "interrupted", run["status"]
assert run["curve"] and not run["found"], run
draft = json.load(open(sys.argv[2]))
assert draft["format"] == "shardlab-draft" and draft["path"].endswith("llama3-70b-8gpu.json"), draft
print("after SIGKILL: 1 interrupted run with %d curve points, the scenario's file" % len(run["curve"]))
PY
# The second start restores them (its message line is in the screenshot's status; the
# window prints nothing), and then quits.
timeout 60 "$gui" --quit-when-done --screenshot "$out/second.png" >"$out/second.log" 2>&1 || fail "second start: $(cat "$out/second.log")"
python3 - "$runs" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][-1]
assert run["status"] == "interrupted", run["status"]
print("restored and saved again: the interrupted run survives a second start")
PY
