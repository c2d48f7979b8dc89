#!/usr/bin/env bash
# One command: install what is missing, build, start the ShardLab window.
# With no display, says so and shows the headless CLI instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec build/app/shardlab "$@"
fi
echo "run: no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the window cannot open."
echo "run: try 'xvfb-run -a build/app/shardlab', or use the headless CLI:"
echo
build/app/shardlab-cli --help
echo
build/app/shardlab-cli presets
