#!/usr/bin/env bash
# Formats C++ sources in place with clang-format-14 and .clang-format: the files named, or, with no
# argument, every source of the project (scripts/format-files.sh).
set -euo pipefail
if (($#)); then
  clang-format-14 -i "$@"
  exit 0
fi
cd "$(dirname "$0")/.."
bash scripts/format-files.sh | xargs clang-format-14 -i
