#!/usr/bin/env bash
# Sets up (scripts/setup.sh) and runs the main job: the explorer with a shipped model and an
# example input loaded. Without a display (SSH, CI) it prints the terminal walk-through of the
# same model instead. Extra arguments go to stepformer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BIN=build/app/stepformer
MODEL=assets/models/reverse-preln.safetensors
SRC="3 1 4 1 5 9 2 6"
# The explorer opens with a shipped model and an example input already loaded.
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && "$BIN" help | grep -q "open the explorer"; then
  exec "$BIN" "$@"
fi
echo "(no display: printing the terminal walk-through; run 'build/app/stepformer' on a desktop for the explorer)"
exec "$BIN" walk --model "$MODEL" --src "$SRC" "$@"
