#!/usr/bin/env bash
# Formats every C++ source of the project in place with clang-format-14 and .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/format-files.sh | xargs clang-format-14 -i
