#!/usr/bin/env bash
# Installs the Debian 12 packages ShardLab needs, only those that are missing.
# Runs as root, or uses sudo for apt-get.
set -euo pipefail

# Extra packages may be named on the command line (scripts/fuzz.sh adds clang).
PACKAGES=(
  "$@"
  build-essential cmake ninja-build ccache pkg-config
  qt6-base-dev libqcustomplot-dev
  libtorch-dev libopenblas0-pthread
  nlohmann-json3-dev
  xvfb xauth fonts-dejavu-core
  shellcheck dash poppler-utils python3 python3-yaml
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2; exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
